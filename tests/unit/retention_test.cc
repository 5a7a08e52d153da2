// The retention table of seed 002 / SPEC §1.1: absent -> 2 days; 1 to 30 days inclusive;
// everything else INVALID_ARGUMENT starting with the exact sentence the SDK helpers match.
#include "lib/admin/retention.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"

namespace tock::admin {
namespace {

constexpr char kPrefix[] = "A valid retention period is not set on request.";

void ExpectRejected(const absl::Status& s, const std::string& what) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << what;
  EXPECT_TRUE(absl::StartsWith(s.message(), kPrefix)) << what << ": " << s.message();
}

TEST(RetentionTest, ThePrefixConstantIsTheSpecSentence) {
  EXPECT_EQ(kInvalidRetentionMessage, kPrefix);
}

TEST(RetentionTest, AbsentIsTwoDays) {
  absl::StatusOr<absl::Duration> r = ResolveRetention(std::nullopt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, absl::Hours(48));
  EXPECT_EQ(kDefaultRetention, absl::Hours(48));
}

TEST(RetentionTest, OutOfRangeIsRejectedWithTheExactPrefix) {
  struct Case {
    absl::Duration value;
    const char* name;
  };
  for (const Case& c :
       {Case{absl::ZeroDuration(), "0"}, Case{-absl::Hours(24), "-1d"},
        Case{-absl::Seconds(1), "-1s"}, Case{absl::Hours(23) + absl::Minutes(59), "23h59m"},
        Case{absl::Hours(24) - absl::Milliseconds(1), "1d-1ms"},
        Case{absl::Hours(24 * 30) + absl::Seconds(1), "30d+1s"},
        Case{absl::Hours(24 * 31), "31d"}}) {
    ExpectRejected(ValidateRetention(c.value), c.name);
    ExpectRejected(ResolveRetention(c.value).status(), c.name);
  }
}

TEST(RetentionTest, BoundsAndHoursAreAccepted) {
  for (absl::Duration good :
       {absl::Hours(24), absl::Hours(36), absl::Hours(48), absl::Hours(24 * 30)}) {
    EXPECT_TRUE(ValidateRetention(good).ok()) << good;
    absl::StatusOr<absl::Duration> r = ResolveRetention(good);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, good);
  }
}

TEST(RetentionTest, MessageNamesTheRangeAndTheValue) {
  EXPECT_EQ(ValidateRetention(absl::Hours(24 * 31)).message(),
            "A valid retention period is not set on request. Retention must be between 1d and "
            "30d inclusive; got 31d.");
  EXPECT_EQ(ValidateRetention(absl::Hours(23) + absl::Minutes(59)).message(),
            "A valid retention period is not set on request. Retention must be between 1d and "
            "30d inclusive; got 23h59m.");
  EXPECT_EQ(ValidateRetention(absl::ZeroDuration()).message(),
            "A valid retention period is not set on request. Retention must be between 1d and "
            "30d inclusive; got 0s.");
  EXPECT_EQ(ValidateRetention(-absl::Hours(24)).message(),
            "A valid retention period is not set on request. Retention must be between 1d and "
            "30d inclusive; got -1d.");
}

TEST(RetentionTest, ParsesCliText) {
  struct Case {
    const char* text;
    absl::Duration want;
  };
  for (const Case& c :
       {Case{"3", absl::Hours(72)}, Case{"1", absl::Hours(24)}, Case{"30", absl::Hours(24 * 30)},
        Case{"3d", absl::Hours(72)}, Case{"36h", absl::Hours(36)}, Case{"1d12h", absl::Hours(36)},
        Case{"24h", absl::Hours(24)}, Case{"720h", absl::Hours(720)}}) {
    absl::StatusOr<absl::Duration> r = ParseRetention(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status();
    EXPECT_EQ(*r, c.want) << c.text;
  }
}

TEST(RetentionTest, CliTextOutOfRangeOrNotADurationIsRejected) {
  for (const char* bad :
       {"abc", "", "0", "-1", "-1d", "23h", "23h59m", "31", "31d", "721h", "3x", "1.5d", "3 d"}) {
    ExpectRejected(ParseRetention(bad).status(), bad);
  }
  EXPECT_EQ(ParseRetention("abc").status().message(),
            "A valid retention period is not set on request. Retention must be between 1d and "
            "30d inclusive; got \"abc\".");
  EXPECT_EQ(ParseRetention("31").status().message(),
            "A valid retention period is not set on request. Retention must be between 1d and "
            "30d inclusive; got 31d.");
}

}  // namespace
}  // namespace tock::admin
