// `tock worker list|describe|count` against a real tock-server holding heartbeats sent with
// RecordWorkerHeartbeat, as an SDK worker sends them: table, card and JSON output, a query,
// a bad query and an unknown worker with their exit codes.
#include <grpcpp/grpcpp.h>

#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

namespace wf = temporal::api::workflowservice::v1;

class WorkerCliTest : public CliTest {
 protected:
  void Heartbeat(const std::string& key, const std::string& queue) {
    auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    auto stub = wf::WorkflowService::NewStub(channel);
    wf::RecordWorkerHeartbeatRequest req;
    req.set_namespace_("default");
    auto* h = req.add_worker_heartbeat();
    h->set_worker_instance_key(key);
    h->set_worker_identity("pid@" + key);
    h->set_task_queue(queue);
    h->set_sdk_name("temporal-typescript");
    h->set_sdk_version("1.24.0");
    h->mutable_host_info()->set_host_name("web-1");
    h->set_status(temporal::api::enums::v1::WORKER_STATUS_RUNNING);
    h->mutable_start_time()->set_seconds(1'800'000'000);
    h->mutable_workflow_poller_info()->set_current_pollers(2);
    grpc::ClientContext ctx;
    wf::RecordWorkerHeartbeatResponse out;
    const grpc::Status s = stub->RecordWorkerHeartbeat(&ctx, req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
};

TEST_F(WorkerCliTest, ListDescribeAndCountTheWorkersThatHeartbeat) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ProcessResult r = Tock({"worker", "list", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "No workers heartbeat to this namespace.\n");
  EXPECT_EQ(TockJson({"worker", "list"}), json::array());

  ASSERT_NO_FATAL_FAILURE(Heartbeat("w-1", "orders"));
  ASSERT_NO_FATAL_FAILURE(Heartbeat("w-2", "payments"));
  r = Tock({"worker", "list", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("INSTANCE KEY"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("w-1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("temporal-typescript 1.24.0"), std::string::npos) << r.out;

  json listed = TockJson({"worker", "list", "--query", "TaskQueue = 'orders'"});
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  EXPECT_EQ(At(listed[0], "/workerInstanceKey"), "w-1");
  EXPECT_EQ(At(listed[0], "/status"), "WORKER_STATUS_RUNNING");
  EXPECT_EQ(TockJson({"worker", "list", "--limit", "1"}).size(), 1u);

  json counted = TockJson({"worker", "count", "--query", "HostName = 'web-1'"});
  EXPECT_EQ(At(counted, "/count"), 2) << counted.dump();

  r = Tock({"worker", "describe", "--worker-instance-key", "w-2", "-o", "card"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("payments"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Workflow pollers"), std::string::npos) << r.out;
  json described = TockJson({"worker", "describe", "--worker-instance-key", "w-2"});
  EXPECT_EQ(At(described, "/workerHeartbeat/workflowPollerInfo/currentPollers"), 2) << described.dump();

  r = Tock({"worker", "describe", "--worker-instance-key", "nobody"});
  EXPECT_EQ(r.exit_code, kExitNotFound) << r.err;
  EXPECT_NE(r.err.find("worker not found"), std::string::npos) << r.err;
  r = Tock({"worker", "count", "--query", "Colour = 'red'"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("unknown field"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tock::testing
