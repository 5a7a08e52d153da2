// Timestamps as operators type and read them (lib/common/time_format.h).
#include "lib/common/time_format.h"

#include <gtest/gtest.h>

namespace tock {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);  // 2027-01-15T08:00:00Z

absl::Time Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone());
}

TEST(TimeFormatTest, ParsesRfc3339) {
  EXPECT_EQ(*ParseTimestamp("2026-11-22T10:15:30Z", kNow), Utc(2026, 11, 22, 10, 15, 30));
  EXPECT_EQ(*ParseTimestamp("2026-11-22T10:15:30.123Z", kNow),
            Utc(2026, 11, 22, 10, 15, 30) + absl::Milliseconds(123));
  EXPECT_EQ(*ParseTimestamp("2026-11-22T10:15:30.000000001Z", kNow),
            Utc(2026, 11, 22, 10, 15, 30) + absl::Nanoseconds(1));
  EXPECT_EQ(*ParseTimestamp("2026-11-22T12:15:30+02:00", kNow), Utc(2026, 11, 22, 10, 15, 30));
  EXPECT_EQ(*ParseTimestamp("2026-11-22T05:15:30-05:00", kNow), Utc(2026, 11, 22, 10, 15, 30));
}

TEST(TimeFormatTest, ParsesADateAsMidnightUtc) {
  EXPECT_EQ(*ParseTimestamp("2026-11-22", kNow), Utc(2026, 11, 22));
  EXPECT_EQ(*ParseTimestamp("2000-01-01", kNow), absl::FromUnixSeconds(946'684'800));
}

TEST(TimeFormatTest, NowIsTheGivenNow) {
  EXPECT_EQ(*ParseTimestamp("now", kNow), kNow);
  EXPECT_EQ(*ParseTimestamp("now", absl::UnixEpoch()), absl::UnixEpoch());
}

TEST(TimeFormatTest, GarbageIsInvalidArgumentNamingTheFormats) {
  for (const char* bad : {"", "yesterday", "NOW", "2026-11-22T10:15:30", "2026-13-01", "2026-02-30",
                          "2026-11-22T25:00:00Z", "22/11/2026", "1763800000"}) {
    absl::StatusOr<absl::Time> t = ParseTimestamp(bad, kNow);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << "\"" << bad << "\"";
  }
  EXPECT_EQ(ParseTimestamp("yesterday", kNow).status().message(),
            "invalid time \"yesterday\": use RFC 3339 (2026-11-22T10:15:30Z), a date "
            "(2026-11-22) or now");
}

TEST(TimeFormatTest, FormatsUtcWithMillisecondsOnlyWhenNonZero) {
  EXPECT_EQ(FormatTimestamp(kNow), "2027-01-15T08:00:00Z");
  EXPECT_EQ(FormatTimestamp(absl::FromUnixMillis(1'800'000'000'123)), "2027-01-15T08:00:00.123Z");
  EXPECT_EQ(FormatTimestamp(absl::FromUnixMillis(1'800'000'000'007)), "2027-01-15T08:00:00.007Z");
  EXPECT_EQ(FormatTimestamp(absl::UnixEpoch()), "1970-01-01T00:00:00Z");
}

TEST(TimeFormatTest, FormatThenParseRoundTrips) {
  for (absl::Time t : {kNow, absl::FromUnixMillis(1'763'800'000'042), absl::UnixEpoch()}) {
    EXPECT_EQ(*ParseTimestamp(FormatTimestamp(t), kNow), t) << FormatTimestamp(t);
  }
}

TEST(TimeFormatTest, ProtoTimestampsRoundTrip) {
  google::protobuf::Timestamp ts = ToProtoTime(absl::FromUnixMillis(1'800'000'000'123));
  EXPECT_EQ(ts.seconds(), 1'800'000'000);
  EXPECT_EQ(ts.nanos(), 123'000'000);
  // Before the epoch the nanos stay non-negative, as protobuf requires.
  google::protobuf::Timestamp before = ToProtoTime(absl::FromUnixMillis(-1500));
  EXPECT_EQ(before.seconds(), -2);
  EXPECT_EQ(before.nanos(), 500'000'000);
  EXPECT_EQ(FromProtoTime(before), absl::FromUnixMillis(-1500));
  EXPECT_EQ(FromProtoTime(ToProtoTime(kNow + absl::Nanoseconds(7))), kNow + absl::Nanoseconds(7));
}

}  // namespace
}  // namespace tock
