// The archived-visibility query languages (lib/archival/visibility_query.h): what each
// accepts, and Temporal's messages for what it refuses.
#include "lib/archival/visibility_query.h"

#include <gtest/gtest.h>

#include "temporal/api/enums/v1/workflow.pb.h"

namespace tock::archival {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

std::string FileError(const std::string& q) {
  auto r = ParseFileVisibilityQuery(q, kNow);
  return r.ok() ? "ok" : std::string(r.status().message());
}

std::string S3Error(const std::string& q) {
  auto r = ParseS3VisibilityQuery(q);
  return r.ok() ? "ok" : std::string(r.status().message());
}

TEST(FileVisibilityQuery, EmptyMeansEverythingClosedByNow) {
  auto q = ParseFileVisibilityQuery("", kNow);
  ASSERT_TRUE(q.ok());
  EXPECT_FALSE(q->workflow_id.has_value());
  EXPECT_EQ(q->latest_close, kNow);
  EXPECT_FALSE(q->matches_nothing);
}

TEST(FileVisibilityQuery, ConjunctionWithParenthesesStatusAndTimes) {
  auto q = ParseFileVisibilityQuery(
      "WorkflowId = 'w1' and (WorkflowType='greet' AND ExecutionStatus = \"Completed\") and "
      "CloseTime >= '2026-01-02T00:00:00Z' AND CloseTime < 1767398400000000000",
      kNow);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(*q->workflow_id, "w1");
  EXPECT_EQ(*q->workflow_type, "greet");
  EXPECT_EQ(*q->status, temporal::api::enums::v1::WORKFLOW_EXECUTION_STATUS_COMPLETED);
  EXPECT_EQ(q->earliest_close, absl::FromUnixSeconds(1767312000));
  EXPECT_EQ(q->latest_close, absl::FromUnixNanos(1767398400000000000 - 1));
}

TEST(FileVisibilityQuery, ContradictionsMatchNothing) {
  EXPECT_TRUE(ParseFileVisibilityQuery("WorkflowId='a' AND WorkflowId='b'", kNow)->matches_nothing);
  EXPECT_TRUE(ParseFileVisibilityQuery("CloseTime > 10 AND CloseTime < 5", kNow)->matches_nothing);
  EXPECT_TRUE(ParseFileVisibilityQuery("ExecutionStatus='failed' AND ExecutionStatus=2", kNow)
                  ->matches_nothing);
}

TEST(FileVisibilityQuery, RefusesWhatTemporalRefuses) {
  EXPECT_EQ(FileError("WorkflowId='a' OR WorkflowId='b'"),
            "only comparison and \"and\" expression is supported");
  EXPECT_EQ(FileError("WorkflowId > 'a'"), "only operation = is support for WorkflowId");
  EXPECT_EQ(FileError("CloseTime != 5"), "operator != is not supported for close time");
  EXPECT_EQ(FileError("WorkflowId = abc"), "value abc is not a string value");
  EXPECT_EQ(FileError("Owner = 'me'").rfind("unknown filter name: Owner", 0), 0u);
  EXPECT_NE(FileError("ExecutionStatus='sleeping'").find("unknown workflow close status"),
            std::string::npos);
  EXPECT_NE(FileError("CloseTime > 'yesterday'").find("RFC 3339"), std::string::npos);
}

TEST(S3VisibilityQuery, IdOrTypeWithAnOptionalTimeAndPrecision) {
  auto q = ParseS3VisibilityQuery(
      "WorkflowType = 'greet' AND CloseTime = '2026-03-04T05:06:07Z' AND SearchPrecision='Hour'");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(*q->workflow_type, "greet");
  EXPECT_EQ(q->precision, "Hour");
  EXPECT_TRUE(q->close_time.has_value());
  EXPECT_TRUE(ParseS3VisibilityQuery("")->empty);
  EXPECT_TRUE(ParseS3VisibilityQuery("WorkflowTypeName='x'")->workflow_type.has_value());
}

TEST(S3VisibilityQuery, RefusesWhatTemporalRefuses) {
  EXPECT_EQ(S3Error("CloseTime='2026-03-04T05:06:07Z' AND SearchPrecision='Day'"),
            "WorkflowId or WorkflowType is required in query");
  EXPECT_EQ(S3Error("WorkflowId='a' AND WorkflowType='b'"),
            "only one of WorkflowId or WorkflowType can be specified in a query");
  EXPECT_EQ(S3Error("WorkflowId='a' AND StartTime=1 AND CloseTime=2 AND SearchPrecision='Day'"),
            "only one of StartTime or CloseTime can be specified in a query");
  EXPECT_EQ(S3Error("WorkflowId='a' AND CloseTime=1"),
            "SearchPrecision is required when searching for a StartTime or CloseTime");
  EXPECT_EQ(S3Error("WorkflowId='a' AND SearchPrecision='Day'"),
            "SearchPrecision requires a StartTime or CloseTime");
  EXPECT_EQ(S3Error("WorkflowId='a' AND WorkflowId='b'"), "can not query WorkflowId multiple times");
  EXPECT_EQ(S3Error("WorkflowId='a' AND CloseTime=1 AND SearchPrecision='Week'"),
            "invalid value for SearchPrecision: Week; use Day, Hour, Minute or Second");
  EXPECT_EQ(S3Error("WorkflowId < 'a'"), "only operation = is support for WorkflowId");
}

}  // namespace
}  // namespace tock::archival
