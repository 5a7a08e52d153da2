// A thread of its own that calls `work` every `interval` of real time (the first call after
// one interval) and at once when woken, until it is destroyed. Background work of the server
// (retention scans, archival passes) runs on one each, so a long pass never delays timers.
//
// A pass that fails is counted and logged (never dropped silently), and the next ones wait
// longer: the interval doubled per failure in a row, at most kMaxBackoff; a success, or a
// Wake, resumes the normal pace.
//
// Thread safety: Wake may be called from any thread, also from `work`.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "lib/common/log.h"
#include "lib/common/metrics.h"

namespace tock::server::worker {

class PeriodicThread {
 public:
  static constexpr absl::Duration kMaxBackoff = absl::Minutes(1);

  struct Observers {
    std::string name;                // "retention scan", "archiver pass": for the log
    Logger* logger = &NullLogger();
    metrics::Counter failures;       // one per failed pass
  };

  PeriodicThread(absl::Duration interval, std::function<absl::Status()> work,
                 Observers observers);
  // Stops: waits for a call in progress, makes no other.
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  void Wake();

 private:
  void Loop();

  const absl::Duration interval_;
  const std::function<absl::Status()> work_;
  const Observers observers_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace tock::server::worker
