#include "server-core/history/shard_controller.h"

#include <algorithm>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/hashing.h"
#include "lib/common/ids.h"

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

std::string ShardOwner(absl::string_view address, absl::string_view process_id) {
  return absl::StrCat(address, "#", process_id);
}

absl::string_view ShardOwnerAddress(absl::string_view owner) {
  const size_t hash = owner.rfind('#');  // no address (HOST:PORT) has a '#'
  return hash == absl::string_view::npos ? owner : owner.substr(0, hash);
}

ShardController::ShardController(persistence::ExecutionStore& store, int32_t shard_count,
                                 std::string address, int64_t block_size,
                                 std::string process_id)
    : store_(store),
      shard_count_(shard_count),
      owner_(ShardOwner(address, process_id.empty() ? NewUuid() : process_id)),
      block_size_(std::clamp<int64_t>(block_size, 1, kMaxBlockSize)) {
  for (int32_t id = 1; id <= shard_count_; ++id) shards_.push_back(std::make_unique<Shard>());
}

void ShardController::SetListener(ShardListener* listener) { listener_ = listener; }

std::vector<absl::StatusOr<int64_t>> ShardController::TakeRanges(const std::vector<int32_t>& ids) {
  std::vector<absl::StatusOr<int64_t>> ranges(ids.size(), absl::UnknownError("not taken"));
  std::atomic<size_t> next{0};
  auto take = [&] {
    for (size_t i = next++; i < ids.size(); i = next++) {
      ranges[i] = store_.AcquireShard(ids[i], owner_);
    }
  };
  const size_t threads = std::min(ids.size(), kParallelTakes);
  if (threads <= 1) {
    take();
  } else {
    std::vector<std::jthread> takers;
    for (size_t t = 0; t < threads; ++t) takers.emplace_back(take);
  }
  return ranges;
}

void ShardController::Release(int32_t shard_id) {
  Shard& shard = *shards_[shard_id - 1];
  shard.limit = kNoIds;
  shard.range_id = kNotOwned;
  if (ShardListener* l = listener_.load()) l->OnShardReleased(shard_id);
}

// `next` is stored before `limit`: a NextTaskId that reads the new limit then draws from the
// new block (see TryNextTaskId).
void ShardController::StartRange(Shard& shard, int64_t range_id) {
  const int64_t first = range_id << kRangeBits;
  shard.next.store(first);
  shard.limit.store(first + block_size_);
  shard.range_id.store(range_id);
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
  std::vector<int32_t> to_take;
  for (int32_t id = 1; id <= shard_count_; ++id) {
    if (want[id] && shards_[id - 1]->range_id == kNotOwned) to_take.push_back(id);
  }
  const std::vector<absl::StatusOr<int64_t>> ranges = TakeRanges(to_take);
  // In shard order, one at a time, as listeners expect.
  absl::Status first_error;
  for (size_t i = 0; i < to_take.size(); ++i) {
    const int32_t id = to_take[i];
    if (!ranges[i].ok()) {
      if (first_error.ok()) {
        first_error = absl::Status(ranges[i].status().code(),
                                   absl::StrCat("cannot take history shard ", id, ": ",
                                                ranges[i].status().message()));
      }
      continue;
    }
    StartRange(*shards_[id - 1], *ranges[i]);
    if (ShardListener* l = listener_.load()) l->OnShardAcquired(id);
  }
  return first_error;
}

