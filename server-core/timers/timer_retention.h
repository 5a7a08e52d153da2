// How long a finished timer (SUCCEEDED, FAILED or DELETED) stays readable: its namespace's
// retention (1 to 30 days, the same as its closed workflows'), after which the shard's owner
// removes it (TimerEngine). Without this the timers table only grew.
//
// The retention is looked up per namespace id and kept for a minute (an update of the
// namespace's retention applies to timers finishing after that). A lookup that fails is not
// kept and is not taken for a default (a 30-day namespace's timers would go after two days,
// review P1-11): the timer is due again after kRetryAfterError, when the engine looks again
// (TimerEngine::PlanRemoval reads the retention again before it removes anything). Only a
// namespace that is gone (NOT_FOUND) gets the default of two days, rather than keeping its
// timers forever.
//
// Thread safety: any thread.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/common/clock.h"

namespace tock::server::timers {

class TimerRetention {
 public:
  using Lookup = std::function<absl::StatusOr<absl::Duration>(const std::string& namespace_id)>;
  static constexpr absl::Duration kDefault = absl::Hours(48);
  static constexpr absl::Duration kCached = absl::Minutes(1);
  static constexpr absl::Duration kRetryAfterError = absl::Minutes(1);

  TimerRetention(Lookup lookup, Clock& clock) : lookup_(std::move(lookup)), clock_(clock) {}

  // When a timer of the namespace that finished at `finished` is next due: the end of its
  // retention, or now + kRetryAfterError when the retention cannot be read now.
  absl::Time DueAfterFinish(const std::string& namespace_id, absl::Time finished, absl::Time now) {
    absl::StatusOr<absl::Duration> retention = Of(namespace_id);
    return retention.ok() ? finished + *retention : now + kRetryAfterError;
  }

  // The namespace's retention; the lookup's error when it failed (not kept: the next call
  // looks again).
  absl::StatusOr<absl::Duration> Of(const std::string& namespace_id) {
    const absl::Time now = clock_.Now();
    {
      std::lock_guard lock(mu_);
      auto it = cache_.find(namespace_id);
      if (it != cache_.end() && now < it->second.second) return it->second.first;
    }
    absl::StatusOr<absl::Duration> found = lookup_(namespace_id);
    if (!found.ok() && found.status().code() != absl::StatusCode::kNotFound) return found.status();
    // Gone, or a retention of zero (none set): the default.
    const absl::Duration d = found.ok() && *found > absl::ZeroDuration() ? *found : kDefault;
    std::lock_guard lock(mu_);
    if (cache_.size() > 10'000) cache_.clear();  // bounded: namespaces are few
    cache_[namespace_id] = {d, now + kCached};
    return d;
  }

 private:
  Lookup lookup_;
  Clock& clock_;
  std::mutex mu_;
  std::unordered_map<std::string, std::pair<absl::Duration, absl::Time>> cache_;
};

}  // namespace tock::server::timers
