// Time as a seam. Only real_clock.cc reads the system time; tests drive a ManualClock.
#pragma once

#include <mutex>

#include "absl/time/time.h"

namespace tock {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

// The system's wall clock. Thread-safe.
Clock& RealClock();

// A clock that moves only when told to. Thread-safe.
class ManualClock : public Clock {
 public:
  explicit ManualClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}
  absl::Time Now() const override {
    std::lock_guard lock(mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    std::lock_guard lock(mu_);
    now_ += d;
  }
  void Set(absl::Time t) {
    std::lock_guard lock(mu_);
    now_ = t;
  }

 private:
  mutable std::mutex mu_;
  absl::Time now_;
};

// Another clock plus an offset that only grows: the server's clock when time skipping is
// enabled (a dev server lets tests make retention pass). Thread-safe.
class OffsetClock : public Clock {
 public:
  explicit OffsetClock(Clock& base) : base_(base) {}
  absl::Time Now() const override {
    std::lock_guard lock(mu_);
    return base_.Now() + offset_;
  }
  void Advance(absl::Duration d) {
    std::lock_guard lock(mu_);
    offset_ += d;
  }

 private:
  Clock& base_;
  mutable std::mutex mu_;
  absl::Duration offset_;
};

}  // namespace tock
