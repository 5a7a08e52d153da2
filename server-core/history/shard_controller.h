// The history shards of this server: which shard a workflow belongs to, which shards this
// host owns, the range id that fences every write of an owned shard, and task ids allocated
// from it.
//
// Shard of an execution: FarmHash Fingerprint32(namespace_id + "_" + workflow_id) % shards + 1,
// byte for byte Temporal's placement. A shard is taken by incrementing its range id (a
// compare-and-swap in the database); a host that was displaced keeps its old range id and
// every write it tries fails, writing nothing.
//
// Task ids: the range id R owns the block (R << 20) + n, n < block size (2^20 unless a test
// makes it smaller). When the owner has used its block up, it renews its range as Temporal
// does: the stored range id goes from R to R + 1 only if it is still R, and ids continue
// from (R + 1) << 20. So ids strictly increase within an owner, and across owners: a new
// owner's range id is above every one a previous owner used. A renewal that finds the shard
// taken gives the shard up (as Lost does).
//
// Writes and renewals: a commit is fenced with the range id it holds (HoldRange) from just
// before it is written until it is answered; a renewal waits until no commit of the shard is
// held, and holds asked for meanwhile wait for the renewal. So no commit of this host is
// fenced out by its own renewal. Why a gate rather than writing such commits again with the
// new range id: a retry would have to tell this host's renewal from a steal and would give
// up the store's one-equality fence; the gate costs one uncontended mutex per commit (the
// ids stay a load and a fetch_add each), and a renewal, once per block, waits only for the
// commits being written. A hold is taken after the commit's ids are drawn, so the thread
// that renews (inside NextTaskId) never holds one: it cannot wait for itself.
//
// One host on SQLite owns every shard (AcquireAll). Several hosts on one database each own
// the shards the ring gives them (SetOwned, called on every membership change); a listener
// (the history engine) hears of every shard taken and given up, to load or drop its timers
// and cached runs.
//
// The owner a shard row names is this process, not its address: ShardOwner(address,
// process id), the process id new at every start (the server's membership host id). The
// renewal's compare-and-swap accepts R + 1 under the same owner as a retry of its own (a
// reply lost after the renewal landed); were the owner the address, a second process
// advertising the same address (a restarted pod reusing a service name, a misconfigured
// advertise_address) that took the shard R -> R + 1 would pass for that retry, and both
// would write under R + 1. Routing uses the address only (ShardOwnerAddress).
//
// Thread safety: safe from any thread; SetOwned and AcquireAll calls are serialised, and the
// listener is called from them, never under a lock of this class that readers take.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
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

