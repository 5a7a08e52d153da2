#include "server-core/membership/ring_applier.h"

#include <utility>

#include "lib/common/named_thread.h"

namespace tock::server::membership {

RingApplier::RingApplier(Apply apply) : apply_(std::move(apply)) {
  thread_ = NamedThread("ring applier", [this] { Loop(); });
}

RingApplier::~RingApplier() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RingApplier::Offer(std::shared_ptr<const HashRing> ring) {
  {
    std::lock_guard lock(mu_);
    pending_ = std::move(ring);
  }
  wake_.notify_all();
}

void RingApplier::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || pending_ != nullptr; });
    if (stopping_) return;
    std::shared_ptr<const HashRing> ring = std::exchange(pending_, nullptr);
    lock.unlock();
    apply_(std::move(ring));
    lock.lock();
  }
}

}  // namespace tock::server::membership
