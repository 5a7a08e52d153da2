// Schedule specs as Temporal evaluates them (server-core/scheduler/schedule_spec.h):
// intervals with phase, structured calendars, cron strings, time zones across DST, jitter
// bounds, start and end times, exclusions, and the messages for bad specs.
#include "server-core/scheduler/schedule_spec.h"

#include <gtest/gtest.h>

#include <limits>

#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::server::scheduler {
namespace {

absl::Time T(const char* rfc3339) {
  absl::Time t;
  std::string err;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &err)) << err;
  return t;
}

std::string S(absl::Time t) { return absl::FormatTime("%Y-%m-%dT%H:%M:%S%Ez", t, absl::UTCTimeZone()); }

CompiledSpec Compile(const sched::ScheduleSpec& spec) {
  absl::StatusOr<CompiledSpec> c = CompiledSpec::Compile(spec);
  EXPECT_TRUE(c.ok()) << c.status();
  return *std::move(c);
}

sched::ScheduleSpec Cron(std::initializer_list<const char*> strings) {
  sched::ScheduleSpec spec;
  for (const char* s : strings) spec.add_cron_string(s);
  return spec;
}

// The next `n` times after `from`.
std::vector<std::string> Times(const CompiledSpec& c, absl::Time from, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::optional<NextTime> next = c.GetNextTime("seed", from);
    if (!next) break;
    out.push_back(S(next->next));
    from = next->next;
  }
  return out;
}

TEST(ScheduleSpecTest, IntervalWithPhase) {
  sched::ScheduleSpec spec;
  auto* iv = spec.add_interval();
  *iv->mutable_interval() = ToProtoDuration(absl::Minutes(90));
  *iv->mutable_phase() = ToProtoDuration(absl::Minutes(15));
  CompiledSpec c = Compile(spec);
  // unix seconds 900 + k * 5400: 00:15, 01:45, 03:15 ... from the epoch.
  EXPECT_EQ(Times(c, T("2026-01-01T00:00:00Z"), 3),
            (std::vector<std::string>{"2026-01-01T00:15:00+00:00", "2026-01-01T01:45:00+00:00",
                                      "2026-01-01T03:15:00+00:00"}));
  // Strictly after: a time on the grid is not its own next.
  EXPECT_EQ(Times(c, T("2026-01-01T00:15:00Z"), 1),
            std::vector<std::string>{"2026-01-01T01:45:00+00:00"});
}

TEST(ScheduleSpecTest, StructuredCalendarMatchesEveryField) {
  sched::ScheduleSpec spec;
  auto* cal = spec.add_structured_calendar();
  cal->add_hour()->set_start(9);
  auto* m = cal->add_minute();
  m->set_start(0);
  m->set_end(30);
  m->set_step(30);
  cal->add_second()->set_start(0);
  auto* dow = cal->add_day_of_week();  // Monday to Friday
  dow->set_start(1);
  dow->set_end(5);
  auto* dom = cal->add_day_of_month();  // every day (an empty list matches none)
  dom->set_start(1);
  dom->set_end(31);
  auto* month = cal->add_month();
  month->set_start(1);
  month->set_end(12);
  CompiledSpec c = Compile(spec);
  // 2026-01-02 is a Friday: 09:00, 09:30, then Monday the 5th.
  EXPECT_EQ(Times(c, T("2026-01-02T08:00:00Z"), 3),
            (std::vector<std::string>{"2026-01-02T09:00:00+00:00", "2026-01-02T09:30:00+00:00",
                                      "2026-01-05T09:00:00+00:00"}));
}

