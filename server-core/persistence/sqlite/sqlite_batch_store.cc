#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"
#include "server-core/persistence/batch_store.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"

namespace tock::persistence {
namespace {

int64_t Running(const BatchOperationRecord& r) {
  return r.state() == temporal::api::enums::v1::BATCH_OPERATION_STATE_RUNNING ? 1 : 0;
}

absl::StatusOr<std::vector<BatchOperationRecord>> Records(Statement& q) {
  std::vector<BatchOperationRecord> out;
  absl::Status read = q.ForEachRow([&] {
    return out.emplace_back().ParseFromString(q.Blob(0))
               ? absl::OkStatus()
               : absl::DataLossError("a stored batch operation cannot be parsed");
  });
  if (!read.ok()) return read;
  return out;
}

class SqliteBatchStore : public BatchStore {
 public:
  explicit SqliteBatchStore(SqliteDb& db) : db_(db) {}

  absl::Status Create(const BatchOperationRecord& r) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "INSERT INTO batch_operations(namespace_id, job_id, running, start_ms, "
                       "record) VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING"));
    RETURN_IF_ERROR(q.Bind(1, r.namespace_id())
                        .Bind(2, r.request().job_id())
                        .Bind(3, Running(r))
                        .Bind(4, absl::ToUnixMillis(FromProtoTime(r.start_time())))
                        .BindBlob(5, r.SerializeAsString())
                        .Run());
    if (db_.Changes() == 0) {
      return absl::AlreadyExistsError(
          absl::StrCat("a batch operation with job id ", r.request().job_id(), " exists"));
    }
    return absl::OkStatus();
  }

  absl::Status Update(const BatchOperationRecord& r) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("UPDATE batch_operations SET running = ?, record = ? "
                               "WHERE namespace_id = ? AND job_id = ?"));
    RETURN_IF_ERROR(q.Bind(1, Running(r))
                        .BindBlob(2, r.SerializeAsString())
                        .Bind(3, r.namespace_id())
                        .Bind(4, r.request().job_id())
                        .Run());
    if (db_.Changes() == 0) return absl::NotFoundError("the batch operation is not stored");
    return absl::OkStatus();
  }

  absl::StatusOr<BatchOperationRecord> Get(const std::string& namespace_id,
                                           const std::string& job_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "SELECT record FROM batch_operations WHERE namespace_id = ? AND job_id = ?"));
    q.Bind(1, namespace_id).Bind(2, job_id);
    absl::StatusOr<std::vector<BatchOperationRecord>> found = Records(q);
    if (!found.ok()) return found.status();
    if (found->empty()) return absl::NotFoundError("no such batch operation");
    return std::move(found->front());
  }

  absl::StatusOr<std::vector<BatchOperationRecord>> List(const std::string& namespace_id,
                                                         int32_t limit, int64_t offset) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT record FROM batch_operations WHERE namespace_id = ? "
                               "ORDER BY start_ms DESC, job_id LIMIT ? OFFSET ?"));
    q.Bind(1, namespace_id).Bind(2, int64_t{limit}).Bind(3, offset);
    return Records(q);
  }

  absl::StatusOr<std::vector<BatchOperationRecord>> ListRunning() override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT record FROM batch_operations WHERE running = 1 "
                               "ORDER BY start_ms"));
    return Records(q);
  }

 private:
  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<BatchStore> NewSqliteBatchStore(SqliteDb& db) {
  return std::make_unique<SqliteBatchStore>(db);
}

}  // namespace tock::persistence
