// lib/common: ids, time formats, hashing, the gRPC status round trip, JSON flattening.
#include <gtest/gtest.h>

#include <set>

#include "lib/common/grpc_status.h"
#include "lib/common/hashing.h"
#include "lib/common/ids.h"
#include "lib/common/json_flatten.h"
#include "lib/common/status.h"
#include "lib/common/time_format.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock {
namespace {

TEST(IdsTest, UuidsAreVersionFourAndUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewUuid();
    ASSERT_TRUE(IsUuid(id)) << id;
    EXPECT_EQ(id[14], '4');
    EXPECT_TRUE(seen.insert(id).second);
  }
  EXPECT_FALSE(IsUuid("not-a-uuid"));
  EXPECT_FALSE(IsUuid("0123456789abcdef0123456789abcdef0123"));
}

TEST(TimeFormatTest, ParsesRfc3339DatesAndNow) {
  absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  EXPECT_EQ(*ParseTimestamp("now", now), now);
  EXPECT_EQ(*ParseTimestamp("2026-11-22T10:15:30Z", now),
            absl::FromCivil(absl::CivilSecond(2026, 11, 22, 10, 15, 30), absl::UTCTimeZone()));
  EXPECT_EQ(*ParseTimestamp("2026-11-22T12:15:30+02:00", now),
            absl::FromCivil(absl::CivilSecond(2026, 11, 22, 10, 15, 30), absl::UTCTimeZone()));
  EXPECT_EQ(*ParseTimestamp("2026-11-22", now),
            absl::FromCivil(absl::CivilDay(2026, 11, 22), absl::UTCTimeZone()));
  EXPECT_EQ(ParseTimestamp("yesterday", now).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FormatTimestamp(absl::FromUnixMillis(1'800'000'000'123)), "2027-01-15T08:00:00.123Z");
  EXPECT_EQ(FormatTimestamp(absl::FromUnixSeconds(1'800'000'000)), "2027-01-15T08:00:00Z");
  EXPECT_EQ(FromProtoTime(ToProtoTime(absl::FromUnixMillis(-1500))), absl::FromUnixMillis(-1500));
}

TEST(HashingTest, FarmHashFingerprints) {
  // FarmHash's published value for the empty input (the CityHash64 constant k2).
  EXPECT_EQ(Fingerprint64(""), 0x9ae16a3b2f90404fULL);
  EXPECT_EQ(Fingerprint32("ns_wf"), Fingerprint32("ns_wf"));
  EXPECT_NE(Fingerprint32("ns_wf1"), Fingerprint32("ns_wf2"));
  EXPECT_NE(Fingerprint64("a"), Fingerprint64("b"));
}

TEST(GrpcStatusTest, DetailsSurviveTheWire) {
  absl::Status original = NamespaceNotFoundError("orders");
  grpc::Status wire = ToGrpcStatus(original);
  EXPECT_EQ(wire.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(wire.error_message(), "Namespace orders is not found.");
  EXPECT_FALSE(wire.error_details().empty());
  absl::Status back = FromGrpcStatus(wire);
  EXPECT_EQ(back.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(back.message(), "Namespace orders is not found.");
  auto detail = GetDetail<temporal::api::errordetails::v1::NamespaceNotFoundFailure>(back);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->namespace_(), "orders");

  grpc::Status plain = ToGrpcStatus(absl::InvalidArgumentError("bad"));
  EXPECT_TRUE(plain.error_details().empty());
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
}

TEST(JsonFlattenTest, DottedPathsAndIndexes) {
  auto rows = FlattenJson(nlohmann::json::parse(
      R"({"config":{"ttl":"259200s"},"clusters":[{"name":"a"},{"name":"b"}],"n":3,"e":{},"f":true})"));
  std::vector<std::pair<std::string, std::string>> expected = {
      {"clusters[0].name", "a"}, {"clusters[1].name", "b"}, {"config.ttl", "259200s"},
      {"f", "true"}, {"n", "3"}};
  EXPECT_EQ(rows, expected);
}

}  // namespace
}  // namespace tock