TEST(ScheduleSpecTest, CronStringsAndTheirForms) {
  // Both day fields must match (Temporal, unlike classic cron): the 13th only on a Friday.
  CompiledSpec friday13 = Compile(Cron({"0 0 13 * fri"}));
  EXPECT_EQ(Times(friday13, T("2026-01-01T00:00:00Z"), 2),
            (std::vector<std::string>{"2026-02-13T00:00:00+00:00", "2026-03-13T00:00:00+00:00"}));
  // Seven fields: seconds first, year last.
  CompiledSpec seconds = Compile(Cron({"*/20 0 12 1 jan * 2027"}));
  EXPECT_EQ(Times(seconds, T("2026-06-01T00:00:00Z"), 4),
            (std::vector<std::string>{"2027-01-01T12:00:00+00:00", "2027-01-01T12:00:20+00:00",
                                      "2027-01-01T12:00:40+00:00"}))
      << "only 2027, and then nothing";
  // Predefined and @every with a phase; a comment after #.
  CompiledSpec hourly = Compile(Cron({"@hourly # on the hour"}));
  EXPECT_EQ(Times(hourly, T("2026-01-01T10:10:00Z"), 1),
            std::vector<std::string>{"2026-01-01T11:00:00+00:00"});
  absl::StatusOr<sched::ScheduleSpec> every = CanonicalizeSpec(Cron({"@every 2h/30m"}));
  ASSERT_TRUE(every.ok()) << every.status();
  ASSERT_EQ(every->interval_size(), 1);
  EXPECT_EQ(every->interval(0).interval().seconds(), 7200);
  EXPECT_EQ(every->interval(0).phase().seconds(), 1800);
  EXPECT_EQ(every->structured_calendar_size(), 0);
  // Sunday as 7.
  CompiledSpec sunday = Compile(Cron({"0 0 * * 7"}));
  EXPECT_EQ(Times(sunday, T("2026-01-01T00:00:00Z"), 1),
            std::vector<std::string>{"2026-01-04T00:00:00+00:00"});
  // Canonical form: cron strings are gone, structured calendars with the comment.
  absl::StatusOr<sched::ScheduleSpec> canon = CanonicalizeSpec(Cron({"30 9 * * mon-fri # work"}));
  ASSERT_TRUE(canon.ok());
  EXPECT_EQ(canon->cron_string_size(), 0);
  ASSERT_EQ(canon->structured_calendar_size(), 1);
  EXPECT_EQ(canon->structured_calendar(0).comment(), "work");
  EXPECT_EQ(canon->structured_calendar(0).day_of_week(0).start(), 1);
  EXPECT_EQ(canon->structured_calendar(0).day_of_week(0).end(), 5);
}

TEST(ScheduleSpecTest, TimeZoneAndDaylightSaving) {
  // 02:30 every day in New York: 2026-03-08 has no 02:30 (clocks go 02:00 -> 03:00), so
  // that day does not fire; 2026-11-01 repeats 01:00-02:00, so 01:30 fires twice.
  sched::ScheduleSpec spring = Cron({"30 2 * * *"});
  spring.set_timezone_name("America/New_York");
  CompiledSpec c = Compile(spring);
  EXPECT_EQ(Times(c, T("2026-03-07T00:00:00Z"), 2),
            (std::vector<std::string>{"2026-03-07T07:30:00+00:00", "2026-03-09T06:30:00+00:00"}));
  sched::ScheduleSpec fall = Cron({"CRON_TZ=America/New_York 30 1 * * *"});
  CompiledSpec f = Compile(fall);
  EXPECT_EQ(f.canonical().timezone_name(), "America/New_York");
  EXPECT_EQ(Times(f, T("2026-10-31T12:00:00Z"), 3),
            (std::vector<std::string>{"2026-11-01T05:30:00+00:00", "2026-11-01T06:30:00+00:00",
                                      "2026-11-02T06:30:00+00:00"}));
}

TEST(ScheduleSpecTest, JitterIsBoundedDeterministicAndBelowTheNextTime) {
  sched::ScheduleSpec spec;
  *spec.add_interval()->mutable_interval() = ToProtoDuration(absl::Minutes(1));
  *spec.mutable_jitter() = ToProtoDuration(absl::Hours(1));  // capped by the 1 min gap
  CompiledSpec c = Compile(spec);
  absl::Time from = T("2026-01-01T00:00:00Z");
  bool some_jitter = false;
  for (int i = 0; i < 200; ++i) {
    std::optional<NextTime> n = c.GetNextTime("ns-sched", from);
    ASSERT_TRUE(n.has_value());
    EXPECT_GE(n->next, n->nominal);
    EXPECT_LT(n->next, n->nominal + absl::Minutes(1));
    some_jitter |= n->next != n->nominal;
    std::optional<NextTime> again = c.GetNextTime("ns-sched", from);
    EXPECT_EQ(again->next, n->next) << "deterministic";
    from = n->nominal;
  }
  EXPECT_TRUE(some_jitter);
  EXPECT_NE(c.GetNextTime("a", from)->next, c.GetNextTime("b", from)->next) << "seeded";
}

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // exclude_calendar, still read

TEST(ScheduleSpecTest, StartEndAndExclusions) {
  sched::ScheduleSpec spec = Cron({"0 * * * *"});
  *spec.mutable_start_time() = ToProtoTime(T("2026-01-01T05:00:00Z"));
  *spec.mutable_end_time() = ToProtoTime(T("2026-01-01T08:00:00Z"));
  auto* ex = spec.add_exclude_calendar();
  ex->set_hour("6");
  ex->set_minute("*");
  ex->set_second("*");
  CompiledSpec c = Compile(spec);
  // The start's own second matches; 06:00 excluded; nothing after the end.
  EXPECT_EQ(Times(c, T("2026-01-01T00:00:00Z"), 10),
            (std::vector<std::string>{"2026-01-01T05:00:00+00:00", "2026-01-01T07:00:00+00:00",
                                      "2026-01-01T08:00:00+00:00"}));
}

