// Acts on new rings on a thread of its own, so that the membership heartbeat never waits
// for it. Acting on a ring means taking and releasing shards, which can take many seconds
// (on PostgreSQL each take waits for the previous owner's transactions); done on the
// heartbeat thread, it kept this host from heartbeating and made the others drop it from
// their rings, which moved its shards again.
//
// Rings offered while one is being applied collapse into the newest: an older ring is never
// applied after a newer one, and a burst of changes costs one apply.
//
// Thread safety: Offer from any thread; `apply` runs on the applier's thread, one call at a
// time. The destructor stops the thread after the apply in progress (a ring still waiting
// is dropped: the process is stopping).
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "server-core/membership/hash_ring.h"

namespace tock::server::membership {

class RingApplier {
 public:
  using Apply = std::function<void(std::shared_ptr<const HashRing>)>;

  explicit RingApplier(Apply apply);
  ~RingApplier();
  RingApplier(const RingApplier&) = delete;
  RingApplier& operator=(const RingApplier&) = delete;

  // Hands `ring` over and returns at once.
  void Offer(std::shared_ptr<const HashRing> ring);

 private:
  void Loop();

  const Apply apply_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::shared_ptr<const HashRing> pending_;  // the newest ring not yet applied
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tock::server::membership
