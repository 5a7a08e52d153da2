#include "server-core/history/shard_controller.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/hashing.h"

namespace tock::server::history {

int32_t ShardForWorkflow(const std::string& namespace_id, const std::string& workflow_id,
                         int32_t shard_count) {
  return static_cast<int32_t>(Fingerprint32(namespace_id + "_" + workflow_id) %
                              static_cast<uint32_t>(shard_count)) +
         1;
}

absl::Status NotOwnedHere(absl::string_view what) {
  return absl::UnavailableError(
      absl::StrCat(what, " is not owned by this host; it is moving to another host, retry"));
}

absl::Status ShardNotOwnedHere(int32_t shard_id) {
  return NotOwnedHere(absl::StrCat("history shard ", shard_id));
}

bool IsNotOwnedHere(absl::StatusCode code, absl::string_view message) {
  return code == absl::StatusCode::kUnavailable &&
         absl::StrContains(message, " is not owned by this host; ");
}

ShardController::ShardController(persistence::ExecutionStore& store, int32_t shard_count,
                                 std::string owner)
    : store_(store), shard_count_(shard_count), owner_(std::move(owner)) {
  for (int32_t id = 1; id <= shard_count_; ++id) shards_.push_back(std::make_unique<Shard>());
}

void ShardController::SetListener(ShardListener* listener) { listener_ = listener; }

absl::Status ShardController::Acquire(int32_t shard_id) {
  absl::StatusOr<int64_t> range = store_.AcquireShard(shard_id, owner_);
  if (!range.ok()) {
    return absl::Status(range.status().code(), absl::StrCat("cannot take history shard ", shard_id,
                                                            ": ", range.status().message()));
  }
  Shard& shard = *shards_[shard_id - 1];
  shard.next = *range << 20;
  shard.range_id = *range;
  if (ShardListener* l = listener_.load()) l->OnShardAcquired(shard_id);
  return absl::OkStatus();
}

void ShardController::Release(int32_t shard_id) {
  shards_[shard_id - 1]->range_id = kNotOwned;
  if (ShardListener* l = listener_.load()) l->OnShardReleased(shard_id);
}

absl::Status ShardController::AcquireAll() {
  std::vector<int32_t> all(static_cast<size_t>(shard_count_));
  for (int32_t id = 1; id <= shard_count_; ++id) all[id - 1] = id;
  return SetOwned(all);
}

absl::Status ShardController::SetOwned(const std::vector<int32_t>& wanted) {
  std::vector<bool> want(static_cast<size_t>(shard_count_) + 1, false);
  for (int32_t id : wanted) {
    if (id >= 1 && id <= shard_count_) want[id] = true;
  }
  std::lock_guard lock(apply_mu_);
  // Give up first: a shard moving away is released before another is taken, so a host
  // that is both losing and gaining shards never holds more than it should for long.
  for (int32_t id = 1; id <= shard_count_; ++id) {
    if (!want[id] && shards_[id - 1]->range_id != kNotOwned) Release(id);
  }
  absl::Status first_error;
  for (int32_t id = 1; id <= shard_count_; ++id) {
    if (!want[id] || shards_[id - 1]->range_id != kNotOwned) continue;
    if (absl::Status s = Acquire(id); !s.ok() && first_error.ok()) first_error = s;
  }
  return first_error;
}

void ShardController::Lost(int32_t shard_id, int64_t range_id) {
  if (shard_id < 1 || shard_id > shard_count_) return;
  std::lock_guard lock(apply_mu_);
  if (shards_[shard_id - 1]->range_id == range_id && range_id != kNotOwned) Release(shard_id);
}

int64_t ShardController::RangeId(int32_t shard_id) const {
  if (shard_id < 1 || shard_id > shard_count_) return kNotOwned;
  return shards_[shard_id - 1]->range_id;
}

std::vector<int32_t> ShardController::OwnedShards() const {
  std::vector<int32_t> owned;
  for (int32_t id = 1; id <= shard_count_; ++id) {
    if (shards_[id - 1]->range_id != kNotOwned) owned.push_back(id);
  }
  return owned;
}

int64_t ShardController::NextTaskId(int32_t shard_id) {
  return shards_.at(shard_id - 1)->next.fetch_add(1);
}

}  // namespace tock::server::history
