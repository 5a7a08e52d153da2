// Valid-time versions of namespace metadata (seed 004, SPEC §1.3): valid_from is the server
// time in whole milliseconds, strictly increasing (+1 ms when it would not be).
#include "lib/common/valid_time.h"

#include <gtest/gtest.h>

namespace tock {
namespace {

// 2025-11-22T08:26:40Z, a whole millisecond.
const absl::Time kT = absl::FromUnixMillis(1'763'800'000'000);

TEST(ValidTimeTest, NowWhenLaterThanThePreviousVersion) {
  EXPECT_EQ(NextValidFrom(kT, kT + absl::Seconds(5)), kT + absl::Seconds(5));
  EXPECT_EQ(NextValidFrom(kT, kT + absl::Milliseconds(1)), kT + absl::Milliseconds(1));
  EXPECT_EQ(NextValidFrom(kT, kT + absl::Milliseconds(2)), kT + absl::Milliseconds(2));
}

TEST(ValidTimeTest, SameMillisecondGetsPlusOne) {
  EXPECT_EQ(NextValidFrom(kT, kT), kT + absl::Milliseconds(1));
  EXPECT_EQ(NextValidFrom(kT, kT + absl::Microseconds(1)), kT + absl::Milliseconds(1));
  EXPECT_EQ(NextValidFrom(kT, kT + absl::Microseconds(999)), kT + absl::Milliseconds(1));
}

TEST(ValidTimeTest, ThreeChangesInOneMillisecondGetConsecutiveStarts) {
  absl::Time now = kT + absl::Microseconds(100);
  absl::Time v1 = NextValidFrom(kT - absl::Seconds(1), now);
  absl::Time v2 = NextValidFrom(v1, now + absl::Microseconds(100));
  absl::Time v3 = NextValidFrom(v2, now + absl::Microseconds(200));
  EXPECT_EQ(v1, kT);
  EXPECT_EQ(v2, kT + absl::Milliseconds(1));
  EXPECT_EQ(v3, kT + absl::Milliseconds(2));
  // The clock catches up: the next change a millisecond later in real time is still after v3.
  EXPECT_EQ(NextValidFrom(v3, kT + absl::Milliseconds(1)), kT + absl::Milliseconds(3));
  EXPECT_EQ(NextValidFrom(v3, kT + absl::Milliseconds(10)), kT + absl::Milliseconds(10));
}

TEST(ValidTimeTest, ClockGoingBackStillMovesForward) {
  EXPECT_EQ(NextValidFrom(kT, kT - absl::Milliseconds(1)), kT + absl::Milliseconds(1));
  EXPECT_EQ(NextValidFrom(kT, kT - absl::Hours(1)), kT + absl::Milliseconds(1));
  EXPECT_EQ(NextValidFrom(kT, absl::UnixEpoch()), kT + absl::Milliseconds(1));
}

TEST(ValidTimeTest, SubMillisecondsAreTruncated) {
  EXPECT_EQ(TruncateToMillis(kT + absl::Microseconds(1500)), kT + absl::Milliseconds(1));
  EXPECT_EQ(TruncateToMillis(kT + absl::Nanoseconds(999'999)), kT);
  EXPECT_EQ(TruncateToMillis(kT), kT);
  // Truncation is toward the past, also before the epoch.
  EXPECT_EQ(TruncateToMillis(absl::UnixEpoch() - absl::Microseconds(1)),
            absl::UnixEpoch() - absl::Milliseconds(1));
  EXPECT_EQ(NextValidFrom(kT, kT + absl::Microseconds(2500)), kT + absl::Milliseconds(2));
  EXPECT_EQ(NextValidFrom(kT, kT + absl::Microseconds(1999)), kT + absl::Milliseconds(1));
}

TEST(ValidTimeTest, AnUnalignedPreviousStartIsTruncatedFirst) {
  // A previous valid_from written with sub-millisecond digits (e.g. by an older writer) still
  // yields a whole-millisecond successor.
  EXPECT_EQ(NextValidFrom(kT + absl::Microseconds(400), kT), kT + absl::Milliseconds(1));
  EXPECT_EQ(NextValidFrom(kT + absl::Microseconds(400), kT + absl::Microseconds(600)),
            kT + absl::Milliseconds(1));
}

}  // namespace
}  // namespace tock
