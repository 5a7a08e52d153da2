// The PostgreSQL NamespaceStore (a valid-time table, one row per version) and the
// ClusterMetadataStore (a key/value table): the behaviour of sqlite_namespace_store.cc, made
// safe for several hosts writing at once.
//
// Concurrency: SQLite serializes every writer on one file; here hosts race. Creation relies
// on the unique indexes (current name, (id, version)): the loser's INSERT fails with 23505
// and answers "Namespace already exists.". Appending locks the namespace's version-1 row
// FOR UPDATE first (it always exists and no append can skip it), so appenders of one
// namespace queue up and each then reads the current version committed by the one before
// it (READ COMMITTED: every statement sees the latest commits).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/common/status.h"
#include "lib/common/time_format.h"
#include "server-core/persistence/postgres/pg_stores.h"
#include "server-core/persistence/replication_store.h"

namespace tock::persistence {
namespace {

constexpr char kColumns[] =
    "version, valid_from_ms, valid_to_ms, operation, record FROM namespace_versions";

absl::StatusOr<NamespaceVersion> ReadRow(const PgResult& r, int row) {
  NamespaceVersion v;
  v.version = r.Int(row, 0);
  v.valid_from = absl::FromUnixMillis(r.Int(row, 1));
  if (!r.IsNull(row, 2)) v.valid_to = absl::FromUnixMillis(r.Int(row, 2));
  v.operation = r.Text(row, 3);
  const std::string_view bytes = r.View(row, 4);
  if (!v.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("a stored namespace record cannot be parsed");
  }
  return v;
}

absl::StatusOr<std::vector<NamespaceVersion>> ReadRows(const PgResult& r) {
  std::vector<NamespaceVersion> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    absl::StatusOr<NamespaceVersion> v = ReadRow(r, i);
    if (!v.ok()) return v.status();
    out.push_back(std::move(*v));
  }
  return out;
}

// The current version where `column` (a fixed column name, never input) equals `value`.
absl::StatusOr<NamespaceVersion> GetCurrent(PgConn& conn, const char* column,
                                            const std::string& value) {
  absl::StatusOr<PgResult> r = conn.Query(
      absl::StrCat("SELECT ", kColumns, " WHERE ", column, " = $1 AND valid_to_ms IS NULL"),
      {PgParam::Text(value)});
  if (!r.ok()) return r.status();
  if (r->rows() == 0) return NamespaceNotFoundError(value);
  return ReadRow(*r, 0);
}

// Inside the caller's transaction; queues the version for the other clusters when
// EnqueuesNamespaceReplication says so (replication_store.h).
absl::Status Insert(PgConn& conn, const NamespaceVersion& v) {
  const std::string record = v.record.SerializeAsString();
  absl::Status inserted =
      conn.Query(
              "INSERT INTO namespace_versions(namespace_id, name, version, valid_from_ms, "
              "valid_to_ms, operation, record, deleted) VALUES ($1, $2, $3, $4, NULL, $5, $6, $7)",
              {PgParam::Text(v.record.info().id()), PgParam::Text(v.record.info().name()),
               PgParam::Int(v.version), PgParam::Int(absl::ToUnixMillis(v.valid_from)),
               PgParam::Text(v.operation), PgParam::Bytes(record),
               PgParam::Int(IsDeletedNamespace(v.record) ? 1 : 0)})
          .status();
  if (!inserted.ok() || !EnqueuesNamespaceReplication(v.record, v.operation)) return inserted;
  // The lock (held to the commit, and taken by every enqueuer) makes task ids visible in
  // the order they were drawn: a reader continuing after the last id it saw misses none.
  // Namespace changes are rare, so serializing them costs nothing.
  if (absl::Status s = conn.Query("LOCK TABLE namespace_replication_tasks IN EXCLUSIVE MODE", {})
                           .status();
      !s.ok()) {
    return s;
  }
  return conn
      .Query("INSERT INTO namespace_replication_tasks(namespace_id, version) VALUES ($1, $2)",
             {PgParam::Text(v.record.info().id()), PgParam::Int(v.version)})
      .status();
}

class PgNamespaceStore : public NamespaceStore {
 public:
  explicit PgNamespaceStore(PgPool& pool) : pool_(pool) {}

