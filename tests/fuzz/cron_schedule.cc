// Cron schedules of StartWorkflowExecution (lib/common/cron_schedule.h): any text is parsed
// or refused with INVALID_ARGUMENT "invalid CronSchedule. ..."; a parsed schedule's next
// activation is later than the instant asked about, and the backoff is never negative.
#include "lib/common/cron_schedule.h"

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view spec = tock::fuzz::AsText(data, size);
  auto schedule = tock::CronSchedule::Parse(spec);
  if (!schedule.ok()) {
    FUZZ_CHECK(schedule.status().code() == absl::StatusCode::kInvalidArgument,
               schedule.status().ToString());
    FUZZ_CHECK(absl::StartsWith(schedule.status().message(), "invalid CronSchedule."),
               schedule.status().message());
    return 0;
  }
  // An ordinary instant, one with a sub-second part, and the night a DST change happens in
  // Europe (2026-10-25) and in the US (2026-03-08).
  const absl::Time instants[] = {
      absl::FromUnixSeconds(1795873062),
      absl::FromUnixSeconds(1795873062) + absl::Milliseconds(999),
      absl::FromUnixSeconds(1792890000),
      absl::FromUnixSeconds(1772953200),
  };
  for (const absl::Time t : instants) {
    const absl::Time next = schedule->Next(t);
    FUZZ_CHECK(next > t, std::string(spec));
    // The runs before it (a run that was scheduled an hour ago, a minute ago, now).
    for (const absl::Duration ago : {absl::Hours(1), absl::Minutes(1), absl::ZeroDuration()}) {
      const absl::Duration backoff = tock::CronBackoff(*schedule, t - ago, t);
      FUZZ_CHECK(backoff >= absl::ZeroDuration(), std::string(spec));
    }
  }
  return 0;
}
