// Cron schedules (lib/common/cron_schedule.h) as robfig/cron's standard parser reads them,
// and Temporal's backoff to the next activation.
#include "lib/common/cron_schedule.h"

#include <gtest/gtest.h>

namespace tock {
namespace {

absl::Time At(const char* rfc3339) {
  absl::Time t;
  std::string err;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &err)) << err;
  return t;
}

absl::Time Next(const char* spec, const char* after) {
  auto s = CronSchedule::Parse(spec);
  EXPECT_TRUE(s.ok()) << spec << ": " << s.status();
  return s.ok() ? s->Next(At(after)) : absl::InfinitePast();
}

TEST(CronSchedule, FieldsRangesStepsAndNames) {
  EXPECT_EQ(Next("*/15 * * * *", "2026-11-22T10:07:30Z"), At("2026-11-22T10:15:00Z"));
  EXPECT_EQ(Next("* * * * *", "2026-11-22T10:07:00Z"), At("2026-11-22T10:08:00Z"));
  // 2026-11-22 is a Sunday.
  EXPECT_EQ(Next("0 9 * * MON-FRI", "2026-11-20T10:00:00Z"), At("2026-11-23T09:00:00Z"));
  EXPECT_EQ(Next("0 9 * * 0", "2026-11-20T10:00:00Z"), At("2026-11-22T09:00:00Z"));
  EXPECT_EQ(Next("30 2 1,15 * ?", "2026-11-22T00:00:00Z"), At("2026-12-01T02:30:00Z"));
  EXPECT_EQ(Next("0 0 1 jan *", "2026-11-22T00:00:00Z"), At("2027-01-01T00:00:00Z"));
  EXPECT_EQ(Next("5/20 * * * *", "2026-11-22T10:46:00Z"), At("2026-11-22T11:05:00Z"));
  EXPECT_EQ(Next("0 12-14/2 * * *", "2026-11-22T12:00:00Z"), At("2026-11-22T14:00:00Z"));
}

TEST(CronSchedule, BothDayFieldsRestrictedMatchEither) {
  // The 13th or any Friday: Friday 27 November comes before 13 December.
  EXPECT_EQ(Next("0 0 13 * 5", "2026-11-22T00:00:00Z"), At("2026-11-27T00:00:00Z"));
  // With the day of week `*`, only the day of month decides.
  EXPECT_EQ(Next("0 0 13 * *", "2026-11-22T00:00:00Z"), At("2026-12-13T00:00:00Z"));
}

TEST(CronSchedule, DescriptorsEveryAndZones) {
  EXPECT_EQ(Next("@yearly", "2026-11-22T10:00:00Z"), At("2027-01-01T00:00:00Z"));
  EXPECT_EQ(Next("@hourly", "2026-11-22T10:00:00Z"), At("2026-11-22T11:00:00Z"));
  EXPECT_EQ(Next("@weekly", "2026-11-22T10:00:00Z"), At("2026-11-29T00:00:00Z"));
  EXPECT_EQ(Next("@every 90m", "2026-11-22T10:00:00.500Z"), At("2026-11-22T11:30:00Z"));
  EXPECT_EQ(Next("@every 1h30m10s", "2026-11-22T10:00:00Z"), At("2026-11-22T11:30:10Z"));
  EXPECT_EQ(Next("CRON_TZ=America/New_York 0 9 * * *", "2026-11-22T00:00:00Z"),
            At("2026-11-22T14:00:00Z"));
}

TEST(CronSchedule, ImpossibleDatesHaveNoNext) {
  EXPECT_EQ(Next("0 0 30 2 *", "2026-11-22T00:00:00Z"), absl::InfiniteFuture());
}

TEST(CronSchedule, BadSpecsNameTheProblem) {
  for (const char* bad : {"", "* * *", "61 * * * *", "* 24 * * *", "0 0 0 * *", "0 0 * 13 *",
                          "0 0 * * 8", "@fortnightly", "@every", "@every -5m", "*/0 * * * *",
                          "a * * * *", "5-1 * * * *", "CRON_TZ=Mars/Olympus 0 * * * *"}) {
    auto s = CronSchedule::Parse(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().message().rfind("invalid CronSchedule.", 0), 0u) << s.status();
  }
}

TEST(CronSchedule, BackoffIsToTheFirstActivationNotBeforeNow) {
  auto hourly = *CronSchedule::Parse("0 * * * *");
  // The run scheduled at 10:00 closes at 12:30: 11:00 and 12:00 are gone, 13:00 is next.
  EXPECT_EQ(CronBackoff(hourly, At("2026-11-22T10:00:00Z"), At("2026-11-22T12:30:00Z")),
            absl::Minutes(30));
  // Before the scheduled time: wait for it, rounded up to whole seconds.
  EXPECT_EQ(CronBackoff(hourly, At("2026-11-22T10:00:00Z"), At("2026-11-22T09:59:59.200Z")),
            absl::Seconds(1));
  EXPECT_EQ(CronBackoff(*CronSchedule::Parse("0 0 30 2 *"), At("2026-11-22T10:00:00Z"),
                        At("2026-11-22T10:00:00Z")),
            absl::InfiniteDuration());
}

}  // namespace
}  // namespace tock
