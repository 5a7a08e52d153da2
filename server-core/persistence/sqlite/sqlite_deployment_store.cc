// Worker Deployments on SQLite: one row per deployment, updated by compare-and-swap on its
// revision.
#include "server-core/persistence/deployment_store.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"

namespace tock::persistence {
namespace {

// Rows of (revision, record).
absl::StatusOr<std::vector<StoredDeployment>> Rows(Statement& q) {
  std::vector<StoredDeployment> out;
  absl::Status read = q.ForEachRow([&] {
    StoredDeployment& d = out.emplace_back();
    d.revision = q.Int(0);
    const std::string_view bytes = q.BlobView(1);
    return d.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))
               ? absl::OkStatus()
               : absl::DataLossError("a stored worker deployment cannot be parsed");
  });
  if (!read.ok()) return read;
  return out;
}

class SqliteDeploymentStore : public DeploymentStore {
 public:
  explicit SqliteDeploymentStore(SqliteDb& db) : db_(db) {}

  absl::Status Create(const WorkerDeploymentRecord& r) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("INSERT INTO worker_deployments(namespace_id, name, revision, "
                               "record) VALUES (?,?,1,?) ON CONFLICT DO NOTHING"));
    RETURN_IF_ERROR(
        q.Bind(1, r.namespace_id()).Bind(2, r.name()).BindBlob(3, r.SerializeAsString()).Run());
    if (db_.Changes() == 0) return absl::AlreadyExistsError("the worker deployment exists");
    return absl::OkStatus();
  }

  absl::Status Update(const WorkerDeploymentRecord& r, int64_t revision) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("UPDATE worker_deployments SET revision = revision + 1, record = ? "
                               "WHERE namespace_id = ? AND name = ? AND revision = ?"));
    RETURN_IF_ERROR(q.BindBlob(1, r.SerializeAsString())
                        .Bind(2, r.namespace_id())
                        .Bind(3, r.name())
                        .Bind(4, revision)
                        .Run());
    if (db_.Changes() != 0) return absl::OkStatus();
    return ChangedOrGone(r.namespace_id(), r.name());
  }

  absl::StatusOr<StoredDeployment> Get(const std::string& namespace_id,
                                       const std::string& name) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT revision, record FROM worker_deployments "
                               "WHERE namespace_id = ? AND name = ?"));
    q.Bind(1, namespace_id).Bind(2, name);
    absl::StatusOr<std::vector<StoredDeployment>> found = Rows(q);
    if (!found.ok()) return found.status();
    if (found->empty()) return absl::NotFoundError("no such worker deployment");
    return std::move(found->front());
  }

  absl::Status Delete(const std::string& namespace_id, const std::string& name,
                      int64_t revision) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("DELETE FROM worker_deployments "
                               "WHERE namespace_id = ? AND name = ? AND revision = ?"));
    RETURN_IF_ERROR(q.Bind(1, namespace_id).Bind(2, name).Bind(3, revision).Run());
    if (db_.Changes() != 0) return absl::OkStatus();
    return ChangedOrGone(namespace_id, name);
  }

  absl::StatusOr<std::vector<StoredDeployment>> List(const std::string& namespace_id,
                                                     const std::string& after_name,
                                                     int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT revision, record FROM worker_deployments "
                               "WHERE namespace_id = ? AND name > ? ORDER BY name LIMIT ?"));
    q.Bind(1, namespace_id).Bind(2, after_name).Bind(3, int64_t{limit});
    return Rows(q);
  }

  absl::StatusOr<std::vector<StoredDeployment>> ListAll(const std::string& after_namespace_id,
                                                        const std::string& after_name,
                                                        int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT revision, record FROM worker_deployments "
                               "WHERE namespace_id > ? OR (namespace_id = ? AND name > ?) "
                               "ORDER BY namespace_id, name LIMIT ?"));
    q.Bind(1, after_namespace_id).Bind(2, after_namespace_id).Bind(3, after_name).Bind(4, int64_t{limit});
    return Rows(q);
  }

 private:
  // After a compare-and-swap changed nothing (the lock is held): ABORTED when the row is
  // there (another change came first), NOT_FOUND when it is gone.
  absl::Status ChangedOrGone(const std::string& namespace_id, const std::string& name) {
    ASSIGN_STMT(e, db_.Prepare("SELECT 1 FROM worker_deployments WHERE namespace_id = ? AND name = ?"));
    e.Bind(1, namespace_id).Bind(2, name);
    bool exists = false;
    RETURN_IF_ERROR(e.ForEachRow([&] {
      exists = true;
      return absl::OkStatus();
    }));
    if (!exists) return absl::NotFoundError("the worker deployment is not stored");
    return absl::AbortedError("the worker deployment was changed concurrently");
  }

  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<DeploymentStore> NewSqliteDeploymentStore(SqliteDb& db) {
  return std::make_unique<SqliteDeploymentStore>(db);
}

}  // namespace tock::persistence
