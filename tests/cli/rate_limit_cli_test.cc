// The frontend's rate limits against a real tock-server configured with `limits:`: a
// namespace over its limit is refused RESOURCE_EXHAUSTED with Temporal's
// ResourceExhaustedFailure (cause RPS_LIMIT, scope NAMESPACE) while another namespace is not;
// overrides; polls in buckets of their own (GetWorkflowExecutionHistory with wait_new_event
// is one); a client's forged `tock-forwarded` header counted like any call; the host's limit
// (scope SYSTEM) with GetSystemInfo exempt; TimerService, OperatorService and AdminService
// calls limited like WorkflowService's; `tock` exits 4 with the server's message; a bad value
// refuses to start naming the key.
//
// Limits of 1 to 5 calls a second, and tens of calls sent back to back: a refusal is certain
// unless the calls take longer than the seconds their tokens need (no timing is asserted).
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "lib/common/grpc_status.h"
#include "lib/common/status.h"
#include "temporal/api/errordetails/v1/message.pb.h"
#include "temporal/api/operatorservice/v1/service.grpc.pb.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tests/cli/cli_fixture.h"
#include "tock/admin/v1/service.grpc.pb.h"
#include "tock/timer/v1/service.grpc.pb.h"

namespace tock::testing {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace enums = temporal::api::enums::v1;
using temporal::api::errordetails::v1::ResourceExhaustedFailure;

constexpr char kConfig[] = R"(namespaces: [orders, other, hist]
limits:
  max_id_length: 1000
  namespace_rps: 1000
  namespace_rps_overrides: {orders: 5}
  namespace_poll_rps_overrides: {orders: 1, hist: 1}
)";

class RateLimitTest : public CliTest {
 protected:
  void StartLimited(const std::string& yaml) {
    StartServer({"--config", dir_.Write("limits.yaml", yaml)});
    channel_ = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    stub_ = wf::WorkflowService::NewStub(channel_);
  }

  absl::Status Describe(const std::string& ns) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    wf::DescribeNamespaceRequest req;
    req.set_namespace_(ns);
    wf::DescribeNamespaceResponse resp;
    return FromGrpcStatus(stub_->DescribeNamespace(&ctx, req, &resp));
  }

  // A poll that waits at most `wait` for a task (none comes): OK or DEADLINE_EXCEEDED when
  // let through, RESOURCE_EXHAUSTED at once when refused.
  absl::Status Poll(const std::string& ns, std::chrono::milliseconds wait) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + wait);
    wf::PollActivityTaskQueueRequest req;
    req.set_namespace_(ns);
    req.mutable_task_queue()->set_name("q");
    req.set_identity("rate-limit-test");
    wf::PollActivityTaskQueueResponse resp;
    return FromGrpcStatus(stub_->PollActivityTaskQueue(&ctx, req, &resp));
  }

  absl::Status History(const std::string& ns, bool wait, std::chrono::milliseconds deadline) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + deadline);
    wf::GetWorkflowExecutionHistoryRequest req;
    req.set_namespace_(ns);
    req.mutable_execution()->set_workflow_id("wf-1");
    req.set_wait_new_event(wait);
    if (wait) req.set_next_page_token(next_page_token_);
    wf::GetWorkflowExecutionHistoryResponse resp;
    absl::Status s = FromGrpcStatus(stub_->GetWorkflowExecutionHistory(&ctx, req, &resp));
    if (s.ok() && !wait) next_page_token_ = resp.next_page_token();
    return s;
  }

  // `method` of `stub` with `req`, given 10 s.
  template <typename Stub, typename Request, typename Response>
  static absl::Status Call(Stub& stub,
                           grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                        Response*),
                           const Request& req) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    Response resp;
    return FromGrpcStatus((stub.*method)(&ctx, req, &resp));
  }

  // The first refusal of `call` within `n` tries (OK when there was none).
  template <typename Call>
  absl::Status FirstRefusal(int n, Call call) {
    for (int i = 0; i < n; ++i) {
      absl::Status s = call();
      if (s.code() == absl::StatusCode::kResourceExhausted) return s;
    }
    return absl::OkStatus();
  }

  static void ExpectRpsLimit(const absl::Status& s, enums::ResourceExhaustedScope scope,
                             const std::string& message) {
    EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
    EXPECT_EQ(s.message(), message);
    std::optional<ResourceExhaustedFailure> detail = GetDetail<ResourceExhaustedFailure>(s);
    ASSERT_TRUE(detail.has_value()) << s;
    EXPECT_EQ(detail->cause(), enums::RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT);
    EXPECT_EQ(detail->scope(), scope);
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<wf::WorkflowService::Stub> stub_;
  std::string next_page_token_;
};

