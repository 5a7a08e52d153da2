// Worker Deployments on PostgreSQL: one autocommit statement per call; updates and deletes
// compare-and-swap on the row's revision.
#include "server-core/persistence/deployment_store.h"
#include "server-core/persistence/postgres/pg_stores.h"

namespace tock::persistence {
namespace {

absl::StatusOr<std::vector<StoredDeployment>> Rows(absl::StatusOr<PgResult> r) {
  if (!r.ok()) return r.status();
  std::vector<StoredDeployment> out;
  for (int i = 0; i < r->rows(); ++i) {
    StoredDeployment& d = out.emplace_back();
    d.revision = r->Int(i, 0);
    const std::string_view bytes = r->View(i, 1);
    if (!d.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return absl::DataLossError("a stored worker deployment cannot be parsed");
    }
  }
  return out;
}

// A compare-and-swap's answer of (changed, rows of that key): ok, ABORTED or NOT_FOUND.
absl::Status Swapped(absl::StatusOr<PgResult> q) {
  if (!q.ok()) return q.status();
  if (q->Int(0, 0) == 1) return absl::OkStatus();
  if (q->Int(0, 1) == 0) return absl::NotFoundError("the worker deployment is not stored");
  return absl::AbortedError("the worker deployment was changed concurrently");
}

class PgDeploymentStore : public DeploymentStore {
 public:
  explicit PgDeploymentStore(PgPool& pool) : pool_(pool) {}

  absl::Status Create(const WorkerDeploymentRecord& r) override {
    const std::string record = r.SerializeAsString();
    absl::StatusOr<PgResult> q = pool_.Query(
        "INSERT INTO worker_deployments(namespace_id, name, revision, record) "
        "VALUES ($1, $2, 1, $3) ON CONFLICT DO NOTHING RETURNING 1",
        {PgParam::Text(r.namespace_id()), PgParam::Text(r.name()), PgParam::Bytes(record)});
    if (!q.ok()) return q.status();
    if (q->rows() == 0) return absl::AlreadyExistsError("the worker deployment exists");
    return absl::OkStatus();
  }

  absl::Status Update(const WorkerDeploymentRecord& r, int64_t revision) override {
    const std::string record = r.SerializeAsString();
    return Swapped(pool_.Query(
        "WITH u AS (UPDATE worker_deployments SET revision = revision + 1, record = $1 "
        "WHERE namespace_id = $2 AND name = $3 AND revision = $4 RETURNING 1) "
        "SELECT (SELECT count(*) FROM u), "
        "(SELECT count(*) FROM worker_deployments WHERE namespace_id = $2 AND name = $3)",
        {PgParam::Bytes(record), PgParam::Text(r.namespace_id()), PgParam::Text(r.name()),
         PgParam::Int(revision)}));
  }

  absl::StatusOr<StoredDeployment> Get(const std::string& namespace_id,
                                       const std::string& name) override {
    absl::StatusOr<std::vector<StoredDeployment>> found = Rows(pool_.Query(
        "SELECT revision, record FROM worker_deployments WHERE namespace_id = $1 AND name = $2",
        {PgParam::Text(namespace_id), PgParam::Text(name)}));
    if (!found.ok()) return found.status();
    if (found->empty()) return absl::NotFoundError("no such worker deployment");
    return std::move(found->front());
  }

  absl::Status Delete(const std::string& namespace_id, const std::string& name,
                      int64_t revision) override {
    return Swapped(pool_.Query(
        "WITH d AS (DELETE FROM worker_deployments WHERE namespace_id = $1 AND name = $2 "
        "AND revision = $3 RETURNING 1) "
        "SELECT (SELECT count(*) FROM d), "
        "(SELECT count(*) FROM worker_deployments WHERE namespace_id = $1 AND name = $2)",
        {PgParam::Text(namespace_id), PgParam::Text(name), PgParam::Int(revision)}));
  }

  absl::StatusOr<std::vector<StoredDeployment>> List(const std::string& namespace_id,
                                                     const std::string& after_name,
                                                     int32_t limit) override {
    return Rows(pool_.Query(
        "SELECT revision, record FROM worker_deployments WHERE namespace_id = $1 AND name > $2 "
        "ORDER BY name LIMIT $3",
        {PgParam::Text(namespace_id), PgParam::Text(after_name), PgParam::Int(limit)}));
  }

  absl::StatusOr<std::vector<StoredDeployment>> ListAll(const std::string& after_namespace_id,
                                                        const std::string& after_name,
                                                        int32_t limit) override {
    return Rows(pool_.Query(
        "SELECT revision, record FROM worker_deployments WHERE (namespace_id, name) > ($1, $2) "
        "ORDER BY namespace_id, name LIMIT $3",
        {PgParam::Text(after_namespace_id), PgParam::Text(after_name), PgParam::Int(limit)}));
  }

 private:
  PgPool& pool_;
};

}  // namespace

std::unique_ptr<DeploymentStore> NewPostgresDeploymentStore(PgPool& pool) {
  return std::make_unique<PgDeploymentStore>(pool);
}

}  // namespace tock::persistence
