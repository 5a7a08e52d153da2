#include "lib/common/duration.h"

#include <gtest/gtest.h>

namespace tock {
namespace {

TEST(DurationTest, ParsesUnitsAndCombinations) {
  EXPECT_EQ(*ParseHumanDuration("3d"), absl::Hours(72));
  EXPECT_EQ(*ParseHumanDuration("36h"), absl::Hours(36));
  EXPECT_EQ(*ParseHumanDuration("90m"), absl::Minutes(90));
  EXPECT_EQ(*ParseHumanDuration("1d12h"), absl::Hours(36));
  EXPECT_EQ(*ParseHumanDuration("45s"), absl::Seconds(45));
  EXPECT_EQ(*ParseHumanDuration("250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseHumanDuration("1h30m15s"), absl::Seconds(5415));
  EXPECT_EQ(*ParseHumanDuration("-2h"), -absl::Hours(2));
}

TEST(DurationTest, BareNumbersFollowTheUnitAsked) {
  EXPECT_FALSE(ParseHumanDuration("3").ok());
  EXPECT_EQ(*ParseHumanDuration("3", BareNumberUnit::kDays), absl::Hours(72));
  EXPECT_EQ(*ParseHumanDuration("3", BareNumberUnit::kSeconds), absl::Seconds(3));
}

TEST(DurationTest, GarbageIsInvalidArgumentNamingTheText) {
  for (const char* bad : {"", "d", "3x", "h3", "3 d", "1.5h", "--3d", "99999999999999d"}) {
    auto d = ParseHumanDuration(bad);
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(ParseHumanDuration("3x").status().message().find("\"3x\""), std::string::npos);
}

TEST(DurationTest, FormatsTheShortestExactForm) {
  EXPECT_EQ(FormatHumanDuration(absl::ZeroDuration()), "0s");
  EXPECT_EQ(FormatHumanDuration(absl::Hours(48)), "2d");
  EXPECT_EQ(FormatHumanDuration(absl::Hours(36)), "1d12h");
  EXPECT_EQ(FormatHumanDuration(absl::Minutes(90)), "1h30m");
  EXPECT_EQ(FormatHumanDuration(absl::Milliseconds(1500)), "1s500ms");
  EXPECT_EQ(FormatHumanDuration(-absl::Hours(24)), "-1d");
  for (const char* text : {"3d", "1d12h", "23h59m", "30d", "1h1m1s"}) {
    EXPECT_EQ(FormatHumanDuration(*ParseHumanDuration(text)), text);
  }
}

}  // namespace
}  // namespace tock
