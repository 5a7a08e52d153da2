// The history shards of this server: which shard a workflow belongs to, which shards this
// host owns, the range id that fences every write of an owned shard, and task ids allocated
// from it.
//
// Shard of an execution: FarmHash Fingerprint32(namespace_id + "_" + workflow_id) % shards + 1,
// byte for byte Temporal's placement. A shard is taken by incrementing its range id (a
// compare-and-swap in the database); a host that was displaced keeps its old range id and
// every write it tries fails, writing nothing. Task ids are range_id << 20 onwards, so they
// increase across owners.
//
// One host on SQLite owns every shard (AcquireAll). Several hosts on one database each own
// the shards the ring gives them (SetOwned, called on every membership change); a listener
// (the history engine) hears of every shard taken and given up, to load or drop its timers
// and cached runs.
//
// Thread safety: safe from any thread; SetOwned and AcquireAll calls are serialised, and the
// listener is called from them, never under a lock of this class that readers take.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server-core/persistence/execution_store.h"

namespace tock::server::history {

int32_t ShardForWorkflow(const std::string& namespace_id, const std::string& workflow_id,
                         int32_t shard_count);

// The answer of a host to a call about a shard (or task queue) it does not own:
// UNAVAILABLE "<what> is not owned by this host; ...", which clients retry and routing
// (server-core/routing) recognises, to look the owner up again.
absl::Status NotOwnedHere(absl::string_view what);
absl::Status ShardNotOwnedHere(int32_t shard_id);  // "history shard N ..."
bool IsNotOwnedHere(absl::StatusCode code, absl::string_view message);

class ShardListener {
 public:
  virtual ~ShardListener() = default;
  // After the shard's range id was taken: its writes are fenced with the new one.
  virtual void OnShardAcquired(int32_t shard_id) = 0;
  // After the shard stopped being owned: its writes already carry no valid range id.
  virtual void OnShardReleased(int32_t shard_id) = 0;
};

class ShardController {
 public:
  // The range id of a shard this host does not own: no stored range id equals it, so a
  // write with it is refused by the store and writes nothing.
  static constexpr int64_t kNotOwned = -1;

  ShardController(persistence::ExecutionStore& store, int32_t shard_count, std::string owner);

  // Takes every shard (increments each range id). The one-host case.
  absl::Status AcquireAll();
  // Owns exactly `shards` (ids 1..shard_count) from now on: takes those not owned yet and
  // gives up the others. A shard that cannot be taken stays not owned and the first such
  // error is returned (the next call tries again); the others are applied regardless.
  absl::Status SetOwned(const std::vector<int32_t>& shards);
  // Gives up `shard_id` if it is still owned with `range_id` (a write found the shard taken
  // by another host: until the ring says otherwise, this host no longer owns it).
  void Lost(int32_t shard_id, int64_t range_id);

  void SetListener(ShardListener* listener);

  int32_t shard_count() const { return shard_count_; }
  int32_t ShardFor(const std::string& namespace_id, const std::string& workflow_id) const {
    return ShardForWorkflow(namespace_id, workflow_id, shard_count_);
  }
  bool Owns(int32_t shard_id) const { return RangeId(shard_id) != kNotOwned; }
  // The shard's range id, or kNotOwned.
  int64_t RangeId(int32_t shard_id) const;
  std::vector<int32_t> OwnedShards() const;
  // The next task id of the shard: (range_id << 20) + n, n < 2^20.
  int64_t NextTaskId(int32_t shard_id);

 private:
  struct Shard {
    std::atomic<int64_t> range_id{kNotOwned};
    std::atomic<int64_t> next{0};
  };
  // Takes one shard; the caller holds apply_mu_.
  absl::Status Acquire(int32_t shard_id);
  void Release(int32_t shard_id);

  persistence::ExecutionStore& store_;
  const int32_t shard_count_;
  const std::string owner_;
  std::vector<std::unique_ptr<Shard>> shards_;  // index shard_id - 1
  std::mutex apply_mu_;                        // serialises AcquireAll, SetOwned, Lost
  std::atomic<ShardListener*> listener_{nullptr};
};

}  // namespace tock::server::history
