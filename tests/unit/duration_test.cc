// Human durations (lib/common/duration.h): what operators type and what the CLI prints.
#include "lib/common/duration.h"

#include <gtest/gtest.h>

#include <string>

namespace tock {
namespace {

TEST(DurationTest, ParsesEachUnit) {
  EXPECT_EQ(*ParseHumanDuration("3d"), absl::Hours(72));
  EXPECT_EQ(*ParseHumanDuration("36h"), absl::Hours(36));
  EXPECT_EQ(*ParseHumanDuration("90m"), absl::Minutes(90));
  EXPECT_EQ(*ParseHumanDuration("45s"), absl::Seconds(45));
  EXPECT_EQ(*ParseHumanDuration("250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseHumanDuration("0s"), absl::ZeroDuration());
}

TEST(DurationTest, ParsesCombinations) {
  EXPECT_EQ(*ParseHumanDuration("1d12h"), absl::Hours(36));
  EXPECT_EQ(*ParseHumanDuration("1h30m15s"), absl::Seconds(5415));
  EXPECT_EQ(*ParseHumanDuration("2s250ms"), absl::Milliseconds(2250));
  // Units may repeat and come in any order; they add up.
  EXPECT_EQ(*ParseHumanDuration("30m1h"), absl::Minutes(90));
}

TEST(DurationTest, LeadingMinusNegatesTheWholeValue) {
  EXPECT_EQ(*ParseHumanDuration("-2h"), -absl::Hours(2));
  EXPECT_EQ(*ParseHumanDuration("-1d12h"), -absl::Hours(36));
  EXPECT_EQ(*ParseHumanDuration("-3", BareNumberUnit::kDays), -absl::Hours(72));
}

TEST(DurationTest, BareNumbersFollowTheUnitAsked) {
  absl::StatusOr<absl::Duration> none = ParseHumanDuration("3", BareNumberUnit::kNone);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseHumanDuration("3").status().code(), absl::StatusCode::kInvalidArgument)
      << "kNone is the default";
  EXPECT_EQ(*ParseHumanDuration("3", BareNumberUnit::kDays), absl::Hours(72));
  EXPECT_EQ(*ParseHumanDuration("3", BareNumberUnit::kSeconds), absl::Seconds(3));
  EXPECT_EQ(*ParseHumanDuration("0", BareNumberUnit::kDays), absl::ZeroDuration());
  // A unit always wins over the bare-number rule.
  EXPECT_EQ(*ParseHumanDuration("3h", BareNumberUnit::kDays), absl::Hours(3));
  EXPECT_EQ(*ParseHumanDuration("3m", BareNumberUnit::kSeconds), absl::Minutes(3));
}

TEST(DurationTest, GarbageIsInvalidArgument) {
  for (const char* bad : {"", "-", "d", "3x", "h3", "3 d", " 3d", "3d ", "1.5h", "--3d", "3D",
                          "1d2", "ms", "3dd", "99999999999999d", "9999999999999"}) {
    for (BareNumberUnit bare :
         {BareNumberUnit::kNone, BareNumberUnit::kDays, BareNumberUnit::kSeconds}) {
      absl::StatusOr<absl::Duration> d = ParseHumanDuration(bad, bare);
      EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument)
          << "\"" << bad << "\" bare=" << static_cast<int>(bare);
    }
  }
}

TEST(DurationTest, ErrorNamesTheTextAndTheFormat) {
  EXPECT_EQ(ParseHumanDuration("3x").status().message(),
            "invalid duration \"3x\": use a whole number with a unit d, h, m, s or ms, for "
            "example 3d, 36h, 90m or 1d12h");
}

TEST(DurationTest, FormatsTheShortestExactForm) {
  EXPECT_EQ(FormatHumanDuration(absl::ZeroDuration()), "0s");
  EXPECT_EQ(FormatHumanDuration(absl::Hours(48)), "2d");
  EXPECT_EQ(FormatHumanDuration(absl::Hours(36)), "1d12h");
  EXPECT_EQ(FormatHumanDuration(absl::Minutes(90)), "1h30m");
  EXPECT_EQ(FormatHumanDuration(absl::Seconds(259200)), "3d");
  EXPECT_EQ(FormatHumanDuration(absl::Hours(24 * 30) + absl::Seconds(1)), "30d1s");
  EXPECT_EQ(FormatHumanDuration(absl::Milliseconds(1500)), "1s500ms");
  EXPECT_EQ(FormatHumanDuration(absl::Milliseconds(250)), "250ms");
  EXPECT_EQ(FormatHumanDuration(-absl::Hours(24)), "-1d");
  EXPECT_EQ(FormatHumanDuration(-absl::Minutes(90)), "-1h30m");
}

TEST(DurationTest, SubMillisecondRemaindersStayExact) {
  EXPECT_EQ(FormatHumanDuration(absl::Microseconds(1500)), "1ms500us");
  EXPECT_EQ(FormatHumanDuration(absl::Seconds(1) + absl::Nanoseconds(5)), "1s5ns");
  EXPECT_EQ(FormatHumanDuration(absl::Nanoseconds(1500)), "1us500ns");
  EXPECT_EQ(FormatHumanDuration(absl::InfiniteDuration()), "inf");
  EXPECT_EQ(FormatHumanDuration(-absl::InfiniteDuration()), "-inf");
}

TEST(DurationTest, FormatAndParseRoundTrip) {
  for (const char* text :
       {"3d", "1d12h", "23h59m", "30d", "1h1m1s", "250ms", "1d1h1m1s1ms", "-2h", "0s"}) {
    absl::StatusOr<absl::Duration> d = ParseHumanDuration(text);
    ASSERT_TRUE(d.ok()) << text << ": " << d.status();
    EXPECT_EQ(FormatHumanDuration(*d), text);
  }
  // Non-canonical spellings come back in the shortest form.
  EXPECT_EQ(FormatHumanDuration(*ParseHumanDuration("36h")), "1d12h");
  EXPECT_EQ(FormatHumanDuration(*ParseHumanDuration("90m")), "1h30m");
  EXPECT_EQ(FormatHumanDuration(*ParseHumanDuration("3", BareNumberUnit::kDays)), "3d");
  EXPECT_EQ(FormatHumanDuration(*ParseHumanDuration("3600", BareNumberUnit::kSeconds)), "1h");
}

}  // namespace
}  // namespace tock
