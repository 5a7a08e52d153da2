// Nexus endpoints on SQLite: one row per endpoint, updated by compare-and-swap on its version.
#include "server-core/persistence/nexus_endpoint_store.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"

namespace tock::persistence {
namespace {

absl::StatusOr<std::vector<NexusEndpoint>> Rows(Statement& q) {
  std::vector<NexusEndpoint> out;
  absl::Status read = q.ForEachRow([&] {
    const std::string_view bytes = q.BlobView(0);
    return out.emplace_back().ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))
               ? absl::OkStatus()
               : absl::DataLossError("a stored Nexus endpoint cannot be parsed");
  });
  if (!read.ok()) return read;
  return out;
}

absl::StatusOr<NexusEndpoint> One(absl::StatusOr<std::vector<NexusEndpoint>> rows) {
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return absl::NotFoundError("no such Nexus endpoint");
  return std::move(rows->front());
}

class SqliteNexusEndpointStore : public NexusEndpointStore {
 public:
  explicit SqliteNexusEndpointStore(SqliteDb& db) : db_(db) {}

  absl::Status Create(const NexusEndpoint& e) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("INSERT INTO nexus_endpoints(id, name, version, record) "
                               "VALUES (?,?,?,?) ON CONFLICT DO NOTHING"));
    RETURN_IF_ERROR(q.Bind(1, e.id())
                        .Bind(2, e.spec().name())
                        .Bind(3, e.version())
                        .BindBlob(4, e.SerializeAsString())
                        .Run());
    if (db_.Changes() == 0) return absl::AlreadyExistsError("the Nexus endpoint exists");
    return absl::OkStatus();
  }

  absl::Status Update(const NexusEndpoint& e, int64_t version) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(taken, db_.Prepare("SELECT 1 FROM nexus_endpoints WHERE name = ? AND id <> ?"));
    taken.Bind(1, e.spec().name()).Bind(2, e.id());
    bool name_taken = false;
    RETURN_IF_ERROR(taken.ForEachRow([&] {
      name_taken = true;
      return absl::OkStatus();
    }));
    if (name_taken) return absl::AlreadyExistsError("another Nexus endpoint has this name");
    ASSIGN_STMT(q, db_.Prepare("UPDATE nexus_endpoints SET name = ?, version = ?, record = ? "
                               "WHERE id = ? AND version = ?"));
    RETURN_IF_ERROR(q.Bind(1, e.spec().name())
                        .Bind(2, e.version())
                        .BindBlob(3, e.SerializeAsString())
                        .Bind(4, e.id())
                        .Bind(5, version)
                        .Run());
    if (db_.Changes() != 0) return absl::OkStatus();
    ASSIGN_STMT(exists, db_.Prepare("SELECT 1 FROM nexus_endpoints WHERE id = ?"));
    exists.Bind(1, e.id());
    bool found = false;
    RETURN_IF_ERROR(exists.ForEachRow([&] {
      found = true;
      return absl::OkStatus();
    }));
    return found ? absl::AbortedError("the Nexus endpoint was changed concurrently")
                 : absl::NotFoundError("the Nexus endpoint is not stored");
  }

  absl::StatusOr<NexusEndpoint> Get(const std::string& id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT record FROM nexus_endpoints WHERE id = ?"));
    q.Bind(1, id);
    return One(Rows(q));
  }

  absl::StatusOr<NexusEndpoint> GetByName(const std::string& name) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT record FROM nexus_endpoints WHERE name = ?"));
    q.Bind(1, name);
    return One(Rows(q));
  }

  absl::Status Delete(const std::string& id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("DELETE FROM nexus_endpoints WHERE id = ?"));
    RETURN_IF_ERROR(q.Bind(1, id).Run());
    if (db_.Changes() == 0) return absl::NotFoundError("the Nexus endpoint is not stored");
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<NexusEndpoint>> List(const std::string& after_id,
                                                  int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT record FROM nexus_endpoints WHERE id > ? ORDER BY id LIMIT ?"));
    q.Bind(1, after_id).Bind(2, int64_t{limit});
    return Rows(q);
  }

 private:
  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<NexusEndpointStore> NewSqliteNexusEndpointStore(SqliteDb& db) {
  return std::make_unique<SqliteNexusEndpointStore>(db);
}

}  // namespace tock::persistence
