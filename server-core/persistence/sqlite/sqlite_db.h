// A small RAII layer over the SQLite C API: one connection, cached prepared statements
// (fixed ones for the connection's life, dynamic ones in a bounded LRU), IMMEDIATE
// transactions, and errors as absl::Status.
//
// Thread safety: a SqliteDb is used under its mutex (Lock()); statements and transactions
// must only be used while holding it.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/status/statusor.h"

namespace tock::persistence {

class Statement {
 public:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  // Resets and clears bindings so the statement can run again.
  Statement& Reset();
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, const std::string& text);
  Statement& BindBlob(int index, const std::string& bytes);
  // Without a copy: `bytes` must stay alive and unchanged until the statement is stepped
  // and reset (the next Prepare of it resets it).
  Statement& BindBlobView(int index, std::string_view bytes);
  Statement& BindNull(int index);
  // SQLITE_ROW -> true, SQLITE_DONE -> false, anything else -> error.
  absl::StatusOr<bool> Step();
  // Steps to completion, expecting no rows.
  absl::Status Run();
  // Steps through every row, calling `row` for each (stopping at its first error), then
  // resets the statement whatever happened.
  // Inline (a template, not std::function): history reads call it once per event.
  template <typename RowFn>
  absl::Status ForEachRow(RowFn&& row) {
    absl::Status result;
    while (true) {
      absl::StatusOr<bool> more = Step();
      if (!more.ok()) {
        result = more.status();
        break;
      }
      if (!*more) break;
      result = row();
      if (!result.ok()) break;
    }
    sqlite3_reset(stmt_);
    return result;
  }

  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  bool IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string Text(int column) const;
  std::string Blob(int column) const;
  // The blob in place: valid until the next step or reset of this statement.
  std::string_view BlobView(int column) const;

 private:
  sqlite3_stmt* stmt_;
};

class SqliteDb {
 public:
  // The in-memory database's most: memdb keeps it in one block, and SQLite refuses to
  // allocate 2 GiB or more at once. Beyond it writes fail with UNAVAILABLE saying so.
  static constexpr int64_t kInMemoryLimitBytes = 0x7fff0000;
  // How durable a commit to a database file is (`persistence.sqlite.synchronous`), both in
  // WAL mode. kFull: every COMMIT syncs the write-ahead log before it returns, so a change
  // answered survives power loss or an OS crash. kNormal: the log is synced only at
  // checkpoints, so a change answered survives a crash of the process (kill -9), but the
  // last ones may be lost with the machine; each commit costs no fsync. An in-memory
  // database keeps nothing past its process either way.
  enum class Synchronous { kFull, kNormal };
  // Opens `path` ("" or ":memory:" for an in-memory database): WAL with `synchronous` and a
  // 5 s busy timeout for files, foreign keys on. UNAVAILABLE naming the path when it cannot
  // be opened.
  static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(
      const std::string& path, int64_t in_memory_limit_bytes = kInMemoryLimitBytes,
      Synchronous synchronous = Synchronous::kFull);
  ~SqliteDb();

  // Whether this is the in-memory database (memdb), and SQLite's `PRAGMA synchronous` as in
  // force on the connection (0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA), read back rather than
  // remembered, so the banner states what SQLite does. Under mutex() once shared.
  bool in_memory() const;
  absl::StatusOr<int> SynchronousInForce();

  std::mutex& mutex() { return mu_; }
  const std::string& location() const { return location_; }

  // A cached prepared statement, reset and ready to bind. For the fixed statements of the
  // stores: each text is cached for the connection's life (a finite set, so no bound is
  // needed, and the lookup stays one map probe on the hot path). The error carries SQLite's
  // message, not the statement's text.
  absl::StatusOr<Statement*> Prepare(const std::string& sql);
  // The same for text built at run time (a visibility filter): cached in a least-recently-used
  // set of at most kDynamicStatements statements and kDynamicBytes of SQL text, so that
  // dynamic queries cannot grow the cache without bound. The statement is valid until the
  // next PrepareDynamic call. SQLite's message may quote part of `sql`: callers must not
  // pass it on to clients.
  absl::StatusOr<Statement*> PrepareDynamic(const std::string& sql);
  static constexpr size_t kDynamicStatements = 64;
  static constexpr size_t kDynamicBytes = 1 << 20;
  // How many dynamic statements are cached now (for tests).
  size_t dynamic_statements() const { return dynamic_.size(); }
  // Runs one or more statements without results.
  absl::Status Exec(const std::string& sql);
  // Rows changed by the last statement, and the rowid of the last insert.
  int64_t Changes() const { return sqlite3_changes64(db_); }
  int64_t LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }
  // The error of the last failed call on this connection, prefixed with `what`.
  absl::Status Error(const std::string& what) const;

  // Calls `appended` with the pages each commit appends to the write-ahead log (a database
  // file; an in-memory one has none). Under mutex(); null: none.
  void OnWalPagesAppended(std::function<void(int64_t)> appended) { wal_appended_ = std::move(appended); }
  // A checkpoint is run once the log holds this many pages (PRAGMA wal_autocheckpoint's
  // rule: the hook that counts pages replaces SQLite's own, which did it).
  static constexpr int kWalCheckpointPages = 10000;

 private:
  SqliteDb(sqlite3* db, std::string location) : db_(db), location_(std::move(location)) {}

  sqlite3* db_;
  std::string location_;
  std::mutex mu_;
  // The write-ahead log's pages after the last commit, to tell what each commit appended.
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int pages);
  int wal_pages_ = 0;
  std::function<void(int64_t)> wal_appended_;
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    std::unique_ptr<Statement> statement;
  };
  // The statement of `sql`, or an error without the text.
  absl::StatusOr<Cached> PrepareUncached(const std::string& sql);

  std::map<std::string, Cached> statements_;
  // Dynamic statements, most recently used first; the index's keys view the list's texts.
  std::list<std::pair<std::string, Cached>> dynamic_;
  std::unordered_map<std::string_view, std::list<std::pair<std::string, Cached>>::iterator>
      dynamic_index_;
  size_t dynamic_bytes_ = 0;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back in the destructor unless committed.
class Transaction {
 public:
  explicit Transaction(SqliteDb& db) : db_(db) {}
  absl::Status Begin() { return db_.Exec("BEGIN IMMEDIATE"); }
  absl::Status Commit() {
    absl::Status s = db_.Exec("COMMIT");
    committed_ = s.ok();
    return s;
  }
  ~Transaction() {
    if (!committed_) db_.Exec("ROLLBACK").IgnoreError();
  }

 private:
  SqliteDb& db_;
  bool committed_ = false;
};

}  // namespace tock::persistence

// For store implementations: return a failed status; prepare a cached statement or return.
#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    if (absl::Status _s = (expr); !_s.ok()) return _s; \
  } while (0)

#define ASSIGN_STMT(var, expr)                  \
  auto var##_or = (expr);                       \
  if (!var##_or.ok()) return var##_or.status(); \
  Statement& var = **var##_or
