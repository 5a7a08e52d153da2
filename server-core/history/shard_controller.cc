#include "server-core/history/shard_controller.h"

#include "lib/common/hashing.h"

namespace tock::server::history {

int32_t ShardForWorkflow(const std::string& namespace_id, const std::string& workflow_id,
                         int32_t shard_count) {
  return static_cast<int32_t>(Fingerprint32(namespace_id + "_" + workflow_id) %
                              static_cast<uint32_t>(shard_count)) +
         1;
}

absl::Status ShardController::AcquireAll() {
  shards_.clear();
  for (int32_t id = 1; id <= shard_count_; ++id) {
    absl::StatusOr<int64_t> range = store_.AcquireShard(id, owner_);
    if (!range.ok()) return range.status();
    auto shard = std::make_unique<Shard>();
    shard->range_id = *range;
    shard->next = *range << 20;
    shards_.push_back(std::move(shard));
  }
  return absl::OkStatus();
}

int64_t ShardController::RangeId(int32_t shard_id) const {
  return shards_.at(shard_id - 1)->range_id;
}

int64_t ShardController::NextTaskId(int32_t shard_id) {
  return shards_.at(shard_id - 1)->next.fetch_add(1);
}

}  // namespace tock::server::history
