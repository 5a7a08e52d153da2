// Store reads that must not fail for a passing reason. A read that failed transiently
// (UNAVAILABLE, DEADLINE_EXCEEDED: a busy or flaky database) is tried again, a few times,
// at once; a read changes nothing, so trying it again is always safe. Used where a failed
// read costs more than its caller's retry would: the reads made after a change was committed
// to answer its caller (the history a started workflow task carries, an activity's scheduled
// event: if such a read fails, the task is started but nobody gets it, and it waits out its
// timeout), and the namespace reads every worker makes at start-up (an SDK worker does not
// retry its DescribeNamespace: one transient failure stops it from starting).
#pragma once

#include "absl/status/statusor.h"

namespace tock::persistence {

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

}  // namespace tock::persistence