  absl::StatusOr<NamespaceVersion> CreateNamespace(const NamespaceRecord& record, absl::Time now,
                                                   const std::string& operation) override {
    absl::StatusOr<NamespaceVersion> v = FirstNamespaceVersion(record, now, operation);
    if (!v.ok()) return v.status();
    absl::Status s = pool_.InTransaction([&](PgConn& conn) -> absl::Status {
      // The name among current rows (a name never changes, so this covers deleted ones
      // too); the id among all rows. A concurrent creator that passes this check too is
      // stopped by the unique indexes below.
      absl::StatusOr<PgResult> found = conn.Query(
          "SELECT 1 FROM namespace_versions WHERE (name = $1 AND valid_to_ms IS NULL) OR "
          "namespace_id = $2 LIMIT 1",
          {PgParam::Text(record.info().name()), PgParam::Text(record.info().id())});
      if (!found.ok()) return found.status();
      if (found->rows() > 0) return NamespaceAlreadyExistsError();
      return Insert(conn, *v);
    });
    if (absl::IsAlreadyExists(s)) return NamespaceAlreadyExistsError();
    if (!s.ok()) return s;
    return v;
  }

  absl::StatusOr<NamespaceVersion> GetNamespaceByName(const std::string& name) override {
    return Current("name", name);
  }

  absl::StatusOr<NamespaceVersion> GetNamespaceById(const std::string& id) override {
    return Current("namespace_id", id);
  }

  absl::StatusOr<NamespaceVersion> GetNamespaceAsOf(const std::string& name,
                                                    absl::Time as_of) override {
    const int64_t t = absl::ToUnixMillis(as_of);
    absl::StatusOr<PgResult> r = pool_.Query(
        absl::StrCat("SELECT ", kColumns,
                     " WHERE name = $1 AND valid_from_ms <= $2 AND (valid_to_ms IS NULL OR "
                     "valid_to_ms > $2) ORDER BY valid_from_ms DESC LIMIT 1"),
        {PgParam::Text(name), PgParam::Int(t)});
    if (!r.ok()) return r.status();
    if (r->rows() > 0) return ReadRow(*r, 0);
    // A name that never existed gets SPEC §1.2's usual NOT_FOUND; one that exists (or
    // existed) only later says when it was asked about.
    absl::StatusOr<PgResult> any = pool_.Query(
        "SELECT 1 FROM namespace_versions WHERE name = $1 LIMIT 1", {PgParam::Text(name)});
    if (!any.ok()) return any.status();
    if (any->rows() == 0) return NamespaceNotFoundError(name);
    return absl::NotFoundError(
        absl::StrCat("Namespace ", name, " did not exist at ", FormatTimestamp(as_of), "."));
  }

  absl::StatusOr<NamespaceVersion> AppendNamespaceVersion(const NamespaceRecord& record,
                                                          int64_t expected_version,
                                                          const std::string& operation,
                                                          absl::Time now) override {
    NamespaceVersion next;
    absl::Status s = pool_.InTransaction([&](PgConn& conn) -> absl::Status {
      // Queue behind any other appender of this namespace (see the top of the file).
      absl::StatusOr<PgResult> locked = conn.Query(
          "SELECT 1 FROM namespace_versions WHERE namespace_id = $1 AND version = 1 FOR UPDATE",
          {PgParam::Text(record.info().id())});
      if (!locked.ok()) return locked.status();
      absl::StatusOr<NamespaceVersion> current = GetCurrent(conn, "namespace_id", record.info().id());
      if (!current.ok()) return current.status();
      absl::StatusOr<NamespaceVersion> following =
          NextNamespaceVersion(*current, record, expected_version, operation, now);
      if (!following.ok()) return following.status();
      next = *std::move(following);
      absl::StatusOr<PgResult> closed = conn.Query(
          "UPDATE namespace_versions SET valid_to_ms = $1 WHERE namespace_id = $2 AND "
          "version = $3",
          {PgParam::Int(absl::ToUnixMillis(next.valid_from)), PgParam::Text(record.info().id()),
           PgParam::Int(current->version)});
      if (!closed.ok()) return closed.status();
      return Insert(conn, next);
    });
    if (!s.ok()) return s;
    return next;
  }

