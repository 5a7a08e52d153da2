// A timer's retry policy (seed 003's backoff, Cadence-derived, reference/scaleout.md §3.3):
// after a failed attempt, the delay before retry n (n = 0 after the first attempt) is
// initial_interval * backoff_multiplier^n, capped at max_interval and at what is left of
// max_attempts_duration (counted from the first attempt); no retry once max_attempts attempts
// were made, once the duration is spent, or when what is left of it is shorter than
// initial_interval; the delay d is then jittered to 0.8 d + rand[0, 0.2 d), so that timers
// failing together do not all retry at the same instant.
//
// Defaults (a field unset or 0): max_attempts no limit (the duration bounds the retries),
// max_attempts_duration 1 h, initial_interval 1 s, backoff_multiplier 2.0, max_interval
// 5 min (or initial_interval, when that is longer).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tock/timer/v1/service.pb.h"

namespace tock::server::timers {

// How messages name a field: as the proto does (retry_policy.max_attempts, the gRPC API and
// the CLI) or as the HTTP/JSON API does (retryPolicy.maxAttempts).
enum class FieldNaming { kProto, kJson };

struct RetrySettings {
  int32_t max_attempts = 0;  // 0: no limit
  absl::Duration max_attempts_duration = absl::Hours(1);
  absl::Duration initial_interval = absl::Seconds(1);
  double backoff_multiplier = 2.0;
  absl::Duration max_interval = absl::Minutes(5);
};

// Limits of the fields (checked by ValidateRetryPolicy).
inline constexpr int32_t kMaxAttemptsLimit = 1000;
inline constexpr absl::Duration kMaxAttemptsDurationLimit = absl::Hours(24 * 7);
inline constexpr absl::Duration kMinInitialInterval = absl::Milliseconds(10);
inline constexpr absl::Duration kMaxInitialInterval = absl::Hours(1);
inline constexpr double kMaxBackoffMultiplier = 100;
inline constexpr absl::Duration kMaxIntervalLimit = absl::Hours(24);

// INVALID_ARGUMENT naming the first field out of its limits (and the limit); OK otherwise.
absl::Status ValidateRetryPolicy(const tock::timer::v1::RetryPolicy& policy,
                                 FieldNaming naming = FieldNaming::kProto);

// The policy with its defaults filled in (the policy must be valid).
RetrySettings EffectiveRetry(const tock::timer::v1::RetryPolicy& policy);

// After `attempts` attempts (>= 1, all failed), the first of which started at
// `first_attempt_at`: the delay from `now` before the next one, or nullopt when the policy
// allows no more. `jitter` is a uniform draw from [0, 1) (a parameter so tests can pin it).
std::optional<absl::Duration> NextRetryDelay(const RetrySettings& settings, int32_t attempts,
                                             absl::Time first_attempt_at, absl::Time now,
                                             double jitter);

}  // namespace tock::server::timers
