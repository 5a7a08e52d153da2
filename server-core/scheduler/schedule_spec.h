// A schedule's spec (temporal.api.schedule.v1.ScheduleSpec) as Temporal reads it
// (service/worker/scheduler/spec.go and calendar.go): cron strings and calendar strings are
// compiled into structured calendars, checked with Temporal's messages, and evaluated in the
// spec's time zone (the system's tz database through absl::LoadTimeZone):
//   - a calendar matches when every field matches (day of month AND day of week, unlike
//     classic cron); seconds resolution; years 2000-2100;
//   - across a DST change a skipped local time does not fire, and a time in a repeated hour
//     fires in both copies of the hour;
//   - an interval fires at unix seconds phase + k * interval;
//   - the earliest time of all calendars and intervals, not excluded, within start/end time;
//   - jitter: a deterministic delay in [0, min(jitter, gap to the following time)) from a
//     FarmHash of the nominal time and a seed (Temporal's addJitter, byte for byte).
// Limits (every field bounded): kMaxItems items per repeated field, kMaxCommentBytes per
// comment, kMaxCronStringBytes per cron string.
//
// Thread safety: a CompiledSpec is immutable once built; use it from many threads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "temporal/api/schedule/v1/message.pb.h"

namespace tock::server::scheduler {

namespace sched = temporal::api::schedule::v1;

inline constexpr int kMinCalendarYear = 2000;
inline constexpr int kMaxCalendarYear = 2100;
inline constexpr int kMaxItems = 100;
inline constexpr size_t kMaxCommentBytes = 200;
inline constexpr size_t kMaxCronStringBytes = 1000;

// The spec with calendar and cron strings compiled into structured calendars (and @every
// into intervals, CRON_TZ= into timezone_name), checked. INVALID_ARGUMENT with Temporal's
// message (without the frontend's "Invalid schedule spec: " prefix) otherwise.
absl::StatusOr<sched::ScheduleSpec> CanonicalizeSpec(const sched::ScheduleSpec& spec);

// Ranges of a structured calendar with their defaults filled (end >= start, step >= 1), as
// Temporal's CleanSpec shows them.
void CleanSpec(sched::ScheduleSpec& spec);

struct NextTime {
  absl::Time nominal;  // the matching time, before jitter
  absl::Time next;     // after jitter
};

class CompiledSpec {
 public:
  // Canonicalizes and compiles; INVALID_ARGUMENT as CanonicalizeSpec, or "unknown time zone X".
  static absl::StatusOr<CompiledSpec> Compile(const sched::ScheduleSpec& spec);

  // The earliest time strictly after `after` that the spec matches (nullopt: none, or past
  // end_time or 2100). `jitter_seed` makes the jitter differ between schedules.
  std::optional<NextTime> GetNextTime(const std::string& jitter_seed, absl::Time after) const;

  const sched::ScheduleSpec& canonical() const { return spec_; }
  const absl::TimeZone& zone() const { return zone_; }

 private:
  struct Calendar {
    uint64_t second = 0, minute = 0, hour = 0, day_of_month = 0, month = 0, day_of_week = 0;
    std::vector<int> years;  // empty: every year
    bool YearMatches(int y) const;
    bool Matches(absl::Time t, const absl::TimeZone& zone) const;
    std::optional<absl::Time> Next(absl::Time t, const absl::TimeZone& zone) const;
  };
  static Calendar CompileCalendar(const sched::StructuredCalendarSpec& cal);
  std::optional<absl::Time> RawNext(absl::Time after) const;
  bool Excluded(absl::Time t) const;

  sched::ScheduleSpec spec_;
  absl::TimeZone zone_;
  std::vector<Calendar> calendars_;
  std::vector<Calendar> excludes_;
  std::vector<std::pair<int64_t, int64_t>> intervals_;  // (interval s, phase s)
  std::optional<absl::Time> start_, end_;
  absl::Duration jitter_;
};

// Temporal's addJitter: nominal + (Fingerprint32(MarshalBinary(nominal) + seed) * ms) >> 32 ms,
// ms = max_jitter in whole milliseconds (capped at 2^32 - 1).
absl::Time AddJitter(const std::string& seed, absl::Time nominal, absl::Duration max_jitter);

}  // namespace tock::server::scheduler
