// `tock worker deployment ...` against a real tock-server: a version registered by a
// versioned worker's poll (sent here as the SDK sends it), listed and described (table, card
// and JSON), made current and ramping (each after a describe for the conflict token, and
// only with --yes off a terminal), metadata, the manager identity, creation and deletion with
// their errors and exit codes, and live completion of deployment names.
#include <grpcpp/grpcpp.h>

#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

namespace wf = temporal::api::workflowservice::v1;

class WorkerDeploymentCliTest : public CliTest {
 protected:
  // A versioned worker of billing:`build` polls queue "bills" once (it registers the
  // version), waiting at most a moment.
  void VersionedPoll(const std::string& build) {
    auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    auto stub = wf::WorkflowService::NewStub(channel);
    wf::PollWorkflowTaskQueueRequest req;
    req.set_namespace_("default");
    req.mutable_task_queue()->set_name("bills");
    req.set_identity("worker-" + build);
    auto* options = req.mutable_deployment_options();
    options->set_deployment_name("billing");
    options->set_build_id(build);
    options->set_worker_versioning_mode(temporal::api::enums::v1::WORKER_VERSIONING_MODE_VERSIONED);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(1200));
    wf::PollWorkflowTaskQueueResponse out;
    const grpc::Status s = stub->PollWorkflowTaskQueue(&ctx, req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
};

TEST_F(WorkerDeploymentCliTest, ListDescribeRouteAndDeleteVersions) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ProcessResult r = Tock({"worker", "deployment", "list", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "No Worker Deployments: a versioned worker's first poll makes one.\n");

  ASSERT_NO_FATAL_FAILURE(VersionedPoll("v1"));
  ASSERT_NO_FATAL_FAILURE(VersionedPoll("v2"));
  json listed = TockJson({"worker", "deployment", "list"});
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  EXPECT_EQ(At(listed[0], "/name"), "billing");
  r = Tock({"worker", "deployment", "describe", "--name", "billing", "-o", "card"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("Version v2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Inactive"), std::string::npos) << r.out;
  json version = TockJson({"worker", "deployment", "describe-version", "--deployment-name",
                           "billing", "--build-id", "v1"});
  EXPECT_EQ(At(version, "/workerDeploymentVersionInfo/taskQueueInfos/0/name"), "bills") << version.dump();

  // A routing change wants --yes off a terminal, and asks nothing of the server without it.
  r = Tock({"worker", "deployment", "set-current-version", "--deployment-name", "billing",
            "--build-id", "v1"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("pass --yes"), std::string::npos) << r.err;
  r = Tock({"worker", "deployment", "set-current-version", "--deployment-name", "billing",
            "--build-id", "v1", "--yes"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  r = Tock({"worker", "deployment", "set-ramping-version", "--deployment-name", "billing",
            "--build-id", "v2", "--percentage", "25", "--yes"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  json described = TockJson({"worker", "deployment", "describe", "--name", "billing"});
  EXPECT_EQ(At(described, "/workerDeploymentInfo/routingConfig/currentDeploymentVersion/buildId"), "v1");
  EXPECT_EQ(At(described, "/workerDeploymentInfo/routingConfig/rampingVersionPercentage"), 25);
  r = Tock({"worker", "deployment", "set-ramping-version", "--deployment-name", "billing",
            "--build-id", "v1", "--percentage", "10", "--yes"});
  EXPECT_EQ(r.exit_code, kExitError) << r.err;  // FAILED_PRECONDITION
  EXPECT_NE(r.err.find("requested ramping version billing:v1 is already current"), std::string::npos) << r.err;
  r = Tock({"worker", "deployment", "set-ramping-version", "--deployment-name", "billing",
            "--build-id", "v2", "--percentage", "150", "--yes"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  r = Tock({"worker", "deployment", "set-ramping-version", "--deployment-name", "billing",
            "--delete", "--yes"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;

  json meta = TockJson({"worker", "deployment", "update-version-metadata", "--deployment-name",
                        "billing", "--build-id", "v1", "--metadata", "ticket=\"OPS-12\""});
  EXPECT_EQ(At(meta, "/metadata/entries/ticket"), "OPS-12") << meta.dump();
  r = Tock({"worker", "deployment", "update-version-metadata", "--deployment-name", "billing",
            "--build-id", "v1", "--metadata", "ticket"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;

  r = Tock({"--identity", "release-bot", "worker", "deployment", "manager-identity", "set",
            "--deployment-name", "billing", "--self", "--yes"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  r = Tock({"--identity", "someone", "worker", "deployment", "set-current-version",
            "--deployment-name", "billing", "--unversioned", "--yes"});
  EXPECT_EQ(r.exit_code, kExitError) << r.err;  // FAILED_PRECONDITION
  EXPECT_NE(r.err.find("ManagerIdentity 'release-bot' is set"), std::string::npos) << r.err;
  r = Tock({"--identity", "release-bot", "worker", "deployment", "manager-identity", "unset",
            "--deployment-name", "billing", "--yes"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;

  r = Tock({"worker", "deployment", "delete-version", "--deployment-name", "billing",
            "--build-id", "v1"});
  EXPECT_EQ(r.exit_code, kExitError) << r.err;  // FAILED_PRECONDITION
  EXPECT_NE(r.err.find("cannot be deleted since it is current or ramping"), std::string::npos) << r.err;
  r = Tock({"worker", "deployment", "delete", "--name", "billing"});
  EXPECT_EQ(r.exit_code, kExitError) << r.err;  // FAILED_PRECONDITION
  r = Tock({"worker", "deployment", "describe", "--name", "shipping"});
  EXPECT_EQ(r.exit_code, kExitNotFound) << r.err;

  r = Tock({"worker", "deployment", "create", "--name", "shipping"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  r = Tock({"worker", "deployment", "create-version", "--deployment-name", "shipping",
            "--build-id", "s1"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  r = Tock({"worker", "deployment", "delete-version", "--deployment-name", "shipping",
            "--build-id", "s1"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  r = Tock({"worker", "deployment", "delete", "--name", "shipping"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;

  // Deployment names complete from the server.
  r = Tock({"__complete", "worker", "deployment", "describe", "--name", "bi"});
  EXPECT_EQ(r.out, "billing\tcurrent v1\n") << r.err;
}

}  // namespace
}  // namespace tock::testing
