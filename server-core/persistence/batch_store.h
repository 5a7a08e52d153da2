// Batch operations (StartBatchOperation): one record per (namespace, job id), written when
// the batch starts and rewritten as it progresses; the running ones are found again at start.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tock/persistence/v1/batch.pb.h"

namespace tock::persistence {

using BatchOperationRecord = tock::persistence::v1::BatchOperationRecord;

class BatchStore {
 public:
  virtual ~BatchStore() = default;
  // ALREADY_EXISTS when the namespace has a batch with this job id.
  virtual absl::Status Create(const BatchOperationRecord& record) = 0;
  // Replaces the stored record (NOT_FOUND when there is none).
  virtual absl::Status Update(const BatchOperationRecord& record) = 0;
  // NOT_FOUND when there is none.
  virtual absl::StatusOr<BatchOperationRecord> Get(const std::string& namespace_id,
                                                   const std::string& job_id) = 0;
  // The namespace's batches, newest start first, `offset` of them skipped, at most `limit`.
  virtual absl::StatusOr<std::vector<BatchOperationRecord>> List(const std::string& namespace_id,
                                                                 int32_t limit,
                                                                 int64_t offset) = 0;
  // Every batch still running, in every namespace.
  virtual absl::StatusOr<std::vector<BatchOperationRecord>> ListRunning() = 0;
};

}  // namespace tock::persistence
