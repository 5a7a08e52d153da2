// Reads that must not fail for a passing reason: the ones made after a change was committed
// to answer its caller (the history a started workflow task carries, an activity's
// scheduled event). If such a read fails, the task is started but nobody gets it, and it
// waits out its timeout; so a read that failed transiently (UNAVAILABLE, DEADLINE_EXCEEDED:
// a busy or flaky database) is tried again, a few times, at once.
#pragma once

#include "absl/status/statusor.h"

namespace tock::server::history {

inline constexpr int kReadAttempts = 4;

template <typename Read>
auto ReadWithRetries(Read read) -> decltype(read()) {
  auto result = read();
  for (int attempt = 1; attempt < kReadAttempts && !result.ok(); ++attempt) {
    const absl::StatusCode code = result.status().code();
    if (code != absl::StatusCode::kUnavailable && code != absl::StatusCode::kDeadlineExceeded) break;
    result = read();
  }
  return result;
}

}  // namespace tock::server::history
