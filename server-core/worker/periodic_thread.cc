#include "server-core/worker/periodic_thread.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tock::server::worker {

PeriodicThread::PeriodicThread(absl::Duration interval, std::function<absl::Status()> work,
                               Observers observers)
    : interval_(interval), work_(std::move(work)), observers_(std::move(observers)) {
  thread_ = std::thread([this] { Loop(); });
}

void PeriodicThread::Loop() {
  int failures_in_a_row = 0;
  std::unique_lock lock(mu_);
  while (true) {
    absl::Duration wait = interval_;
    for (int i = 0; i < failures_in_a_row && wait < kMaxBackoff; ++i) wait *= 2;
    if (failures_in_a_row > 0) wait = std::min(wait, std::max(kMaxBackoff, interval_));
    cv_.wait_for(lock, absl::ToChronoMilliseconds(wait), [this] { return stopping_ || woken_; });
    if (stopping_) return;
    if (woken_) failures_in_a_row = 0;
    woken_ = false;
    lock.unlock();
    const absl::Status s = work_();
    if (s.ok()) {
      failures_in_a_row = 0;
    } else {
      ++failures_in_a_row;
      observers_.failures.Increment();
      observers_.logger->Warn(absl::StrCat(observers_.name, " failed; retrying with backoff"),
                              {{"error", s.ToString()},
                               {"failures_in_a_row", absl::StrCat(failures_in_a_row)}});
    }
    lock.lock();
  }
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
