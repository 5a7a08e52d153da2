#include "server-core/worker/periodic_thread.h"

namespace tock::server::worker {

PeriodicThread::PeriodicThread(absl::Duration interval, std::function<void()> work)
    : interval_(interval), work_(std::move(work)) {
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait_for(lock, absl::ToChronoMilliseconds(interval_),
                   [this] { return stopping_ || woken_; });
      if (stopping_) return;
      woken_ = false;
      lock.unlock();
      work_();
      lock.lock();
    }
  });
}

PeriodicThread::~PeriodicThread() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void PeriodicThread::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

}  // namespace tock::server::worker
