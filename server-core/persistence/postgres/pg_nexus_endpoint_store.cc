// Nexus endpoints on PostgreSQL: one autocommit statement per call; updates compare-and-swap
// on the endpoint's version.
#include "server-core/persistence/nexus_endpoint_store.h"
#include "server-core/persistence/postgres/pg_stores.h"

namespace tock::persistence {
namespace {

absl::StatusOr<std::vector<NexusEndpoint>> Rows(absl::StatusOr<PgResult> r) {
  if (!r.ok()) return r.status();
  std::vector<NexusEndpoint> out;
  for (int i = 0; i < r->rows(); ++i) {
    const std::string_view bytes = r->View(i, 0);
    if (!out.emplace_back().ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return absl::DataLossError("a stored Nexus endpoint cannot be parsed");
    }
  }
  return out;
}

absl::StatusOr<NexusEndpoint> One(absl::StatusOr<std::vector<NexusEndpoint>> rows) {
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return absl::NotFoundError("no such Nexus endpoint");
  return std::move(rows->front());
}

class PgNexusEndpointStore : public NexusEndpointStore {
 public:
  explicit PgNexusEndpointStore(PgPool& pool) : pool_(pool) {}

  absl::Status Create(const NexusEndpoint& e) override {
    absl::StatusOr<PgResult> q = pool_.Query(
        "INSERT INTO nexus_endpoints(id, name, version, record) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT DO NOTHING RETURNING 1",
        {PgParam::Text(e.id()), PgParam::Text(e.spec().name()), PgParam::Int(e.version()),
         PgParam::Bytes(e.SerializeAsString())});
    if (!q.ok()) return q.status();
    if (q->rows() == 0) return absl::AlreadyExistsError("the Nexus endpoint exists");
    return absl::OkStatus();
  }

  absl::Status Update(const NexusEndpoint& e, int64_t version) override {
    // (changed, rows of this id, other rows of the new name)
    absl::StatusOr<PgResult> q = pool_.Query(
        "WITH u AS (UPDATE nexus_endpoints SET name = $1, version = $2, record = $3 "
        "WHERE id = $4 AND version = $5 AND NOT EXISTS "
        "(SELECT 1 FROM nexus_endpoints WHERE name = $1 AND id <> $4) RETURNING 1) "
        "SELECT (SELECT count(*) FROM u), (SELECT count(*) FROM nexus_endpoints WHERE id = $4), "
        "(SELECT count(*) FROM nexus_endpoints WHERE name = $1 AND id <> $4)",
        {PgParam::Text(e.spec().name()), PgParam::Int(e.version()),
         PgParam::Bytes(e.SerializeAsString()), PgParam::Text(e.id()), PgParam::Int(version)});
    if (!q.ok()) return q.status();
    if (q->Int(0, 0) == 1) return absl::OkStatus();
    if (q->Int(0, 1) == 0) return absl::NotFoundError("the Nexus endpoint is not stored");
    if (q->Int(0, 2) != 0) return absl::AlreadyExistsError("another Nexus endpoint has this name");
    return absl::AbortedError("the Nexus endpoint was changed concurrently");
  }

  absl::StatusOr<NexusEndpoint> Get(const std::string& id) override {
    return One(Rows(pool_.Query("SELECT record FROM nexus_endpoints WHERE id = $1",
                                {PgParam::Text(id)})));
  }

  absl::StatusOr<NexusEndpoint> GetByName(const std::string& name) override {
    return One(Rows(pool_.Query("SELECT record FROM nexus_endpoints WHERE name = $1",
                                {PgParam::Text(name)})));
  }

  absl::Status Delete(const std::string& id) override {
    absl::StatusOr<PgResult> q =
        pool_.Query("DELETE FROM nexus_endpoints WHERE id = $1 RETURNING 1", {PgParam::Text(id)});
    if (!q.ok()) return q.status();
    if (q->rows() == 0) return absl::NotFoundError("the Nexus endpoint is not stored");
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<NexusEndpoint>> List(const std::string& after_id,
                                                  int32_t limit) override {
    return Rows(pool_.Query("SELECT record FROM nexus_endpoints WHERE id > $1 ORDER BY id LIMIT $2",
                            {PgParam::Text(after_id), PgParam::Int(limit)}));
  }

 private:
  PgPool& pool_;
};

}  // namespace

std::unique_ptr<NexusEndpointStore> NewPostgresNexusEndpointStore(PgPool& pool) {
  return std::make_unique<PgNexusEndpointStore>(pool);
}

}  // namespace tock::persistence
