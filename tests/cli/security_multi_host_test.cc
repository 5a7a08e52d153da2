// Security across the hosts of one PostgreSQL database (issue 15), two tock-server processes
// on the run's shared PostgreSQL, a fresh database per test:
//   - The hosts mark the calls they make of each other with the database's host secret
//     (server-core/routing/peer_credential.h). A client sending the `tock-forwarded` header
//     without it is an ordinary client: routed to the owner, rate limited; a call genuinely
//     forwarded by the other host is not counted again by the owner.
//   - `authorization:` on both hosts: calls about workflows whose shards the other host owns
//     are authorized by the host the client called, forwarded, and succeed; no token, a
//     reader's token for a write, or a forged header are refused there; the hosts' own
//     HostService calls need no certificate mapping (no TLS at all here).
// Which host owns what: tests/cli/two_hosts_test.h.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/common/grpc_status.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tests/cli/two_hosts_test.h"
#include "tests/support/test_jwt.h"
#include "tock/cluster/v1/host_service.grpc.pb.h"

namespace tock::testing {
namespace {

namespace wf = temporal::api::workflowservice::v1;

class SecurityMultiHostTest : public TwoHostsTest {
 protected:
  SecurityMultiHostTest() : TwoHostsTest("tock_security_hosts") {}

  static absl::Status DescribeWorkflow(wf::WorkflowService::Stub& stub, const std::string& id,
                                       const std::vector<std::pair<std::string, std::string>>&
                                           metadata = {}) {
    grpc::ClientContext ctx;
    Prepare(ctx, metadata);
    wf::DescribeWorkflowExecutionRequest req;
    req.set_namespace_("orders");
    req.mutable_execution()->set_workflow_id(id);
    wf::DescribeWorkflowExecutionResponse resp;
    absl::Status s = FromGrpcStatus(stub.DescribeWorkflowExecution(&ctx, req, &resp));
    if (s.ok() && resp.workflow_execution_info().execution().workflow_id() != id) {
      return absl::InternalError("described another workflow");
    }
    return s;
  }

