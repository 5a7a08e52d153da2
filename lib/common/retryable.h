// Which status codes a caller may retry (the same call again, after a backoff) expecting a
// different answer: the one predicate of the server's retry loops (batch operations,
// schedules, history replication).
//
// Retryable: UNAVAILABLE (the server or database is unreachable or restarting, a shard is
// moving), DEADLINE_EXCEEDED (no answer in time), RESOURCE_EXHAUSTED (a rate limit or a full
// queue) and ABORTED (a concurrent change: a compare-and-swap lost, a deadlock, a transaction
// to repeat). Each says nothing about the request itself, so the same request can succeed later.
//
// Not retryable: every other code, INTERNAL and UNKNOWN included. Those say that something
// went wrong that a retry is not known to cure (a bug, data that cannot be parsed, an
// exception); retrying them for ever turns one bad record into an endless loop. A call site
// that has a reason to retry more (replication retries CANCELLED, a start deduplicated by
// its request id may retry INTERNAL a bounded number of times) opts in explicitly next to
// its call, saying why.
#pragma once

#include "absl/status/status.h"

namespace tock {

inline bool IsRetryable(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAborted:
      return true;
    default:
      return false;
  }
}

inline bool IsRetryable(const absl::Status& status) { return IsRetryable(status.code()); }

}  // namespace tock
