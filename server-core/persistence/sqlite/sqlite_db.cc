#include "server-core/persistence/sqlite/sqlite_db.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/sqlite/sqlite_allocator.h"

namespace tock::persistence {
namespace {

// A private memdb database: a name without a leading '/' is never shared between connections.
constexpr const char* kMemdbUri = "file:tock-memory?vfs=memdb";

bool InMemory(sqlite3* db) {
  sqlite3_vfs* vfs = nullptr;
  return sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) == SQLITE_OK &&
         vfs != nullptr && std::strcmp(vfs->zName, "memdb") == 0;
}

// SQLite's message; for a full in-memory database, what the limit is and what to do.
std::string Message(sqlite3* db, int rc) {
  if ((rc & 0xff) == SQLITE_FULL && InMemory(db)) {
    sqlite3_int64 limit = -1;  // a negative limit reads the current one
    sqlite3_file_control(db, "main", SQLITE_FCNTL_SIZE_LIMIT, &limit);
    return absl::StrCat("the in-memory database is full (it holds at most ",
                        (limit + (1 << 19)) >> 20,
                        " MiB); give tock-server a database file (--db-file) to keep more");
  }
  return sqlite3_errmsg(db);
}

}  // namespace

Statement& Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  return *this;
}

Statement& Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, const std::string& text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindBlob(int index, const std::string& bytes) {
  sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindBlobView(int index, std::string_view bytes) {
  sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_STATIC);
  return *this;
}

Statement& Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_);
  // A constraint's message names the table and columns ("UNIQUE constraint failed:
  // executions.namespace_id, ..."); it can travel up to a client, so only the fixed text of
  // the code is kept ("constraint failed").
  if ((rc & 0xff) == SQLITE_CONSTRAINT) {
    return absl::InternalError(absl::StrCat("sqlite: ", sqlite3_errstr(rc)));
  }
  absl::StatusCode code =
      (rc == SQLITE_BUSY || rc == SQLITE_LOCKED || rc == SQLITE_IOERR || rc == SQLITE_FULL)
          ? absl::StatusCode::kUnavailable
          : absl::StatusCode::kInternal;
  return absl::Status(code, absl::StrCat("sqlite: ", Message(db, rc)));
}

absl::Status Statement::Run() {
  absl::StatusOr<bool> row = Step();
  if (!row.ok()) return row.status();
  return absl::OkStatus();
}

std::string Statement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  return text == nullptr ? std::string()
                         : std::string(reinterpret_cast<const char*>(text),
                                       sqlite3_column_bytes(stmt_, column));
}

std::string Statement::Blob(int column) const { return std::string(BlobView(column)); }

std::string_view Statement::BlobView(int column) const {
  const void* blob = sqlite3_column_blob(stmt_, column);
  return blob == nullptr ? std::string_view()
                         : std::string_view(static_cast<const char*>(blob),
                                            sqlite3_column_bytes(stmt_, column));
}

namespace {

// The database holds payloads: a new file is created readable by its owner only (SQLite
// gives its -wal and -shm files the database's mode). A file or directory tock-server cannot
// write is named as such (SQLite would only say "disk I/O error" at the first write).
absl::Status PrepareDatabaseFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    ::close(fd);
    return absl::OkStatus();
  }
  if (errno != EEXIST) {
    return absl::UnavailableError(
        absl::StrCat("cannot create the SQLite database ", path, ": ", strerror(errno)));
  }
  if (::access(path.c_str(), R_OK | W_OK) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot use the SQLite database ", path, ": the file is read-only for this user (",
        strerror(errno), "); tock-server writes to its database"));
  }
  std::string dir = path.substr(0, path.find_last_of('/') + 1);
  if (dir.empty()) dir = ".";
  if (::access(dir.c_str(), W_OK) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot use the SQLite database ", path, ": its directory is read-only for this user (",
        strerror(errno), "); SQLite keeps its write-ahead log beside the database"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path,
                                                       int64_t in_memory_limit_bytes,
                                                       Synchronous synchronous) {
  const bool in_memory = path.empty() || path == ":memory:";
  sqlite3* raw = nullptr;
  // NOMUTEX: every use of the connection already holds SqliteDb::mutex() (the statement
  // cache needs it too), so SQLite's own per-call mutex would only be locked a second time
  // on each step and column read.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (!in_memory) {
    if (absl::Status s = PrepareDatabaseFile(path); !s.ok()) return s;
  }
  // In memory, the database is one buffer in SQLite's memdb VFS (a private one per
  // connection), read through a bounded page cache, rather than `:memory:`, whose pages all
  // live in the page cache: every commit truncates that cache, and after a B-tree rebalance
  // the truncation scans the whole cache's hash table, so a commit's cost grew with the
  // database (docs/architecture.md, *Memory grows with what is in use*). The buffer grows on
  // mappings of its own (sqlite_allocator.h), so its doublings copy nothing and keep nothing.
  InstallSqliteAllocator();
  if (in_memory) flags |= SQLITE_OPEN_URI;
  int rc = sqlite3_open_v2(in_memory ? kMemdbUri : path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    return absl::UnavailableError(
        absl::StrCat("cannot open the SQLite database ", path, ": ", message));
  }
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, in_memory ? ":memory:" : path));
  sqlite3_busy_timeout(raw, 5000);
  std::string pragmas = "PRAGMA foreign_keys=ON;";
  if (in_memory) {
    sqlite3_int64 limit = in_memory_limit_bytes;
    sqlite3_file_control(raw, "main", SQLITE_FCNTL_SIZE_LIMIT, &limit);
    // The memdb buffer is the database; the cache holds copies of the pages in use.
    pragmas += "PRAGMA cache_size=-2048;";
  }
  // One writer: this server. EXCLUSIVE locking keeps the file lock for the connection's life,
  // which saves two fcntl calls per transaction and refuses a second server on the same file.
  if (!in_memory) {
    // WAL: FULL syncs the log at every COMMIT (a group commit's callers are answered after
    // COMMIT returns, so nothing answered is lost with power); NORMAL survives a process
    // crash (kill -9) at any point and syncs only at checkpoints (see Synchronous). The
    // larger checkpoint interval means fewer fsyncs (the WAL is bounded to about 40 MB;
    // OnWalCommit checkpoints).
    // The page cache is bounded at 8 MiB (the server's one connection): it fills up to the
    // size of the database, which grows with the runs kept, while the pages in use are few
    // (a run's rows, the index paths to them); a page missed is read from the OS's cache.
    pragmas += absl::StrCat(
        "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=",
        synchronous == Synchronous::kFull ? "FULL" : "NORMAL",
        "; PRAGMA cache_size=-8192;");
    sqlite3_wal_hook(raw, &SqliteDb::OnWalCommit, db.get());
  }
  if (absl::Status s = db->Exec(pragmas); !s.ok()) {
    // With EXCLUSIVE locking, BUSY after the timeout means another process holds the file.
    if (sqlite3_errcode(raw) == SQLITE_BUSY) {
      return absl::UnavailableError(absl::StrCat(
          "cannot use the SQLite database ", path,
          ": another process (another tock-server?) has it open; a database is used by one "
          "server at a time"));
    }
    return absl::UnavailableError(
        absl::StrCat("cannot use the SQLite database ", path, ": ", s.message()));
  }
  return db;
}

