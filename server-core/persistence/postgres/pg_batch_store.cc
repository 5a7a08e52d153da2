// Batch operations on PostgreSQL: one autocommit statement per call.
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"
#include "server-core/persistence/batch_store.h"
#include "server-core/persistence/postgres/pg_stores.h"

namespace tock::persistence {
namespace {

int64_t Running(const BatchOperationRecord& r) {
  return r.state() == temporal::api::enums::v1::BATCH_OPERATION_STATE_RUNNING ? 1 : 0;
}

absl::StatusOr<std::vector<BatchOperationRecord>> Records(absl::StatusOr<PgResult> r) {
  if (!r.ok()) return r.status();
  std::vector<BatchOperationRecord> out;
  for (int i = 0; i < r->rows(); ++i) {
    const std::string_view bytes = r->View(i, 0);
    if (!out.emplace_back().ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return absl::DataLossError("a stored batch operation cannot be parsed");
    }
  }
  return out;
}

// With the namespace id, the key of the advisory lock that serializes a namespace's batch
// starts ("Tock", 2; the schema migration's lock is "Tock", 1).
constexpr int64_t kBatchStartLockSeed = 0x546f636b0002;

absl::Status Changed() {
  return absl::AbortedError("the batch operation was changed concurrently");
}

class PgBatchStore : public BatchStore {
 public:
  explicit PgBatchStore(PgPool& pool) : pool_(pool) {}

  absl::Status Create(const BatchOperationRecord& r) override {
    BatchOperationRecord first = r;
    first.set_revision(0);
    const std::string record = first.SerializeAsString();
    bool inserted = false;
    // Under a lock of the namespace's batch starts, in a transaction: READ COMMITTED alone
    // would let two concurrent inserts each miss the other's running batch. The insert's
    // snapshot is taken after the lock, so it sees a batch committed by the lock's last holder.
    absl::Status s = pool_.InTransaction([&](PgConn& conn) -> absl::Status {
      absl::StatusOr<PgResult> locked =
          conn.Query("SELECT pg_advisory_xact_lock(hashtextextended($1, $2))",
                     {PgParam::Text(r.namespace_id()), PgParam::Int(kBatchStartLockSeed)});
      if (!locked.ok()) return locked.status();
      absl::StatusOr<PgResult> q = conn.Query(
          "INSERT INTO batch_operations(namespace_id, job_id, running, start_ms, record) "
          "SELECT $1, $2, $3, $4, $5 WHERE $3 = 0 OR NOT EXISTS (SELECT 1 FROM batch_operations "
          "WHERE namespace_id = $1 AND running = 1) ON CONFLICT DO NOTHING RETURNING 1",
          {PgParam::Text(r.namespace_id()), PgParam::Text(r.request().job_id()),
           PgParam::Int(Running(r)),
           PgParam::Int(absl::ToUnixMillis(FromProtoTime(r.start_time()))),
           PgParam::Bytes(record)});
      if (!q.ok()) return q.status();
      inserted = q->rows() == 1;
      return absl::OkStatus();
    });
    if (!s.ok() || inserted) return s;
    absl::StatusOr<std::string> stored = StoredBytes(r.namespace_id(), r.request().job_id());
    if (stored.ok()) {
      return absl::AlreadyExistsError(
          absl::StrCat("a batch operation with job id ", r.request().job_id(), " exists"));
    }
    if (stored.status().code() != absl::StatusCode::kNotFound) return stored.status();
    return absl::ResourceExhaustedError("the namespace has a running batch operation");
  }

  absl::Status Update(const BatchOperationRecord& r) override {
    absl::StatusOr<std::string> stored = StoredBytes(r.namespace_id(), r.request().job_id());
    if (!stored.ok()) return stored.status();
    BatchOperationRecord current;
    if (!current.ParseFromString(*stored)) {
      return absl::DataLossError("a stored batch operation cannot be parsed");
    }
    if (current.revision() != r.revision()) return Changed();
    BatchOperationRecord next = r;
    next.set_revision(r.revision() + 1);
    const std::string record = next.SerializeAsString();
    // Only over the bytes just read: a write by anyone in between fails it.
    absl::StatusOr<PgResult> q = pool_.Query(
        "UPDATE batch_operations SET running = $1, record = $2 WHERE namespace_id = $3 AND "
        "job_id = $4 AND record = $5 RETURNING 1",
        {PgParam::Int(Running(r)), PgParam::Bytes(record), PgParam::Text(r.namespace_id()),
         PgParam::Text(r.request().job_id()), PgParam::Bytes(*stored)});
    if (!q.ok()) return q.status();
    if (q->rows() == 0) return Changed();
    return absl::OkStatus();
  }

  absl::StatusOr<BatchOperationRecord> Get(const std::string& namespace_id,
                                           const std::string& job_id) override {
    absl::StatusOr<std::vector<BatchOperationRecord>> found = Records(pool_.Query(
        "SELECT record FROM batch_operations WHERE namespace_id = $1 AND job_id = $2",
        {PgParam::Text(namespace_id), PgParam::Text(job_id)}));
    if (!found.ok()) return found.status();
    if (found->empty()) return absl::NotFoundError("no such batch operation");
    return std::move(found->front());
  }

  absl::StatusOr<std::vector<BatchOperationRecord>> List(const std::string& namespace_id,
                                                         int32_t limit, int64_t offset) override {
    return Records(pool_.Query(
        "SELECT record FROM batch_operations WHERE namespace_id = $1 "
        "ORDER BY start_ms DESC, job_id LIMIT $2 OFFSET $3",
        {PgParam::Text(namespace_id), PgParam::Int(limit), PgParam::Int(offset)}));
  }

  absl::StatusOr<std::vector<BatchOperationRecord>> ListRunning() override {
    return Records(pool_.Query(
        "SELECT record FROM batch_operations WHERE running = 1 ORDER BY start_ms"));
  }

 private:
  // The stored record's bytes, or NOT_FOUND.
  absl::StatusOr<std::string> StoredBytes(const std::string& namespace_id,
                                          const std::string& job_id) {
    absl::StatusOr<PgResult> q = pool_.Query(
        "SELECT record FROM batch_operations WHERE namespace_id = $1 AND job_id = $2",
        {PgParam::Text(namespace_id), PgParam::Text(job_id)});
    if (!q.ok()) return q.status();
    if (q->rows() == 0) return absl::NotFoundError("the batch operation is not stored");
    return std::string(q->View(0, 0));
  }

  PgPool& pool_;
};

}  // namespace

std::unique_ptr<BatchStore> NewPostgresBatchStore(PgPool& pool) {
  return std::make_unique<PgBatchStore>(pool);
}

}  // namespace tock::persistence
