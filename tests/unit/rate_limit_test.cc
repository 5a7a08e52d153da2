// The frontend's rate limits in process: the token bucket against a manual clock, the
// per-namespace and per-host buckets (overrides, polls apart, the bounded table of
// namespaces, Temporal's ResourceExhaustedFailure detail), the `limits:` rate keys, and the
// reading of a call's namespace from its serialized request.
#include <grpcpp/impl/grpc_library.h>
#include <grpcpp/support/byte_buffer.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/common/clock.h"
#include "lib/common/status.h"
#include "server-core/security/rate_limit_bucket.h"
#include "server-core/security/rate_limit_call.h"
#include "server-core/security/rate_limit_config.h"
#include "server-core/security/rate_limiter.h"
#include "temporal/api/errordetails/v1/message.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::security {
namespace {

namespace enums = temporal::api::enums::v1;
namespace wf = temporal::api::workflowservice::v1;
using temporal::api::errordetails::v1::ResourceExhaustedFailure;

constexpr int64_t kSecond = 1'000'000'000;

// Calls allowed out of `n` at one instant.
int AllowedAt(RateLimitBucket& bucket, int64_t now, int n) {
  int allowed = 0;
  for (int i = 0; i < n; ++i) allowed += bucket.Allow(now);
  return allowed;
}

TEST(RateLimitBucket, BurstIsOneSecondOfTokensThenTheRate) {
  RateLimitBucket bucket(100);
  const int64_t t0 = 50 * kSecond;
  EXPECT_TRUE(bucket.Idle(t0));
  EXPECT_EQ(AllowedAt(bucket, t0, 1000), 100);  // a full bucket: 100 at once, no more
  EXPECT_FALSE(bucket.Idle(t0));
  EXPECT_EQ(AllowedAt(bucket, t0 + kSecond / 10, 1000), 10);  // 100 ms later: 10 tokens
  EXPECT_EQ(AllowedAt(bucket, t0 + kSecond / 10 + kSecond / 200, 1000), 0);  // 5 ms: none yet
  // Over ten seconds of calls every millisecond, 100 a second get through (+ the burst left).
  int allowed = 0;
  for (int64_t t = t0 + kSecond; t < t0 + 11 * kSecond; t += kSecond / 1000) {
    allowed += bucket.Allow(t);
  }
  EXPECT_GE(allowed, 1000);
  EXPECT_LE(allowed, 1000 + 100);
  // Idle for a second: full again, the same as a new bucket.
  EXPECT_TRUE(bucket.Idle(t0 + 12 * kSecond));
  EXPECT_EQ(AllowedAt(bucket, t0 + 12 * kSecond, 1000), 100);
}

TEST(RateLimitBucket, ConcurrentCallersNeverTakeMoreThanTheBurst) {
  RateLimitBucket bucket(5000);
  std::atomic<int> allowed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 10000; ++j) allowed += bucket.Allow(kSecond);  // one instant
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(allowed.load(), 5000);
}

RateLimitConfig Limits(int64_t host, int64_t ns) {
  RateLimitConfig c;
  c.enabled = true;
  c.frontend_rps = c.frontend_poll_rps = host;
  c.namespace_rps = c.namespace_poll_rps = ns;
  return c;
}

int AllowedCalls(RateLimiter& limiter, absl::string_view ns, bool poll, int n) {
  int allowed = 0;
  for (int i = 0; i < n; ++i) allowed += limiter.Check(ns, poll).ok();
  return allowed;
}

TEST(RateLimiter, NamespaceOverItsLimitLeavesOthersAlone) {
  ManualClock clock;
  RateLimitConfig config = Limits(1000, 10);
  RateLimiter limiter(config, clock);
  EXPECT_EQ(AllowedCalls(limiter, "noisy", false, 500), 10);
  // The refused calls spent no host tokens: another namespace has its whole rate.
  EXPECT_EQ(AllowedCalls(limiter, "quiet", false, 50), 10);
  absl::Status refused = limiter.Check("noisy", false);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.message(),
            "namespace rate limit exceeded: namespace \"noisy\" is limited to 10 requests per "
            "second on this host (limits.namespace_rps)");
  std::optional<ResourceExhaustedFailure> detail = GetDetail<ResourceExhaustedFailure>(refused);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->cause(), enums::RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT);
  EXPECT_EQ(detail->scope(), enums::RESOURCE_EXHAUSTED_SCOPE_NAMESPACE);
  clock.Advance(absl::Milliseconds(500));
  EXPECT_EQ(AllowedCalls(limiter, "noisy", false, 50), 5);
}