int SqliteDb::OnWalCommit(void* self, sqlite3* db, const char* name, int pages) {
  auto* d = static_cast<SqliteDb*>(self);
  // Fewer pages than after the last commit: the log was restarted after a checkpoint.
  const int appended = pages >= d->wal_pages_ ? pages - d->wal_pages_ : pages;
  d->wal_pages_ = pages;
  if (d->wal_appended_) d->wal_appended_(appended);
  if (pages >= kWalCheckpointPages) {
    sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  }
  return SQLITE_OK;
}

bool SqliteDb::in_memory() const { return InMemory(db_); }

absl::StatusOr<int> SqliteDb::SynchronousInForce() {
  ASSIGN_STMT(pragma, Prepare("PRAGMA synchronous"));
  int value = -1;
  RETURN_IF_ERROR(pragma.ForEachRow([&] {
    value = static_cast<int>(pragma.Int(0));
    return absl::OkStatus();
  }));
  if (value < 0) return absl::InternalError("sqlite: PRAGMA synchronous returned no row");
  return value;
}

SqliteDb::~SqliteDb() {
  for (auto& [sql, entry] : statements_) sqlite3_finalize(entry.stmt);
  for (auto& [sql, entry] : dynamic_) sqlite3_finalize(entry.stmt);
  sqlite3_close(db_);
}

absl::StatusOr<SqliteDb::Cached> SqliteDb::PrepareUncached(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()) + 1, &stmt, nullptr) !=
      SQLITE_OK) {
    // SQLite's message may quote the text ("near ...": syntax error); callers that build SQL
    // from input map this to a message of their own.
    sqlite3_finalize(stmt);
    return Error("preparing a statement");
  }
  return Cached{stmt, std::make_unique<Statement>(stmt)};
}

absl::StatusOr<Statement*> SqliteDb::Prepare(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    absl::StatusOr<Cached> prepared = PrepareUncached(sql);
    if (!prepared.ok()) return prepared.status();
    it = statements_.emplace(sql, std::move(*prepared)).first;
  }
  return &it->second.statement->Reset();
}

absl::StatusOr<Statement*> SqliteDb::PrepareDynamic(const std::string& sql) {
  auto found = dynamic_index_.find(sql);
  if (found != dynamic_index_.end()) {
    dynamic_.splice(dynamic_.begin(), dynamic_, found->second);
    return &found->second->second.statement->Reset();
  }
  absl::StatusOr<Cached> prepared = PrepareUncached(sql);
  if (!prepared.ok()) return prepared.status();
  dynamic_.emplace_front(sql, std::move(*prepared));
  dynamic_index_.emplace(dynamic_.front().first, dynamic_.begin());
  dynamic_bytes_ += sql.size();
  // Evict the least recently used, never the one just prepared (even when it alone is
  // larger than the byte budget: it is dropped by the next call).
  while (dynamic_.size() > 1 &&
         (dynamic_.size() > kDynamicStatements || dynamic_bytes_ > kDynamicBytes)) {
    auto& [old_sql, old] = dynamic_.back();
    sqlite3_finalize(old.stmt);
    dynamic_bytes_ -= old_sql.size();
    dynamic_index_.erase(old_sql);
    dynamic_.pop_back();
  }
  return &dynamic_.front().second.statement->Reset();
}

absl::Status SqliteDb::Exec(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    int rc = sqlite3_errcode(db_);
    std::string message =
        (rc & 0xff) == SQLITE_FULL || error == nullptr ? Message(db_, rc) : std::string(error);
    sqlite3_free(error);
    absl::StatusCode code = (rc == SQLITE_BUSY || rc == SQLITE_LOCKED || rc == SQLITE_IOERR ||
                             rc == SQLITE_FULL || rc == SQLITE_CANTOPEN)
                                ? absl::StatusCode::kUnavailable
                                : absl::StatusCode::kInternal;
    return absl::Status(code, absl::StrCat("sqlite: ", message));
  }
  return absl::OkStatus();
}

absl::Status SqliteDb::Error(const std::string& what) const {
  return absl::InternalError(
      absl::StrCat("sqlite: ", what, ": ", Message(db_, sqlite3_errcode(db_))));
}

}  // namespace tock::persistence