TEST_F(RateLimitTest, NamespaceOverItsLimitIsRefusedAndAnotherIsNot) {
  StartLimited(kConfig);
  EXPECT_NE(server_->banner().find("  limits:     2400 calls/s and 2400 polls/s per host, 1000 "
                                   "and 1000 per namespace, 2 namespaces overridden\n"),
            std::string::npos)
      << server_->banner();
  ExpectRpsLimit(FirstRefusal(60, [&] { return Describe("orders"); }),
                 enums::RESOURCE_EXHAUSTED_SCOPE_NAMESPACE,
                 "namespace rate limit exceeded: namespace \"orders\" is limited to 5 requests "
                 "per second on this host (limits.namespace_rps_overrides)");
  // Meanwhile "other" has its own 1,000 a second: 200 calls at once, none refused.
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(Describe("other").ok()) << i;
  // GetSystemInfo is never limited.
  for (int i = 0; i < 50; ++i) {
    grpc::ClientContext ctx;
    wf::GetSystemInfoResponse resp;
    ASSERT_TRUE(stub_->GetSystemInfo(&ctx, wf::GetSystemInfoRequest(), &resp).ok());
  }
}

TEST_F(RateLimitTest, PollsHaveBucketsOfTheirOwn) {
  StartLimited(kConfig);
  // Spend orders' calls: its polls still get through (answered empty after their wait).
  ASSERT_FALSE(FirstRefusal(60, [&] { return Describe("orders"); }).ok());
  absl::Status first = Poll("orders", std::chrono::milliseconds(300));
  EXPECT_NE(first.code(), absl::StatusCode::kResourceExhausted) << first;
  // One poll a second for orders: back-to-back polls are refused at once.
  ExpectRpsLimit(FirstRefusal(20, [&] { return Poll("orders", std::chrono::milliseconds(100)); }),
                 enums::RESOURCE_EXHAUSTED_SCOPE_NAMESPACE,
                 "namespace rate limit exceeded: namespace \"orders\" is limited to 1 polls per "
                 "second on this host (limits.namespace_poll_rps_overrides)");

  // GetWorkflowExecutionHistory waiting for new events is a poll; without waiting, a call.
  ProcessResult started = Tock({"-n", "hist", "workflow", "start", "--id", "wf-1",
                                "--type", "T", "--task-queue", "q"});
  ASSERT_EQ(started.exit_code, kExitOk) << started.err;
  ASSERT_TRUE(History("hist", false, std::chrono::seconds(10)).ok());
  ExpectRpsLimit(
      FirstRefusal(20, [&] { return History("hist", true, std::chrono::milliseconds(100)); }),
      enums::RESOURCE_EXHAUSTED_SCOPE_NAMESPACE,
      "namespace rate limit exceeded: namespace \"hist\" is limited to 1 polls per second on "
      "this host (limits.namespace_poll_rps_overrides)");
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(History("hist", false, std::chrono::seconds(10)).ok());
}

TEST_F(RateLimitTest, AClientClaimingToBeAnotherHostIsCountedLikeAnyOther) {
  StartLimited(kConfig);
  ASSERT_FALSE(FirstRefusal(60, [&] { return Describe("orders"); }).ok());
  // Hosts mark the calls they forward with their database's secret (routing/peer_credential.h);
  // a client sending the header with anything else, the old "1" or a secret of the right
  // shape, is held at the namespace's limit like its other calls. (That genuinely forwarded
  // calls are not counted twice is tested with two hosts: security_multi_host_test.cc.)
  for (const std::string forged : {std::string("1"), std::string(64, 'a')}) {
    absl::Status refused = FirstRefusal(60, [&] {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      ctx.AddMetadata("tock-forwarded", forged);
      wf::DescribeNamespaceRequest req;
      req.set_namespace_("orders");
      wf::DescribeNamespaceResponse resp;
      return FromGrpcStatus(stub_->DescribeNamespace(&ctx, req, &resp));
    });
    ExpectRpsLimit(refused, enums::RESOURCE_EXHAUSTED_SCOPE_NAMESPACE,
                   "namespace rate limit exceeded: namespace \"orders\" is limited to 5 requests "
                   "per second on this host (limits.namespace_rps_overrides)");
  }
}