// The owner a shard row names: "ADDRESS#PROCESS_ID", unique per process start.
std::string ShardOwner(absl::string_view address, absl::string_view process_id);
// The address part of a shard row's owner: what routing and `tock cluster shards` show.
// A row written before owners carried a process id is all address.
absl::string_view ShardOwnerAddress(absl::string_view owner);

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
  // Task ids of range id R are (R << kRangeBits) + n, n < the block size.
  static constexpr int kRangeBits = 20;
  static constexpr int64_t kMaxBlockSize = int64_t{1} << kRangeBits;

  // `address`: where this host is reached. The shard rows name ShardOwner(address,
  // `process_id`); an empty process id is replaced by a new random one, so two controllers
  // (processes) are never the same owner. `block_size` (clamped to [1, kMaxBlockSize]): how
  // many task ids a range hands out before it is renewed; tests make it small.
  ShardController(persistence::ExecutionStore& store, int32_t shard_count, std::string address,
                  int64_t block_size = kMaxBlockSize, std::string process_id = "");

  class RangeHold;

  // Takes every shard (increments each range id). The one-host case.
  absl::Status AcquireAll();
  // Owns exactly `shards` (ids 1..shard_count) from now on: takes those not owned yet and
  // gives up the others. A shard that cannot be taken stays not owned and the first such
  // error is returned (the next call tries again); the others are applied regardless.
  absl::Status SetOwned(const std::vector<int32_t>& shards);
  // Gives up `shard_id` if it is still owned with `range_id` (a write found the shard taken
  // by another host: until the ring says otherwise, this host no longer owns it).
  void Lost(int32_t shard_id, int64_t range_id);
  // Called (outside the controller's locks) after Lost gave a shard up: on a shared database
  // the ring is handed again at the next heartbeat, so a shard taken by a host whose view
  // was stale (both saw a database restart at different moments) comes back within a
  // heartbeat instead of at the next periodic refresh. Set before the first call.
  void SetOnLost(std::function<void(int32_t shard_id)> on_lost) { on_lost_ = std::move(on_lost); }

  void SetListener(ShardListener* listener);

  int32_t shard_count() const { return shard_count_; }
  // What this controller's shard rows name as their owner (ShardOwner).
  const std::string& owner() const { return owner_; }
  int32_t ShardFor(const std::string& namespace_id, const std::string& workflow_id) const {
    return ShardForWorkflow(namespace_id, workflow_id, shard_count_);
  }
  bool Owns(int32_t shard_id) const { return RangeId(shard_id) != kNotOwned; }
  // The shard's range id, or kNotOwned.
  int64_t RangeId(int32_t shard_id) const;
  std::vector<int32_t> OwnedShards() const;
  // The next task id of the shard, above every id handed out before for it, by this host or
  // any previous owner. When the range's block is used up, renews the range first (a write to
  // the database, which waits for the shard's RangeHolds: never call it holding one of the
  // same shard). kNotOwned, which is no id, when the shard is not owned, was found taken by
  // the renewal (and is given up), or when the renewal failed otherwise (the next call tries
  // again): a commit holding kNotOwned as an id must not be written.
  int64_t NextTaskId(int32_t shard_id);

  // Holds the shard's range id (range_id() of the hold, kNotOwned when the shard is not
  // owned) unchanged by a renewal until the hold is destroyed: take it after the commit's
  // ids are drawn, fence the commit with it, and destroy it once the write is answered.
  // Waits while the shard's range is being renewed. Cheap: a mutex, no database call.
  RangeHold HoldRange(int32_t shard_id);

 private:
  struct Shard {
    std::atomic<int64_t> range_id{kNotOwned};
    // NextTaskId hands out `next` (fetch_add) while it is below `limit`, the end of the
    // current block (kNoIds when not owned). Both are set only with the range id.
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> limit{kNoIds};
    std::mutex renew_mu;  // one renewal of the shard at a time
    // The gate between RangeHolds and a renewal (a reader/writer lock that lets a waiting
    // renewal in before new holds, so a steady stream of commits cannot starve it).
    std::mutex gate_mu;
    std::condition_variable gate_cv;
    int holds = 0;
    bool renewing = false;
  };
  static constexpr int64_t kNoIds = INT64_MIN;

  // Steals each shard in the database (its range id + 1), up to kParallelTakes at once: a
  // host joining a ring of 2,048 shards takes about 500, each a round trip, which one after
  // another took over 30 s on a loaded database. The range ids, in the order of `ids`; the
  // caller holds apply_mu_ and starts the ranges.
  std::vector<absl::StatusOr<int64_t>> TakeRanges(const std::vector<int32_t>& ids);
  std::function<void(int32_t)> on_lost_;
  static constexpr size_t kParallelTakes = 8;
  void Release(int32_t shard_id);
  // Sets the shard's range id and its block of ids, (range_id << kRangeBits) onwards.
  void StartRange(Shard& shard, int64_t range_id);
  // An id of the current block, or kNoIds when it is used up (or the shard not owned).
  static int64_t TryNextTaskId(Shard& shard);
  // NextTaskId once the block is used up.
  int64_t NextTaskIdRenewing(int32_t shard_id);
  // Moves the shard from `range_id` to range_id + 1 (OK and nothing done when the shard
  // no longer has `range_id`); the caller holds the shard's renew_mu.
  absl::Status Renew(int32_t shard_id, int64_t range_id);

  persistence::ExecutionStore& store_;
  const int32_t shard_count_;
  const std::string owner_;
  const int64_t block_size_;
  std::vector<std::unique_ptr<Shard>> shards_;  // index shard_id - 1
  // Serialises AcquireAll, SetOwned, Lost and the database call of a renewal (so a shard
  // given up or taken again meanwhile is never renewed over).
  std::mutex apply_mu_;
  std::atomic<ShardListener*> listener_{nullptr};
};

// See HoldRange. Move-only.
class ShardController::RangeHold {
 public:
  RangeHold(RangeHold&& other) noexcept
      : shard_(std::exchange(other.shard_, nullptr)), range_id_(other.range_id_) {}
  RangeHold& operator=(RangeHold&&) = delete;
  ~RangeHold();

  int64_t range_id() const { return range_id_; }

 private:
  friend class ShardController;
  RangeHold(Shard* shard, int64_t range_id) : shard_(shard), range_id_(range_id) {}

  Shard* shard_;  // null: nothing held
  int64_t range_id_;
};

}  // namespace tock::server::history
