#include "server-core/timers/retry_policy.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tock::server::timers {
namespace {

std::string Name(FieldNaming naming, const char* proto, const char* json) {
  return naming == FieldNaming::kProto ? absl::StrCat("retry_policy.", proto)
                                       : absl::StrCat("retryPolicy.", json);
}

// A protobuf Duration as absl; nullopt when it is not a valid one (nanos out of range or of
// the other sign than seconds).
std::optional<absl::Duration> DurationOf(const google::protobuf::Duration& d) {
  if (d.nanos() <= -1'000'000'000 || d.nanos() >= 1'000'000'000) return std::nullopt;
  if ((d.seconds() > 0 && d.nanos() < 0) || (d.seconds() < 0 && d.nanos() > 0)) return std::nullopt;
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

// "must be between LOW and HIGH" for a duration field; OK when set and in range or unset (0).
absl::Status CheckDuration(const google::protobuf::Duration& d, absl::Duration low,
                           absl::Duration high, const std::string& field) {
  std::optional<absl::Duration> v = DurationOf(d);
  if (!v.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is not a valid duration"));
  }
  if (*v == absl::ZeroDuration()) return absl::OkStatus();
  if (*v < low || *v > high) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must be between ", absl::FormatDuration(low), " and ",
                     absl::FormatDuration(high), " (0 or unset: the default), got ",
                     absl::FormatDuration(*v)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateRetryPolicy(const tock::timer::v1::RetryPolicy& p, FieldNaming naming) {
  if (p.max_attempts() < 0 || p.max_attempts() > kMaxAttemptsLimit) {
    return absl::InvalidArgumentError(absl::StrCat(
        Name(naming, "max_attempts", "maxAttempts"), " must be between 0 and ", kMaxAttemptsLimit,
        " (0: no limit but the duration), got ", p.max_attempts()));
  }
  if (absl::Status s = CheckDuration(p.max_attempts_duration(), absl::Milliseconds(1),
                                     kMaxAttemptsDurationLimit,
                                     Name(naming, "max_attempts_duration", "maxAttemptsDuration"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckDuration(p.initial_interval(), kMinInitialInterval,
                                     kMaxInitialInterval,
                                     Name(naming, "initial_interval", "initialInterval"));
      !s.ok()) {
    return s;
  }
  const double m = p.backoff_multiplier();
  if (std::isnan(m) || (m != 0 && (m < 1 || m > kMaxBackoffMultiplier))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must be between 1 and %g (0 or unset: the default, 2), got %g",
        Name(naming, "backoff_multiplier", "backoffMultiplier"), kMaxBackoffMultiplier, m));
  }
  if (absl::Status s = CheckDuration(p.max_interval(), kMinInitialInterval, kMaxIntervalLimit,
                                     Name(naming, "max_interval", "maxInterval"));
      !s.ok()) {
    return s;
  }
  const RetrySettings e = EffectiveRetry(p);
  if (p.has_max_interval() && *DurationOf(p.max_interval()) != absl::ZeroDuration() &&
      e.max_interval < e.initial_interval) {
    return absl::InvalidArgumentError(absl::StrCat(
        Name(naming, "max_interval", "maxInterval"), " must not be shorter than ",
        Name(naming, "initial_interval", "initialInterval"), " (",
        absl::FormatDuration(e.initial_interval), "), got ", absl::FormatDuration(e.max_interval)));
  }
  return absl::OkStatus();
}

RetrySettings EffectiveRetry(const tock::timer::v1::RetryPolicy& p) {
  RetrySettings s;
  s.max_attempts = std::max(0, p.max_attempts());
  auto set = [](const google::protobuf::Duration& d, absl::Duration& out) {
    std::optional<absl::Duration> v = DurationOf(d);
    if (v.has_value() && *v > absl::ZeroDuration()) out = *v;
  };
  set(p.max_attempts_duration(), s.max_attempts_duration);
  set(p.initial_interval(), s.initial_interval);
  if (p.backoff_multiplier() >= 1) s.backoff_multiplier = p.backoff_multiplier();
  s.max_interval = std::max(s.max_interval, s.initial_interval);  // the default's floor
  set(p.max_interval(), s.max_interval);
  return s;
}

std::optional<absl::Duration> NextRetryDelay(const RetrySettings& s, int32_t attempts,
                                             absl::Time first_attempt_at, absl::Time now,
                                             double jitter) {
  if (attempts < 1) attempts = 1;
  if (s.max_attempts > 0 && attempts >= s.max_attempts) return std::nullopt;
  const absl::Duration remaining = s.max_attempts_duration - (now - first_attempt_at);
  if (remaining <= absl::ZeroDuration()) return std::nullopt;
  // initial * multiplier^n in floating point seconds, capped before it can overflow.
  const double n = attempts - 1;
  const double grown = absl::ToDoubleSeconds(s.initial_interval) * std::pow(s.backoff_multiplier, n);
  absl::Duration d = std::isfinite(grown) && grown < absl::ToDoubleSeconds(s.max_interval)
                         ? absl::Seconds(grown)
                         : s.max_interval;
  d = std::min(d, remaining);
  // Not enough time left for a meaningful retry (the seed's rule).
  if (d < s.initial_interval) return std::nullopt;
  jitter = std::clamp(jitter, 0.0, 1.0);
  return d * 0.8 + d * (0.2 * jitter);
}

}  // namespace tock::server::timers
