// A thread of its own that calls `work` every `interval` of real time (the first call after
// one interval) and at once when woken, until it is destroyed. Background work of the server
// (retention scans, archival passes) runs on one each, so a long pass never delays timers.
//
// Thread safety: Wake may be called from any thread, also from `work`.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace tock::server::worker {

class PeriodicThread {
 public:
  PeriodicThread(absl::Duration interval, std::function<void()> work);
  // Stops: waits for a call in progress, makes no other.
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  void Wake();

 private:
  const absl::Duration interval_;
  const std::function<void()> work_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace tock::server::worker
