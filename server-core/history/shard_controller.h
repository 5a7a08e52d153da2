// The history shards of this server: which shard a workflow belongs to, the range id that
// fences every write of a shard, and task ids allocated from it.
//
// Shard of an execution: FarmHash Fingerprint32(namespace_id + "_" + workflow_id) % shards + 1,
// byte for byte Temporal's placement. At start each shard is taken by incrementing its range
// id (a compare-and-swap in the database); a server that was displaced keeps its old range id
// and every write it tries fails, writing nothing. Task ids are range_id << 20 onwards.
//
// Thread safety: safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server-core/persistence/execution_store.h"

namespace tock::server::history {

int32_t ShardForWorkflow(const std::string& namespace_id, const std::string& workflow_id,
                         int32_t shard_count);

class ShardController {
 public:
  ShardController(persistence::ExecutionStore& store, int32_t shard_count, std::string owner)
      : store_(store), shard_count_(shard_count), owner_(std::move(owner)) {}

  // Takes every shard (increments each range id).
  absl::Status AcquireAll();

  int32_t shard_count() const { return shard_count_; }
  int32_t ShardFor(const std::string& namespace_id, const std::string& workflow_id) const {
    return ShardForWorkflow(namespace_id, workflow_id, shard_count_);
  }
  int64_t RangeId(int32_t shard_id) const;
  // The next task id of the shard: (range_id << 20) + n, n < 2^20.
  int64_t NextTaskId(int32_t shard_id);

 private:
  struct Shard {
    int64_t range_id = 0;
    std::atomic<int64_t> next{0};
  };

  persistence::ExecutionStore& store_;
  const int32_t shard_count_;
  const std::string owner_;
  std::vector<std::unique_ptr<Shard>> shards_;  // index shard_id - 1
};

}  // namespace tock::server::history
