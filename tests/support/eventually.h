// Polls a condition until it holds or a deadline of real time passes: for tests waiting on
// other threads or processes (deadlines, not timing claims).
#pragma once

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tock::testing {

// Whether `done()` held within `timeout` (checked every 5 ms, and once more at the end).
template <typename F>
bool Eventually(F done, absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return done();
}

}  // namespace tock::testing
