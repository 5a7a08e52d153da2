// The retention table of seed 002 / SPEC §1.1.
#include "lib/admin/retention.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"

namespace tock::admin {
namespace {

void ExpectRejected(const absl::Status& s) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "A valid retention period is not set on request."))
      << s.message();
}

TEST(RetentionTest, AbsentIsTwoDays) {
  auto r = ResolveRetention(std::nullopt);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, absl::Hours(48));
}

TEST(RetentionTest, OutOfRangeIsRejectedWithTheExactMessage) {
  for (absl::Duration bad : {absl::ZeroDuration(), -absl::Hours(24), absl::Hours(23) + absl::Minutes(59),
                             absl::Hours(24 * 30) + absl::Seconds(1), absl::Hours(24 * 31)}) {
    ExpectRejected(ResolveRetention(bad).status());
    ExpectRejected(ValidateRetention(bad));
  }
}

TEST(RetentionTest, BoundsAndHoursAreAccepted) {
  for (absl::Duration good : {absl::Hours(24), absl::Hours(36), absl::Hours(24 * 30)}) {
    auto r = ResolveRetention(good);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, good);
  }
}

TEST(RetentionTest, MessageNamesRangeAndValue) {
  absl::Status s = ValidateRetention(absl::Hours(24 * 31));
  EXPECT_EQ(s.message(),
            "A valid retention period is not set on request. Retention must be between 1d and "
            "30d inclusive; got 31d.");
}

TEST(RetentionTest, ParsesCliText) {
  EXPECT_EQ(*ParseRetention("3"), absl::Hours(72));
  EXPECT_EQ(*ParseRetention("3d"), absl::Hours(72));
  EXPECT_EQ(*ParseRetention("36h"), absl::Hours(36));
  EXPECT_EQ(*ParseRetention("1d12h"), absl::Hours(36));
  ExpectRejected(ParseRetention("abc").status());
  ExpectRejected(ParseRetention("0").status());
  ExpectRejected(ParseRetention("23h").status());
  ExpectRejected(ParseRetention("31").status());
  EXPECT_NE(ParseRetention("abc").status().message().find("\"abc\""), std::string::npos);
}

}  // namespace
}  // namespace tock::admin