void ExpectInvalid(const sched::ScheduleSpec& spec, const std::string& message) {
  absl::StatusOr<CompiledSpec> c = CompiledSpec::Compile(spec);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(), message);
}

TEST(ScheduleSpecTest, BadSpecsWithTemporalsMessages) {
  ExpectInvalid(Cron({"* * *"}), "CronString does not have 5-7 fields");
  ExpectInvalid(Cron({"61 * * * *"}), "Minute is not in range [0-59]");
  ExpectInvalid(Cron({"0 5-3 * * *"}), "Hour End is before Start or not in range [0-23]");
  ExpectInvalid(Cron({"0 0 1/ * *"}), "DayOfMonth missing step value");
  ExpectInvalid(Cron({"0 0 * * 1-2-3"}), "DayOfWeek has too many dashes");
  ExpectInvalid(Cron({"0 0 * smarch *"}), "Month is not in range [1-12]");
  ExpectInvalid(Cron({"TZ=Europe/Paris"}), "CronString has time zone but missing fields");
  ExpectInvalid(Cron({"TZ=Europe/Paris 0 0 * * *", "TZ=Asia/Tokyo 0 0 * * *"}),
                "conflicting timezone names");
  ExpectInvalid(Cron({"@every soon"}), "invalid duration \"soon\"");
  sched::ScheduleSpec zone = Cron({"0 0 * * *"});
  zone.set_timezone_name("Mars/Olympus_Mons");
  ExpectInvalid(zone, "unknown time zone Mars/Olympus_Mons");
  sched::ScheduleSpec small;
  *small.add_interval()->mutable_interval() = ToProtoDuration(absl::Milliseconds(500));
  ExpectInvalid(small, "interval is too small");
  sched::ScheduleSpec phase;
  auto* iv = phase.add_interval();
  *iv->mutable_interval() = ToProtoDuration(absl::Minutes(1));
  *iv->mutable_phase() = ToProtoDuration(absl::Minutes(1));
  ExpectInvalid(phase, "phase cannot be greater than Interval");
  sched::ScheduleSpec structured;
  structured.add_structured_calendar()->add_hour()->set_start(24);
  ExpectInvalid(structured, "invalid calendar spec: Hour Start is not in range [0-23]");
  sched::ScheduleSpec many;
  for (int i = 0; i <= kMaxItems; ++i) many.add_cron_string("0 0 * * *");
  ExpectInvalid(many, "a spec holds at most 100 items of a kind");
}

TEST(ScheduleSpecTest, FarTimesEndQuickly) {
  // A calendar of one year from a time far in the past, or anything after 2100: bounded.
  CompiledSpec c = Compile(Cron({"0 0 1 1 * 2099"}));
  std::optional<NextTime> n = c.GetNextTime("s", absl::FromUnixSeconds(-(int64_t{1} << 40)));
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(S(n->next), "2099-01-01T00:00:00+00:00");
  EXPECT_FALSE(c.GetNextTime("s", absl::InfiniteFuture()).has_value());
  EXPECT_FALSE(c.GetNextTime("s", T("2100-06-01T00:00:00Z")).has_value());
  sched::ScheduleSpec spec;
  *spec.add_interval()->mutable_interval() = ToProtoDuration(absl::Hours(24 * 365 * 99));
  *spec.mutable_start_time() = ToProtoTime(absl::FromUnixSeconds(std::numeric_limits<int64_t>::min() / 2));
  CompiledSpec iv = Compile(spec);
  std::optional<NextTime> first = iv.GetNextTime("s", absl::InfinitePast());
  ASSERT_TRUE(first.has_value()) << "from 1970 on";
  EXPECT_GE(first->nominal, absl::UnixEpoch());
}

TEST(ScheduleSpecTest, JitterMatchesTemporalsHash) {
  // AddJitter of a zero jitter is the nominal time; with a jitter it stays below it.
  const absl::Time t = T("2026-01-01T00:00:00Z");
  EXPECT_EQ(AddJitter("x", t, absl::ZeroDuration()), t);
  const absl::Time j = AddJitter("x", t, absl::Seconds(10));
  EXPECT_GE(j, t);
  EXPECT_LT(j, t + absl::Seconds(10));
}

}  // namespace
}  // namespace tock::server::scheduler