  // The first RESOURCE_EXHAUSTED of `n` calls (OK when none was).
  template <typename Call>
  static absl::Status FirstRefusal(int n, Call call) {
    for (int i = 0; i < n; ++i) {
      absl::Status s = call();
      if (s.code() == absl::StatusCode::kResourceExhausted) return s;
    }
    return absl::OkStatus();
  }
};

// A namespace held at 1 call a second on B and 1,000 on A: B's own clients and a client
// forging the header on B are refused; calls A forwards to B are not counted by B (20 back to
// back, all served, where B's bucket would let one through); a forged header sent to A does
// not keep A from routing the call to B, the owner.
TEST_F(SecurityMultiHostTest, OnlyTheHostsSecretMarksACallAsForwarded) {
  ASSERT_NO_FATAL_FAILURE(StartHosts(
      Config("a.yaml", "limits: {namespace_rps: 1000}\nlog: {level: debug}\n"),
      Config("b.yaml", "limits: {namespace_rps: 1000, namespace_rps_overrides: {orders: 1}}\n"
                       "log: {level: debug}\n")));
  auto a = Stub(*a_), b = Stub(*b_);
  std::string namespace_id;
  ASSERT_TRUE(DescribeNamespace(*a, &namespace_id).ok());
  const std::vector<std::string> on_b = WorkflowsOn(*b_, namespace_id, "wf", 2);
  ASSERT_EQ(on_b.size(), 2u);

  // Through A, with and without a forged header: A routes to B (a host running it itself
  // would answer "history shard N is not owned by this host").
  ASSERT_TRUE(StartWorkflow(*a, on_b[0], "q").ok());
  for (const std::string forged : {std::string("1"), std::string(64, 'a')}) {
    absl::Status s = DescribeWorkflow(*a, on_b[0], {{"tock-forwarded", forged}});
    EXPECT_TRUE(s.ok()) << forged << ": " << s;
  }
  absl::Status forged_start = StartWorkflow(*a, on_b[1], "q", {{"tock-forwarded", "1"}});
  EXPECT_TRUE(forged_start.ok()) << forged_start;
  EXPECT_TRUE(DescribeWorkflow(*b, on_b[1]).ok());

  // B's bucket for orders spent by its own client; a forged header is counted the same.
  ASSERT_FALSE(FirstRefusal(60, [&] { return DescribeNamespace(*b, nullptr); }).ok());
  for (const std::string forged : {std::string("1"), std::string(64, 'a')}) {
    absl::Status refused = FirstRefusal(20, [&] {
      return DescribeNamespace(*b, nullptr, {{"tock-forwarded", forged}});
    });
    EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << forged << ": " << refused;
  }
  // What A forwards to B is not counted on B: A counted it.
  for (int i = 0; i < 20; ++i) {
    absl::Status s = DescribeWorkflow(*a, on_b[0]);
    ASSERT_TRUE(s.ok()) << i << ": " << s;
  }
  // B's own clients are still held at 1 a second.
  EXPECT_FALSE(FirstRefusal(60, [&] { return DescribeNamespace(*b, nullptr); }).ok());

  // The secret the hosts share (what the database holds; offering another keeps it) is in
  // neither host's debug log, which has every refusal above.
  absl::StatusOr<std::string> secret =
      persistence_->cluster_metadata().InitHostSecret(std::string(64, 'f'));
  ASSERT_TRUE(secret.ok()) << secret.status();
  EXPECT_EQ(secret->size(), 64u);
  EXPECT_NE(*secret, std::string(64, 'f'));
  for (ServerProcess* host : {a_.get(), b_.get()}) {
    const std::string log = host->stderr_text();
    if (host == b_.get()) EXPECT_TRUE(absl::StrContains(log, "rate limit exceeded")) << log;
    EXPECT_FALSE(absl::StrContains(log, *secret));
    EXPECT_FALSE(absl::StrContains(log, secret->substr(0, 16)));
  }
}

// Both hosts with `authorization:` (a JWKS file, tokens signed here), no TLS (which a shared
// database allows only when the config says the hosts' network is private:
// plaintext_host_calls): the client calls A about workflows whose shards B owns.
TEST_F(SecurityMultiHostTest, AuthorizationHoldsAcrossHosts) {
  TestSigningKey key(TestSigningKey::Kind::kRsa, "rsa-1");
  const std::string jwks = dir_.Write("jwks.json", JwksOf({&key}));
  const std::string config =
      Config("hosts.yaml", "authorization:\n  jwks: " + jwks +
                               "\n  issuer: https://idp.test\n  plaintext_host_calls: true\n");
  ASSERT_NO_FATAL_FAILURE(StartHosts(config, config));
  auto token = [&](const std::string& permission) {
    return key.Sign({{"sub", "tester"},
                     {"iss", "https://idp.test"},
                     {"exp", UnixNow() + 600},
                     {"permissions", {permission}}});
  };
  const std::string writer = token("orders:write"), reader = token("orders:read"),
                    worker = token("orders:worker");
  auto bearer = [](const std::string& t) {
    return std::vector<std::pair<std::string, std::string>>{{"authorization", "Bearer " + t}};
  };
  auto a = Stub(*a_), b = Stub(*b_);
  std::string namespace_id;
  ASSERT_TRUE(DescribeNamespace(*a, &namespace_id, bearer(reader)).ok());
  const std::vector<std::string> on_b = WorkflowsOn(*b_, namespace_id, "authz-wf", 4);
  ASSERT_EQ(on_b.size(), 4u);
  const std::string queue_on_a = QueueOn(*a_, namespace_id);
  ASSERT_FALSE(queue_on_a.empty());
  auto tock = [&](const std::string& api_key, std::vector<std::string> args) {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", a_->address(), "-n", "orders"};
    if (!api_key.empty()) argv.insert(argv.end(), {"--api-key", api_key});
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  };

  // A writer starts and describes, through A, workflows that B owns.
  for (int i = 0; i < 2; ++i) {
    ProcessResult started = tock(writer, {"workflow", "start", "--type", "T", "--task-queue",
                                          queue_on_a, "--workflow-id", on_b[i]});
    ASSERT_EQ(started.exit_code, 0) << on_b[i] << ": " << started.err;
    ProcessResult described =
        tock(writer, {"workflow", "describe", "--workflow-id", on_b[i], "-o", "json"});
    ASSERT_EQ(described.exit_code, 0) << on_b[i] << ": " << described.err;
    EXPECT_TRUE(absl::StrContains(described.out, on_b[i])) << described.out;
  }
  // No token: refused by A, before anything is forwarded.
  ProcessResult anonymous = tock("", {"workflow", "start", "--type", "T", "--task-queue", "q",
                                      "--workflow-id", on_b[2]});
  EXPECT_EQ(anonymous.exit_code, 1) << anonymous.err;
  EXPECT_EQ(anonymous.err,
            "error: StartWorkflowExecution on namespace \"orders\" needs the write role: no "
            "bearer token in the authorization header, and no client certificate with a "
            "configured subject\n");
  // A reader may describe what B owns, through A, but not start there.
  ProcessResult read = tock(reader, {"workflow", "describe", "--workflow-id", on_b[0]});
  EXPECT_EQ(read.exit_code, 0) << read.err;
  ProcessResult denied = tock(reader, {"workflow", "start", "--type", "T", "--task-queue", "q",
                                       "--workflow-id", on_b[2]});
  EXPECT_EQ(denied.exit_code, 1) << denied.err;
  EXPECT_EQ(denied.err,
            "error: StartWorkflowExecution on namespace \"orders\" needs the write role\n");
  // A client claiming to be a host, on either host: still no token, no call; a HostService
  // call of its own needs the system role.
  for (ServerProcess* host : {a_.get(), b_.get()}) {
    absl::Status forged =
        StartWorkflow(*Stub(*host), on_b[3], "q", {{"tock-forwarded", "1"}});
    EXPECT_EQ(forged.code(), absl::StatusCode::kUnauthenticated) << forged;
    grpc::ClientContext ctx;
    Prepare(ctx, {{"tock-forwarded", "1"}});
    tock::cluster::v1::AddTaskResponse added;
    auto host_service = tock::cluster::v1::HostService::NewStub(
        grpc::CreateChannel(host->address(), grpc::InsecureChannelCredentials()));
    const grpc::Status add = host_service->AddTask(&ctx, tock::cluster::v1::AddTaskRequest(), &added);
    EXPECT_EQ(add.error_code(), grpc::StatusCode::UNAUTHENTICATED) << add.error_message();
    EXPECT_TRUE(absl::StartsWith(add.error_message(), "AddTask needs the temporal-system:admin role"))
        << add.error_message();
  }
  for (ServerProcess* host : {a_.get(), b_.get()}) {
    EXPECT_EQ(DescribeWorkflow(*Stub(*host), on_b[2], bearer(reader)).code(),
              absl::StatusCode::kNotFound);
    EXPECT_EQ(DescribeWorkflow(*Stub(*host), on_b[3], bearer(reader)).code(),
              absl::StatusCode::kNotFound);
  }

  // The hosts' own calls: the first workflow tasks of B's workflows sit on a queue A owns
  // (handed over by HostService/AddTask, or read by A from the database); a worker polling
  // A gets one only once A has recorded it started on B, the shard's owner
  // (HostService/History). Neither host maps any certificate: the host secret lets them in.
  std::vector<std::string> polled;
  for (int i = 0; i < 2; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    ctx.AddMetadata("authorization", "Bearer " + worker);
    wf::PollWorkflowTaskQueueRequest req;
    req.set_namespace_("orders");
    req.mutable_task_queue()->set_name(queue_on_a);
    req.set_identity("security-multi-host-test");
    wf::PollWorkflowTaskQueueResponse resp;
    const grpc::Status s = a->PollWorkflowTaskQueue(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_FALSE(resp.task_token().empty()) << "no task within the poll";
    polled.push_back(resp.workflow_execution().workflow_id());
  }
  std::sort(polled.begin(), polled.end());
  std::vector<std::string> started = {on_b[0], on_b[1]};
  std::sort(started.begin(), started.end());
  EXPECT_EQ(polled, started);
  for (ServerProcess* host : {a_.get(), b_.get()}) {
    EXPECT_FALSE(absl::StrContains(host->stderr_text(), writer.substr(0, 40)));
  }
}

}  // namespace
}  // namespace tock::testing
