// The Worker Deployment read limit (deployments/read_limiter.h) on a manual clock: a burst of
// ten seconds' worth (500 reads), then 50 a second, per namespace, refused with Temporal's
// message and RPS_LIMIT detail.
#include "server-core/deployments/read_limiter.h"

#include <gtest/gtest.h>

#include "lib/common/clock.h"
#include "lib/common/status.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock::server::deployments {
namespace {

TEST(ReadLimiterTest, ABurstThenFiftyASecondPerNamespace) {
  ManualClock clock;
  ReadLimiter reads(clock);
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(reads.Admit("ns-1", "orders").ok()) << i;
  const absl::Status refused = reads.Admit("ns-1", "orders");
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.message(), "Worker Deployment Read API rate limit exceeded for namespace \"orders\"");
  auto detail = GetDetail<temporal::api::errordetails::v1::ResourceExhaustedFailure>(refused);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->cause(), temporal::api::enums::v1::RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT);
  EXPECT_TRUE(reads.Admit("ns-2", "billing").ok()) << "another namespace has its own";

  clock.Advance(absl::Milliseconds(20));  // one read's worth at 50 a second
  EXPECT_TRUE(reads.Admit("ns-1", "orders").ok());
  EXPECT_FALSE(reads.Admit("ns-1", "orders").ok());
  clock.Advance(absl::Seconds(1));
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(reads.Admit("ns-1", "orders").ok()) << i;
  EXPECT_FALSE(reads.Admit("ns-1", "orders").ok());
}

}  // namespace
}  // namespace tock::server::deployments
