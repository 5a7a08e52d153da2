#include <optional>
#include <string>

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

absl::Status Changed() {
  return absl::AbortedError("the batch operation was changed concurrently");
}

// ABORTED unless the record stored as `stored` has revision `revision`.
absl::Status CheckRevision(const std::string& stored, int64_t revision) {
  BatchOperationRecord current;
  if (!current.ParseFromString(stored)) {
    return absl::DataLossError("a stored batch operation cannot be parsed");
  }
  return current.revision() == revision ? absl::OkStatus() : Changed();
}

class SqliteBatchStore : public BatchStore {
 public:
  explicit SqliteBatchStore(SqliteDb& db) : db_(db) {}

  absl::Status Create(const BatchOperationRecord& r) override {
    BatchOperationRecord first = r;
    first.set_revision(0);
    std::lock_guard lock(db_.mutex());
    // One statement: the check for a running batch of the namespace and the insert cannot
    // be separated by another insert (SQLite runs one write at a time).
    ASSIGN_STMT(q, db_.Prepare(
                       "INSERT INTO batch_operations(namespace_id, job_id, running, start_ms, "
                       "record) SELECT ?, ?, ?, ?, ? WHERE ? = 0 OR NOT EXISTS (SELECT 1 FROM "
                       "batch_operations WHERE namespace_id = ? AND running = 1) "
                       "ON CONFLICT DO NOTHING"));
    RETURN_IF_ERROR(q.Bind(1, r.namespace_id())
                        .Bind(2, r.request().job_id())
                        .Bind(3, Running(r))
                        .Bind(4, absl::ToUnixMillis(FromProtoTime(r.start_time())))
                        .BindBlob(5, first.SerializeAsString())
                        .Bind(6, Running(r))
                        .Bind(7, r.namespace_id())
                        .Run());
    if (db_.Changes() == 1) return absl::OkStatus();
    absl::StatusOr<std::string> stored = StoredBytes(r.namespace_id(), r.request().job_id());
    if (stored.ok()) {
      return absl::AlreadyExistsError(
          absl::StrCat("a batch operation with job id ", r.request().job_id(), " exists"));
    }
    if (stored.status().code() != absl::StatusCode::kNotFound) return stored.status();
    return absl::ResourceExhaustedError("the namespace has a running batch operation");
  }

  absl::Status Update(const BatchOperationRecord& r) override {
    std::lock_guard lock(db_.mutex());
    absl::StatusOr<std::string> stored = StoredBytes(r.namespace_id(), r.request().job_id());
    if (!stored.ok()) return stored.status();
    RETURN_IF_ERROR(CheckRevision(*stored, r.revision()));
    BatchOperationRecord next = r;
    next.set_revision(r.revision() + 1);
    // Only over the bytes just read: a write from another connection in between fails it.
    ASSIGN_STMT(q, db_.Prepare("UPDATE batch_operations SET running = ?, record = ? "
                               "WHERE namespace_id = ? AND job_id = ? AND record = ?"));
    RETURN_IF_ERROR(q.Bind(1, Running(r))
                        .BindBlob(2, next.SerializeAsString())
                        .Bind(3, r.namespace_id())
                        .Bind(4, r.request().job_id())
                        .BindBlob(5, *stored)
                        .Run());
    if (db_.Changes() == 0) return Changed();
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
  // The stored record's bytes, or NOT_FOUND; under db_.mutex().
  absl::StatusOr<std::string> StoredBytes(const std::string& namespace_id,
                                          const std::string& job_id) {
    ASSIGN_STMT(q, db_.Prepare(
                       "SELECT record FROM batch_operations WHERE namespace_id = ? AND job_id = ?"));
    q.Bind(1, namespace_id).Bind(2, job_id);
    std::optional<std::string> bytes;
    // ForEachRow resets the statement: a read left open would hold the UPDATE's commit.
    RETURN_IF_ERROR(q.ForEachRow([&] {
      bytes = q.Blob(0);
      return absl::OkStatus();
    }));
    if (!bytes.has_value()) return absl::NotFoundError("the batch operation is not stored");
    return *std::move(bytes);
  }

  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<BatchStore> NewSqliteBatchStore(SqliteDb& db) {
  return std::make_unique<SqliteBatchStore>(db);
}

}  // namespace tock::persistence
