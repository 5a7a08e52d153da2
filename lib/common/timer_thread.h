// One thread that runs callbacks at given times: long-poll expiries, durable-timer wake-ups.
// Callbacks run on that thread, one at a time, so they must be short (hand work elsewhere).
//
// Time comes from the Clock; the thread sleeps in real time until the earliest deadline
// (or until Wake() after a ManualClock moved).
//
// Thread safety: every method may be called from any thread, including from a callback.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "lib/common/clock.h"

namespace tock {

class TimerThread {
 public:
  explicit TimerThread(Clock& clock);
  ~TimerThread();  // stops; pending callbacks are dropped

  using Id = uint64_t;

  // Runs `callback` at or after `when`. Returns an id for Cancel.
  Id Schedule(absl::Time when, std::function<void()> callback);

  // True when the callback was still pending (it will not run).
  bool Cancel(Id id);

  // Re-reads the clock (for tests that move a ManualClock).
  void Wake();

 private:
  void Loop();

  Clock& clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  Id next_id_ = 1;
  std::multimap<absl::Time, Id> queue_;
  std::map<Id, std::pair<absl::Time, std::function<void()>>> pending_;
  std::thread thread_;
};

}  // namespace tock
