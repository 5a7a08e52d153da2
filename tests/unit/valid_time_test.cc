// Valid-time versions of namespace metadata (seed 004, SPEC §1.3).
#include "lib/admin/valid_time.h"

#include <gtest/gtest.h>

namespace tock::admin {
namespace {

const absl::Time kT = absl::FromUnixMillis(1'763'800'000'000);

TEST(ValidTimeTest, NowWhenLaterThanThePreviousVersion) {
  EXPECT_EQ(NextValidFrom(kT, kT + absl::Seconds(5)), kT + absl::Seconds(5));
}

TEST(ValidTimeTest, SameMillisecondGetsPlusOne) {
  EXPECT_EQ(NextValidFrom(kT, kT), kT + absl::Milliseconds(1));
  EXPECT_EQ(NextValidFrom(kT, kT + absl::Microseconds(999)), kT + absl::Milliseconds(1));
}

TEST(ValidTimeTest, ClockGoingBackStillMovesForward) {
  EXPECT_EQ(NextValidFrom(kT, kT - absl::Hours(1)), kT + absl::Milliseconds(1));
}

TEST(ValidTimeTest, TruncatesToMilliseconds) {
  EXPECT_EQ(TruncateToMillis(kT + absl::Microseconds(1500)), kT + absl::Milliseconds(1));
  EXPECT_EQ(NextValidFrom(kT, kT + absl::Microseconds(2500)), kT + absl::Milliseconds(2));
}

}  // namespace
}  // namespace tock::admin