TEST_F(RateLimitTest, HostLimitCountsEveryNamespace) {
  StartLimited("limits: {frontend_rps: 3}\n");
  ExpectRpsLimit(FirstRefusal(60, [&] { return Describe("default"); }),
                 enums::RESOURCE_EXHAUSTED_SCOPE_SYSTEM,
                 "service rate limit exceeded: this host is limited to 3 requests per second "
                 "(limits.frontend_rps)");
  for (int i = 0; i < 30; ++i) {
    grpc::ClientContext ctx;
    wf::GetSystemInfoResponse resp;
    ASSERT_TRUE(stub_->GetSystemInfo(&ctx, wf::GetSystemInfoRequest(), &resp).ok());
  }
}

// Not only WorkflowService: a timer's creation writes a durable row and makes an HTTP call,
// so TimerService is held at the namespace's limit like the rest; so are OperatorService's
// namespaced calls, and AdminService's cluster calls count against the host (review P2-3).
TEST_F(RateLimitTest, TimerOperatorAndAdminCallsAreLimitedToo) {
  StartLimited(kConfig);
  auto timers = tock::timer::v1::TimerService::NewStub(channel_);
  tock::timer::v1::ListTimersRequest list_timers;
  list_timers.set_namespace_("orders");
  ExpectRpsLimit(FirstRefusal(60,
                              [&] {
                                return Call(*timers,
                                            &tock::timer::v1::TimerService::Stub::ListTimers,
                                            list_timers);
                              }),
                 enums::RESOURCE_EXHAUSTED_SCOPE_NAMESPACE,
                 "namespace rate limit exceeded: namespace \"orders\" is limited to 5 requests "
                 "per second on this host (limits.namespace_rps_overrides)");
  auto operators = temporal::api::operatorservice::v1::OperatorService::NewStub(channel_);
  temporal::api::operatorservice::v1::ListSearchAttributesRequest list_attributes;
  list_attributes.set_namespace_("orders");
  ExpectRpsLimit(
      FirstRefusal(60,
                   [&] {
                     return Call(*operators,
                                 &temporal::api::operatorservice::v1::OperatorService::Stub::
                                     ListSearchAttributes,
                                 list_attributes);
                   }),
      enums::RESOURCE_EXHAUSTED_SCOPE_NAMESPACE,
      "namespace rate limit exceeded: namespace \"orders\" is limited to 5 requests per second "
      "on this host (limits.namespace_rps_overrides)");
  // "other" was not touched: its timers are listed.
  grpc::ClientContext ctx;
  tock::timer::v1::ListTimersRequest req;
  req.set_namespace_("other");
  tock::timer::v1::ListTimersResponse resp;
  const grpc::Status listed = timers->ListTimers(&ctx, req, &resp);
  EXPECT_TRUE(listed.ok()) << listed.error_message();
}

TEST_F(RateLimitTest, AdminCallsCountAgainstTheHost) {
  StartLimited("limits: {frontend_rps: 3}\n");
  auto admin = tock::admin::v1::AdminService::NewStub(channel_);
  ExpectRpsLimit(FirstRefusal(60,
                              [&] {
                                return Call(*admin,
                                            &tock::admin::v1::AdminService::Stub::DescribeCluster,
                                            tock::admin::v1::DescribeClusterRequest());
                              }),
                 enums::RESOURCE_EXHAUSTED_SCOPE_SYSTEM,
                 "service rate limit exceeded: this host is limited to 3 requests per second "
                 "(limits.frontend_rps)");
}

TEST_F(RateLimitTest, TockExitsUnavailableWithTheServersMessage) {
  StartLimited(kConfig);
  ProcessResult refused;
  for (int i = 0; i < 60; ++i) {
    refused = Tock({"namespace", "describe", "orders", "-o", "json"});
    if (refused.exit_code != kExitOk) break;
  }
  EXPECT_EQ(refused.exit_code, kExitUnavailable) << refused.err;
  EXPECT_EQ(refused.err,
            "error: namespace rate limit exceeded: namespace \"orders\" is limited to 5 requests "
            "per second on this host (limits.namespace_rps_overrides)\n");
  EXPECT_EQ(refused.out, "");
}

TEST_F(RateLimitTest, BadLimitRefusesToStartNamingTheKey) {
  server_ = std::make_unique<ServerProcess>(TOCK_SERVER_BIN);
  EXPECT_FALSE(server_->Start(
      {"--config", dir_.Write("bad.yaml", "limits: {namespace_rps_overrides: {orders: -5}}\n")}));
  EXPECT_EQ(server_->exit_code(), 2);
  EXPECT_NE(server_->error().find("config limits.namespace_rps_overrides.orders: must be between "
                                  "0 (no limit) and 1000000 requests per second; got -5"),
            std::string::npos)
      << server_->error();
}

}  // namespace
}  // namespace tock::testing
