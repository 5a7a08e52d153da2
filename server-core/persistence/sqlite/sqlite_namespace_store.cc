// The SQLite NamespaceStore (a valid-time table, one row per version) and the
// ClusterMetadataStore (a key/value table). Every method runs under the database mutex;
// every write is one IMMEDIATE transaction, so a failed call leaves nothing behind.
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/common/status.h"
#include "lib/common/time_format.h"
#include "server-core/persistence/replication_store.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"

namespace tock::persistence {
namespace {

constexpr char kColumns[] =
    "version, valid_from_ms, valid_to_ms, operation, record FROM namespace_versions";

// Binds `var` to a prepared (cached) statement or returns the preparation error.
#define ASSIGN_OR_RETURN_STMT(var, expr) \
  auto var##_or = (expr);                \
  if (!var##_or.ok()) return var##_or.status(); \
  Statement& var = **var##_or

absl::StatusOr<NamespaceVersion> ReadRow(const Statement& s) {
  NamespaceVersion v;
  v.version = s.Int(0);
  v.valid_from = absl::FromUnixMillis(s.Int(1));
  if (!s.IsNull(2)) v.valid_to = absl::FromUnixMillis(s.Int(2));
  v.operation = s.Text(3);
  if (!v.record.ParseFromString(s.Blob(4))) {
    return absl::DataLossError("a stored namespace record cannot be parsed");
  }
  return v;
}

class SqliteNamespaceStore : public NamespaceStore {
 public:
  explicit SqliteNamespaceStore(SqliteDb& db) : db_(db) {}

  absl::StatusOr<NamespaceVersion> CreateNamespace(const NamespaceRecord& record, absl::Time now,
                                                   const std::string& operation) override {
    absl::StatusOr<NamespaceVersion> v = FirstNamespaceVersion(record, now, operation);
    if (!v.ok()) return v.status();
    std::lock_guard lock(db_.mutex());
    Transaction tx(db_);
    if (absl::Status s = tx.Begin(); !s.ok()) return s;
    // The name among current rows (a name never changes, so this covers deleted ones too);
    // the id among all rows.
    ASSIGN_OR_RETURN_STMT(exists, db_.Prepare(
        "SELECT 1 FROM namespace_versions WHERE (name = ? AND valid_to_ms IS NULL) OR "
        "namespace_id = ? LIMIT 1"));
    auto found = exists.Bind(1, record.info().name()).Bind(2, record.info().id()).Step();
    if (!found.ok()) return found.status();
    exists.Reset();
    if (*found) return NamespaceAlreadyExistsError();
    if (absl::Status s = Insert(*v); !s.ok()) return s;
    if (absl::Status s = tx.Commit(); !s.ok()) return s;
    return v;
  }

  absl::StatusOr<NamespaceVersion> GetNamespaceByName(const std::string& name) override {
    std::lock_guard lock(db_.mutex());
    return GetCurrent("name", name);
  }

  absl::StatusOr<NamespaceVersion> GetNamespaceById(const std::string& id) override {
    std::lock_guard lock(db_.mutex());
    return GetCurrent("namespace_id", id);
  }

  absl::StatusOr<NamespaceVersion> GetNamespaceAsOf(const std::string& name,
                                                    absl::Time as_of) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_OR_RETURN_STMT(q, db_.Prepare(absl::StrCat(
        "SELECT ", kColumns,
        " WHERE name = ? AND valid_from_ms <= ? AND (valid_to_ms IS NULL OR valid_to_ms > ?) "
        "ORDER BY valid_from_ms DESC LIMIT 1")));
    const int64_t t = absl::ToUnixMillis(as_of);
    auto row = q.Bind(1, name).Bind(2, t).Bind(3, t).Step();
    if (!row.ok()) return row.status();
    if (!*row) {
      q.Reset();
      // A name that never existed gets SPEC §1.2's usual NOT_FOUND; one that exists (or
      // existed) only later says when it was asked about.
      ASSIGN_OR_RETURN_STMT(
          any, db_.Prepare("SELECT 1 FROM namespace_versions WHERE name = ? LIMIT 1"));
      absl::StatusOr<bool> exists = any.Bind(1, name).Step();
      any.Reset();
      if (!exists.ok()) return exists.status();
      if (!*exists) return NamespaceNotFoundError(name);
      return absl::NotFoundError(
          absl::StrCat("Namespace ", name, " did not exist at ", FormatTimestamp(as_of), "."));
    }
    auto v = ReadRow(q);
    q.Reset();
    return v;
  }

  absl::StatusOr<NamespaceVersion> AppendNamespaceVersion(const NamespaceRecord& record,
                                                          int64_t expected_version,
                                                          const std::string& operation,
                                                          absl::Time now) override {
    std::lock_guard lock(db_.mutex());
    Transaction tx(db_);
    if (absl::Status s = tx.Begin(); !s.ok()) return s;
    absl::StatusOr<NamespaceVersion> current = GetCurrent("namespace_id", record.info().id());
    if (!current.ok()) return current.status();
    absl::StatusOr<NamespaceVersion> next =
        NextNamespaceVersion(*current, record, expected_version, operation, now);
    if (!next.ok()) return next.status();
    ASSIGN_OR_RETURN_STMT(close, db_.Prepare(
        "UPDATE namespace_versions SET valid_to_ms = ? WHERE namespace_id = ? AND version = ?"));
    if (absl::Status s = close.Bind(1, absl::ToUnixMillis(next->valid_from))
                             .Bind(2, record.info().id())
                             .Bind(3, current->version)
                             .Run();
        !s.ok()) {
      return s;
    }
    if (absl::Status s = Insert(*next); !s.ok()) return s;
    if (absl::Status s = tx.Commit(); !s.ok()) return s;
    return next;
  }

  absl::StatusOr<NamespacePage> ListNamespaces(int32_t page_size, const std::string& page_token,
                                               bool include_deleted) override {
    page_size = NamespacePageSize(page_size);
    absl::StatusOr<std::string> after = NamespacePageStart(page_token);
    if (!after.ok()) return after.status();
    std::lock_guard lock(db_.mutex());
    ASSIGN_OR_RETURN_STMT(q, db_.Prepare(absl::StrCat(
        "SELECT ", kColumns,
        " WHERE valid_to_ms IS NULL AND name > ? AND (? OR deleted = 0) ORDER BY name LIMIT ?")));
    q.Bind(1, *after).Bind(2, int64_t{include_deleted}).Bind(3, int64_t{page_size} + 1);
    NamespacePage page;
    absl::Status read = q.ForEachRow([&]() -> absl::Status {
      auto v = ReadRow(q);
      if (!v.ok()) return v.status();
      page.namespaces.push_back(std::move(*v));
      return absl::OkStatus();
    });
    if (!read.ok()) return read;
    if (page.namespaces.size() > static_cast<size_t>(page_size)) {
      page.namespaces.pop_back();
      page.next_page_token = NamespacePageToken(page.namespaces.back().record.info().name());
    }
    return page;
  }

  absl::StatusOr<std::vector<NamespaceVersion>> GetNamespaceHistory(
      const std::string& name) override {
    std::lock_guard lock(db_.mutex());
    absl::StatusOr<NamespaceVersion> current = GetCurrent("name", name);
    if (!current.ok()) return current.status();
    ASSIGN_OR_RETURN_STMT(q, db_.Prepare(absl::StrCat(
        "SELECT ", kColumns, " WHERE namespace_id = ? ORDER BY version")));
    q.Bind(1, current->record.info().id());
    std::vector<NamespaceVersion> out;
    absl::Status read = q.ForEachRow([&]() -> absl::Status {
      auto v = ReadRow(q);
      if (!v.ok()) return v.status();
      out.push_back(std::move(*v));
      return absl::OkStatus();
    });
    if (!read.ok()) return read;
    return out;
  }

 private:
  // Requires the lock. `column` is a fixed column name, never user input.
  absl::StatusOr<NamespaceVersion> GetCurrent(const char* column, const std::string& value) {
    ASSIGN_OR_RETURN_STMT(q, db_.Prepare(absl::StrCat(
        "SELECT ", kColumns, " WHERE ", column, " = ? AND valid_to_ms IS NULL")));
    auto row = q.Bind(1, value).Step();
    if (!row.ok()) return row.status();
    if (!*row) {
      q.Reset();
      return NamespaceNotFoundError(value);
    }
    auto v = ReadRow(q);
    q.Reset();
    return v;
  }

  // Requires the lock and an open transaction. Queues the version for the other clusters
  // when EnqueuesNamespaceReplication says so (replication_store.h).
  absl::Status Insert(const NamespaceVersion& v) {
    ASSIGN_OR_RETURN_STMT(ins, db_.Prepare(
        "INSERT INTO namespace_versions(namespace_id, name, version, valid_from_ms, "
        "valid_to_ms, operation, record, deleted) VALUES (?, ?, ?, ?, NULL, ?, ?, ?)"));
    if (absl::Status s = ins.Bind(1, v.record.info().id())
                             .Bind(2, v.record.info().name())
                             .Bind(3, v.version)
                             .Bind(4, absl::ToUnixMillis(v.valid_from))
                             .Bind(5, v.operation)
                             .BindBlob(6, v.record.SerializeAsString())
                             .Bind(7, int64_t{IsDeletedNamespace(v.record)})
                             .Run();
        !s.ok()) {
      return s;
    }
    if (!EnqueuesNamespaceReplication(v.record, v.operation)) return absl::OkStatus();
    ASSIGN_OR_RETURN_STMT(queue, db_.Prepare(
        "INSERT INTO namespace_replication_tasks(namespace_id, version) VALUES (?, ?)"));
    return queue.Bind(1, v.record.info().id()).Bind(2, v.version).Run();
  }

  SqliteDb& db_;
};

class SqliteClusterMetadataStore : public WriteOnceClusterMetadataStore {
 public:
  explicit SqliteClusterMetadataStore(SqliteDb& db) : db_(db) {}

 private:
  std::string Location() const override { return db_.location(); }
  // Stores `value` under `key` unless present; returns what is stored.
  absl::StatusOr<std::string> InitValue(const std::string& key,
                                        const std::string& value) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_OR_RETURN_STMT(ins, db_.Prepare(
        "INSERT INTO cluster_metadata(key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING"));
    if (absl::Status s = ins.Bind(1, key).Bind(2, value).Run(); !s.ok()) return s;
    ASSIGN_OR_RETURN_STMT(q, db_.Prepare("SELECT value FROM cluster_metadata WHERE key = ?"));
    auto row = q.Bind(1, key).Step();
    if (!row.ok()) return row.status();
    std::string stored = *row ? q.Text(0) : value;
    q.Reset();
    return stored;
  }

  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<NamespaceStore> NewSqliteNamespaceStore(SqliteDb& db) {
  return std::make_unique<SqliteNamespaceStore>(db);
}

std::unique_ptr<ClusterMetadataStore> NewSqliteClusterMetadataStore(SqliteDb& db) {
  return std::make_unique<SqliteClusterMetadataStore>(db);
}

}  // namespace tock::persistence
