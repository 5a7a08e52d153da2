// Batch operations (StartBatchOperation): one record per (namespace, job id), written when
// the batch starts and rewritten as it progresses; the running ones are found again at start.
//
// Two rules hold in the database, not just in the caller, so that they hold for concurrent
// callers on any number of hosts: a namespace has at most one running batch (Create checks
// and inserts as one step), and an update is a compare-and-swap on the record's revision (a
// runner's progress never overwrites a stop, or another host's progress, written since it read).
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
  // Stores `record` with revision 0. ALREADY_EXISTS when the namespace has a batch with this
  // job id; RESOURCE_EXHAUSTED when `record` is running and the namespace has a running
  // batch already (Temporal's MaxConcurrentBatchOperationPerNamespace, 1).
  virtual absl::Status Create(const BatchOperationRecord& record) = 0;
  // Replaces the stored record when its revision is still `record.revision()` (the record as
  // read); the stored revision becomes one more, which the caller's copy must take to update
  // again. ABORTED when it was changed since; NOT_FOUND when there is none.
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