  absl::StatusOr<NamespacePage> ListNamespaces(int32_t page_size, const std::string& page_token,
                                               bool include_deleted) override {
    page_size = NamespacePageSize(page_size);
    absl::StatusOr<std::string> after = NamespacePageStart(page_token);
    if (!after.ok()) return after.status();
    absl::StatusOr<PgResult> r = pool_.Query(
        absl::StrCat("SELECT ", kColumns,
                     " WHERE valid_to_ms IS NULL AND name > $1 AND ($2 OR deleted = 0) "
                     "ORDER BY name LIMIT $3"),
        {PgParam::Text(*after), PgParam::Bool(include_deleted),
         PgParam::Int(int64_t{page_size} + 1)});
    if (!r.ok()) return r.status();
    absl::StatusOr<std::vector<NamespaceVersion>> rows = ReadRows(*r);
    if (!rows.ok()) return rows.status();
    NamespacePage page;
    page.namespaces = std::move(*rows);
    if (page.namespaces.size() > static_cast<size_t>(page_size)) {
      page.namespaces.pop_back();
      page.next_page_token = NamespacePageToken(page.namespaces.back().record.info().name());
    }
    return page;
  }

  absl::StatusOr<std::vector<NamespaceVersion>> GetNamespaceHistory(
      const std::string& name) override {
    // One statement: the versions of the namespace currently called `name`.
    absl::StatusOr<PgResult> r = pool_.Query(
        absl::StrCat("SELECT ", kColumns,
                     " WHERE namespace_id = (SELECT namespace_id FROM namespace_versions "
                     "WHERE name = $1 AND valid_to_ms IS NULL) ORDER BY version"),
        {PgParam::Text(name)});
    if (!r.ok()) return r.status();
    if (r->rows() == 0) return NamespaceNotFoundError(name);
    return ReadRows(*r);
  }

 private:
  absl::StatusOr<NamespaceVersion> Current(const char* column, const std::string& value) {
    absl::StatusOr<PgPool::Lease> lease = pool_.Acquire();
    if (!lease.ok()) return lease.status();
    return GetCurrent(**lease, column, value);
  }

  PgPool& pool_;
};

class PgClusterMetadataStore : public WriteOnceClusterMetadataStore {
 public:
  explicit PgClusterMetadataStore(PgPool& pool) : pool_(pool) {}

 private:
  std::string Location() const override { return pool_.location(); }
  // Stores `value` under `key` unless present; returns what is stored. Hosts starting at
  // once all try the INSERT; ON CONFLICT makes every one but the first a no-op, and all
  // then read the first one's value.
  absl::StatusOr<std::string> InitValue(const std::string& key,
                                        const std::string& value) override {
    absl::StatusOr<PgPool::Lease> lease = pool_.Acquire();
    if (!lease.ok()) return lease.status();
    absl::StatusOr<PgResult> ins = (*lease)->Query(
        "INSERT INTO cluster_metadata(key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
        {PgParam::Text(key), PgParam::Text(value)});
    if (!ins.ok()) return ins.status();
    absl::StatusOr<PgResult> r = (*lease)->Query(
        "SELECT value FROM cluster_metadata WHERE key = $1", {PgParam::Text(key)});
    if (!r.ok()) return r.status();
    return r->rows() > 0 ? r->Text(0, 0) : value;
  }

  PgPool& pool_;
};

}  // namespace

std::unique_ptr<NamespaceStore> NewPostgresNamespaceStore(PgPool& pool) {
  return std::make_unique<PgNamespaceStore>(pool);
}

std::unique_ptr<ClusterMetadataStore> NewPostgresClusterMetadataStore(PgPool& pool) {
  return std::make_unique<PgClusterMetadataStore>(pool);
}

}  // namespace tock::persistence