TEST(RateLimiter, HostLimitCountsEveryNamespaceAndCallsWithoutOne) {
  ManualClock clock;
  RateLimitConfig config = Limits(30, 20);
  RateLimiter limiter(config, clock);
  EXPECT_EQ(AllowedCalls(limiter, "a", false, 100), 20);
  EXPECT_EQ(AllowedCalls(limiter, "", false, 5), 5);
  EXPECT_EQ(AllowedCalls(limiter, "b", false, 100), 5);  // the host's 30th call, then none
  absl::Status refused = limiter.Check("", false);
  EXPECT_EQ(refused.message(),
            "service rate limit exceeded: this host is limited to 30 requests per second "
            "(limits.frontend_rps)");
  std::optional<ResourceExhaustedFailure> detail = GetDetail<ResourceExhaustedFailure>(refused);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->cause(), enums::RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT);
  EXPECT_EQ(detail->scope(), enums::RESOURCE_EXHAUSTED_SCOPE_SYSTEM);
}

TEST(RateLimiter, OverridesAndPollsHaveBucketsOfTheirOwn) {
  ManualClock clock;
  RateLimitConfig config = Limits(0, 100);  // no host limit
  config.namespace_poll_rps = 7;
  config.namespace_rps_overrides["orders"] = 3;
  config.namespace_poll_rps_overrides["orders"] = 2;
  RateLimiter limiter(config, clock);
  EXPECT_EQ(AllowedCalls(limiter, "orders", false, 50), 3);
  EXPECT_EQ(AllowedCalls(limiter, "orders", true, 50), 2);  // polls unaffected by the calls
  EXPECT_EQ(AllowedCalls(limiter, "other", false, 500), 100);
  EXPECT_EQ(AllowedCalls(limiter, "other", true, 50), 7);
  EXPECT_EQ(limiter.Check("orders", false).message(),
            "namespace rate limit exceeded: namespace \"orders\" is limited to 3 requests per "
            "second on this host (limits.namespace_rps_overrides)");
  EXPECT_EQ(limiter.Check("orders", true).message(),
            "namespace rate limit exceeded: namespace \"orders\" is limited to 2 polls per "
            "second on this host (limits.namespace_poll_rps_overrides)");
  EXPECT_EQ(limiter.Check("other", true).message(),
            "namespace rate limit exceeded: namespace \"other\" is limited to 7 polls per "
            "second on this host (limits.namespace_poll_rps)");
}

TEST(RateLimiter, ZeroIsNoLimit) {
  ManualClock clock;
  RateLimitConfig config = Limits(0, 0);
  config.namespace_rps_overrides["orders"] = 0;
  RateLimiter limiter(config, clock);
  EXPECT_EQ(AllowedCalls(limiter, "orders", false, 10000), 10000);
  EXPECT_EQ(AllowedCalls(limiter, "x", true, 10000), 10000);
}

TEST(RateLimiter, InventedNamespacesCostABoundedTable) {
  ManualClock clock;
  RateLimitConfig config = Limits(0, 1);
  RateLimiter limiter(config, clock);
  // Twice as many names as the table holds, all within one instant: the names that do not
  // fit share the overflow bucket (one call a second between them).
  int allowed = 0;
  for (size_t i = 0; i < 2 * RateLimiter::kMaxNamespaces; ++i) {
    allowed += limiter.Check(absl::StrCat("ns-", i), false).ok();
  }
  EXPECT_LE(limiter.NamespacesHeld(), RateLimiter::kMaxNamespaces);
  EXPECT_GE(allowed, static_cast<int>(RateLimiter::kMaxNamespaces) - 16);
  EXPECT_LE(allowed, static_cast<int>(RateLimiter::kMaxNamespaces) + 1);
  // A second later the idle ones make room for new names again.
  clock.Advance(absl::Seconds(2));
  EXPECT_TRUE(limiter.Check("fresh", false).ok());
  EXPECT_FALSE(limiter.Check("fresh", false).ok());
  EXPECT_LE(limiter.NamespacesHeld(), RateLimiter::kMaxNamespaces);
}

absl::Status Parse(const std::string& yaml, RateLimitConfig* out) {
  return ParseRateLimits(YAML::Load(yaml), *out);
}

TEST(RateLimitConfig, OffUnlessARateKeyIsGiven) {
  RateLimitConfig c;
  ASSERT_TRUE(Parse("{max_id_length: 100}", &c).ok());
  EXPECT_FALSE(c.enabled);
}