void ShardController::Lost(int32_t shard_id, int64_t range_id) {
  if (shard_id < 1 || shard_id > shard_count_) return;
  {
    std::lock_guard lock(apply_mu_);
    if (shards_[shard_id - 1]->range_id != range_id || range_id == kNotOwned) return;
    Release(shard_id);
  }
  if (on_lost_) on_lost_(shard_id);
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

// The hot path: a load and a fetch_add. The limit is read BEFORE the fetch_add, and a block
// starts (StartRange) with `next` stored before `limit`, so:
//   - a thread that read the current block's limit draws from the current `next` (the store
//     to `next` happened before), and an id below that limit is of the current block;
//   - a thread that read an earlier limit L draws either from the earlier block (an id below
//     L is of that block, handed out once) or from a later one, whose ids are all >= L (a
//     block starts at (R + 1) << kRangeBits >= L = (R << kRangeBits) + block size): refused.
// So an id is handed out only once, below its block's end, and the ids that threads drew
// past the end (each refused) cannot reach the next block's. kNoIds refuses every id.
int64_t ShardController::TryNextTaskId(Shard& shard) {
  const int64_t limit = shard.limit.load(std::memory_order_acquire);
  const int64_t id = shard.next.fetch_add(1);
  return id < limit ? id : kNoIds;
}

int64_t ShardController::NextTaskId(int32_t shard_id) {
  if (int64_t id = TryNextTaskId(*shards_.at(shard_id - 1)); id != kNoIds) return id;
  return NextTaskIdRenewing(shard_id);
}

int64_t ShardController::NextTaskIdRenewing(int32_t shard_id) {
  Shard& shard = *shards_[shard_id - 1];
  int64_t taken = kNotOwned;
  {
    // Threads that used the block up queue here; the first renews, the others then draw
    // from the new block (or renew it again, when it was used up before they got here).
    std::lock_guard lock(shard.renew_mu);
    for (;;) {
      const int64_t range_id = shard.range_id;
      if (range_id == kNotOwned) return kNotOwned;
      if (int64_t id = TryNextTaskId(shard); id != kNoIds) return id;
      absl::Status renewed = Renew(shard_id, range_id);
      if (renewed.ok()) continue;
      // Any other error leaves the range and its used-up block: the next call tries again
      // (a retry of a renewal that did happen is answered OK by the store).
      if (renewed.code() != absl::StatusCode::kFailedPrecondition) return kNotOwned;
      taken = range_id;
      break;
    }
  }
  // Given up outside this shard's locks: the listener is never called under a lock that
  // NextTaskId or HoldRange take.
  Lost(shard_id, taken);
  return kNotOwned;
}

absl::Status ShardController::Renew(int32_t shard_id, int64_t range_id) {
  Shard& shard = *shards_[shard_id - 1];
  // Exclusive: wait for the commits fenced with `range_id` to be answered, and keep new ones
  // from taking a hold until the range id moved. Those in flight would otherwise fail their
  // fence (the stored range id moved under them) and be lost to this host's own renewal.
  {
    std::unique_lock gate(shard.gate_mu);
    shard.renewing = true;
    shard.gate_cv.wait(gate, [&] { return shard.holds == 0; });
  }
  absl::Status s = absl::OkStatus();
  {
    std::lock_guard apply(apply_mu_);
    if (shard.range_id == range_id) {  // else given up or taken again meanwhile: no renewal
      s = store_.RenewShardRange(shard_id, range_id, owner_);
      if (s.ok()) StartRange(shard, range_id + 1);
    }
  }
  {
    std::lock_guard gate(shard.gate_mu);
    shard.renewing = false;
  }
  shard.gate_cv.notify_all();
  return s;
}

ShardController::RangeHold ShardController::HoldRange(int32_t shard_id) {
  if (shard_id < 1 || shard_id > shard_count_) return RangeHold(nullptr, kNotOwned);
  Shard& shard = *shards_[shard_id - 1];
  std::unique_lock gate(shard.gate_mu);
  shard.gate_cv.wait(gate, [&] { return !shard.renewing; });
  ++shard.holds;
  return RangeHold(&shard, shard.range_id);
}

ShardController::RangeHold::~RangeHold() {
  if (shard_ == nullptr) return;
  bool last = false;
  {
    std::lock_guard gate(shard_->gate_mu);
    last = --shard_->holds == 0 && shard_->renewing;
  }
  if (last) shard_->gate_cv.notify_all();
}

}  // namespace tock::server::history
