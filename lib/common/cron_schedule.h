// Cron schedules of workflows (StartWorkflowExecution.cron_schedule), read as Temporal reads
// them (robfig/cron's standard parser): five fields `minute hour day-of-month month
// day-of-week` with `*`, `?`, lists, ranges, steps and month/day names; the descriptors
// @yearly @annually @monthly @weekly @daily @midnight @hourly and `@every <duration>`; an
// optional `CRON_TZ=<zone> ` (or `TZ=`) prefix, UTC otherwise. When both day fields are
// restricted a day matches either (classic cron).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tock {

class CronSchedule {
 public:
  // INVALID_ARGUMENT "invalid CronSchedule." with what is wrong after it.
  static absl::StatusOr<CronSchedule> Parse(std::string_view spec);

  // The first activation strictly after `t` (whole seconds; minutes for field schedules);
  // absl::InfiniteFuture() when there is none within five years (Feb 30).
  absl::Time Next(absl::Time t) const;

 private:
  CronSchedule() = default;
  bool DayMatches(const absl::CivilDay& d) const;

  absl::Duration every_ = absl::ZeroDuration();  // @every: a constant delay
  uint64_t minutes_ = 0;                         // bit per allowed value
  uint64_t hours_ = 0;
  uint64_t days_of_month_ = 0;
  uint64_t months_ = 0;
  uint64_t days_of_week_ = 0;
  bool dom_star_ = false;  // `*` or `?`: only the other day field decides
  bool dow_star_ = false;
  absl::TimeZone zone_ = absl::UTCTimeZone();
};

// Temporal's GetBackoffForNextSchedule: how long the next run waits, from `now`, for the
// first activation after the current run's `scheduled` time that is not before `now`,
// rounded up to whole seconds; InfiniteDuration() when there is none.
absl::Duration CronBackoff(const CronSchedule& schedule, absl::Time scheduled, absl::Time now);

}  // namespace tock