TEST(RateLimitConfig, OtherKeysTakeTemporalsDefaultsAndPollsFollowCalls) {
  RateLimitConfig c;
  ASSERT_TRUE(Parse("{namespace_rps: 1200, namespace_rps_overrides: {orders: 100}}", &c).ok());
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.frontend_rps, 2400);
  EXPECT_EQ(c.frontend_poll_rps, 2400);
  EXPECT_EQ(c.namespace_rps, 1200);
  EXPECT_EQ(c.namespace_poll_rps, 1200);
  EXPECT_EQ(c.namespace_rps_overrides, (std::map<std::string, int64_t>{{"orders", 100}}));
  RateLimitConfig d;
  ASSERT_TRUE(Parse("{frontend_rps: 0, frontend_poll_rps: 50, namespace_poll_rps: 5}", &d).ok());
  EXPECT_EQ(d.frontend_rps, 0);
  EXPECT_EQ(d.frontend_poll_rps, 50);
  EXPECT_EQ(d.namespace_rps, 2400);
  EXPECT_EQ(d.namespace_poll_rps, 5);
}

TEST(RateLimitConfig, BadValuesNameTheKey) {
  RateLimitConfig c;
  EXPECT_EQ(Parse("{frontend_rps: -1}", &c).message(),
            "config limits.frontend_rps: must be between 0 (no limit) and 1000000 requests per "
            "second; got -1");
  EXPECT_EQ(Parse("{namespace_rps: lots}", &c).message(),
            "config limits.namespace_rps: must be an integer (requests per second)");
  EXPECT_EQ(Parse("{namespace_rps_overrides: [a]}", &c).message(),
            "config limits.namespace_rps_overrides: must be a mapping of namespace name to "
            "requests per second, e.g. {orders: 100}");
  EXPECT_EQ(Parse("{namespace_poll_rps_overrides: {orders: 2000000}}", &c).message(),
            "config limits.namespace_poll_rps_overrides.orders: must be between 0 (no limit) "
            "and 1000000 requests per second; got 2000000");
  EXPECT_EQ(Parse(absl::StrCat("{namespace_rps_overrides: {", std::string(1001, 'n'), ": 1}}"), &c)
                .message(),
            "config limits.namespace_rps_overrides: has a namespace name of 1001 characters; "
            "names have 1 to 1000");
}

// gRPC's C++ slices need the library set up (a server or channel would do it).
grpc::internal::GrpcLibraryInitializer grpc_library;
grpc::internal::GrpcLibrary grpc_library_instance;

grpc::ByteBuffer Serialized(const google::protobuf::Message& m, int slices = 1) {
  const std::string bytes = m.SerializeAsString();
  std::vector<grpc::Slice> parts;
  const size_t step = bytes.size() / slices + 1;
  for (size_t at = 0; at < bytes.size(); at += step) {
    parts.emplace_back(bytes.data() + at, std::min(step, bytes.size() - at));
  }
  return grpc::ByteBuffer(parts.data(), parts.size());
}

TEST(ReadCallFields, ReadsTheNamespaceWhereverItIsAndSkipsTheRest) {
  const CallFields start{wf::StartWorkflowExecutionRequest::kNamespaceFieldNumber, 0};
  wf::StartWorkflowExecutionRequest req;
  req.set_workflow_id("w");
  req.mutable_input()->add_payloads()->set_data(std::string(300000, 'x'));  // before and after
  req.set_namespace_("orders");
  req.set_identity("me");
  std::string ns;
  bool waits = true;
  for (int slices : {1, 7}) {  // one slice, or split across slices as gRPC may hand it over
    ReadCallFields(Serialized(req, slices), start, &ns, &waits);
    EXPECT_EQ(ns, "orders");
    EXPECT_FALSE(waits);
  }
  // A namespace longer than any may be: none (the handler refuses the call).
  req.set_namespace_(std::string(1001, 'n'));
  ReadCallFields(Serialized(req), start, &ns, &waits);
  EXPECT_EQ(ns, "");
  // Not a message at all.
  grpc::Slice junk(std::string("\xff\xff\xff\xff", 4));
  ReadCallFields(grpc::ByteBuffer(&junk, 1), start, &ns, &waits);
  EXPECT_EQ(ns, "");
}

TEST(ReadCallFields, HistoryWithWaitNewEventIsALongPoll) {
  const CallFields fields{wf::GetWorkflowExecutionHistoryRequest::kNamespaceFieldNumber,
                          wf::GetWorkflowExecutionHistoryRequest::kWaitNewEventFieldNumber};
  wf::GetWorkflowExecutionHistoryRequest req;
  req.set_namespace_("default");
  std::string ns;
  bool waits = true;
  ReadCallFields(Serialized(req), fields, &ns, &waits);
  EXPECT_EQ(ns, "default");
  EXPECT_FALSE(waits);
  req.set_wait_new_event(true);
  ReadCallFields(Serialized(req), fields, &ns, &waits);
  EXPECT_TRUE(waits);
}

}  // namespace
}  // namespace tock::server::security
