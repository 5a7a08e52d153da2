// The REPL inspector's `branches` (and `tock workflow describe-state`) against a real
// in-process tock-server, and against a frontend that, like Temporal's, serves the
// WorkflowService but not Tock's AdminService: the inspector then shows the loaded
// history's version items, as it did before branches were stored.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cmd/tock/repl/inspector.h"
#include "tests/support/dispatcher_server.h"
#include "tests/unit/cli/cli_runner.h"

namespace tock::cli::testing {
namespace {

namespace wf = temporal::api::workflowservice::v1;

// Serves the two WorkflowService calls the inspector opens a run with, by asking the real
// server; every other method (tock.admin.v1.AdminService's among them) is UNIMPLEMENTED.
class TemporalLikeFrontend {
 public:
  explicit TemporalLikeFrontend(const std::string& tock_address) {
    client::ConnectionOptions options;
    options.address = tock_address;
    auto connection = client::Connection::Open(options);
    EXPECT_TRUE(connection.ok()) << connection.status();
    if (connection.ok()) connection_ = std::move(*connection);
    // Its handlers wait on the real server's answers: on threads of their own, not gRPC's
    // callback threads, which the real server's handlers need meanwhile.
    tock::server::rpc::Dispatcher& dispatcher = server_.dispatcher();
    dispatcher.RunHandlersOnThreads(2);
    const std::string service = "temporal.api.workflowservice.v1.WorkflowService/";
    dispatcher.AddUnary<wf::GetWorkflowExecutionHistoryRequest,
                        wf::GetWorkflowExecutionHistoryResponse>(
        service + "GetWorkflowExecutionHistory",
        [this](const wf::GetWorkflowExecutionHistoryRequest& req, const tock::server::rpc::CallContext&) {
          return connection_->Call(&wf::WorkflowService::Stub::GetWorkflowExecutionHistory,
                                   connection_->workflow(), req);
        });
    dispatcher.AddUnary<wf::DescribeWorkflowExecutionRequest,
                        wf::DescribeWorkflowExecutionResponse>(
        service + "DescribeWorkflowExecution",
        [this](const wf::DescribeWorkflowExecutionRequest& req, const tock::server::rpc::CallContext&) {
          return connection_->Call(&wf::WorkflowService::Stub::DescribeWorkflowExecution,
                                   connection_->workflow(), req);
        });
    EXPECT_TRUE(server_.Start());
  }
  const std::string& address() const { return server_.address(); }

 private:
  std::unique_ptr<client::Connection> connection_;
  tock::testing::DispatcherServer server_;
};

// `inspector branches -o json` on the run of `workflow_id` through `address`.
struct BranchesOutput {
  absl::Status status;
  nlohmann::json rows;
  std::string err;
};
BranchesOutput Branches(const std::string& address, const std::string& workflow_id) {
  std::istringstream in;
  std::ostringstream out, err;
  CommandContext ctx(in, out, err, false, false);
  ctx.options.address = address;
  ctx.options.namespace_name = "default";
  ctx.options.output = "json";
  auto inspector = repl::HistoryInspector::Open(ctx, workflow_id, "");
  if (!inspector.ok()) return {inspector.status(), {}, err.str()};
  out.str("");
  absl::Status s = (*inspector)->Execute({"branches"});
  BranchesOutput result{s, {}, err.str()};
  if (s.ok()) result.rows = nlohmann::json::parse(out.str());
  return result;
}

class InspectorBranchesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok());
    // Started, its first workflow task scheduled: events 1 and 2, one version.
    CliResult started = RunTock({"--address", server_.address(), "workflow", "start", "--type",
                                 "order", "--task-queue", "nobody", "--id", "branches-1"});
    ASSERT_EQ(started.code, 0) << started.err;
  }
  InProcessServer server_;
};

TEST_F(InspectorBranchesTest, EveryBranchOfTheRunFromTheServerTheCurrentOneMarked) {
  BranchesOutput b = Branches(server_.address(), "branches-1");
  ASSERT_TRUE(b.status.ok()) << b.status;
  ASSERT_TRUE(b.rows.is_array()) << b.rows;
  ASSERT_EQ(b.rows.size(), 1u) << b.rows;  // a run never forked: one branch, one item
  EXPECT_EQ(b.rows[0]["branch"], 0);
  EXPECT_EQ(b.rows[0]["isCurrent"], true);
  EXPECT_EQ(b.rows[0]["branchToken"], "");
  EXPECT_EQ(b.rows[0]["eventId"], "2");
  EXPECT_EQ(b.rows[0]["version"], "0");
  EXPECT_EQ(b.err, "");

  // The same run through describe-state: a card, then the branch table.
  CliResult card = RunTock({"--address", server_.address(), "-o", "table", "workflow",
                            "describe-state", "--workflow-id", "branches-1"});
  ASSERT_EQ(card.code, 0) << card.err;
  EXPECT_NE(card.out.find("State:"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("CREATED"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("Branches:"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("1 (current: 0)"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("BRANCH"), std::string::npos) << card.out;
}

TEST_F(InspectorBranchesTest, AFrontendWithoutTheCallGetsTheHistorysVersionItems) {
  TemporalLikeFrontend temporal(server_.address());
  BranchesOutput b = Branches(temporal.address(), "branches-1");
  ASSERT_TRUE(b.status.ok()) << b.status;
  ASSERT_EQ(b.rows.size(), 1u) << b.rows;
  EXPECT_EQ(b.rows[0]["eventId"], "2");
  EXPECT_EQ(b.rows[0]["version"], "0");
  EXPECT_FALSE(b.rows[0].contains("branch")) << b.rows;
  EXPECT_NE(b.err.find("this server does not describe branches"), std::string::npos) << b.err;

  // describe-state says why it cannot answer (exit 1, not a crash or a bare UNIMPLEMENTED).
  CliResult state = RunTock({"--address", temporal.address(), "workflow", "describe-state",
                             "--workflow-id", "branches-1"});
  EXPECT_EQ(state.code, 1) << state.err;
  EXPECT_NE(state.err.find("this server does not describe mutable state"), std::string::npos)
      << state.err;
}

}  // namespace
}  // namespace tock::cli::testing
