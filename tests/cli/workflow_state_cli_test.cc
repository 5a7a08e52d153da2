// `tock workflow describe-state` against a real tock-server: a normal run has one branch, the
// current one, with one version item; the card and the branch table; the state follows the
// run (CREATED, RUNNING, COMPLETED); -o json is the DescribeMutableStateResponse with the
// whole mutable state as JSON; unknown namespaces, workflows and runs, bad run ids and
// oversized workflow ids are refused with the server's messages and the contract's exit codes.
#include <regex>

#include "tests/cli/cli_fixture.h"
#include "tests/cli/test_worker.h"

namespace tock::testing {
namespace {

class WorkflowStateCliTest : public CliTest {
 protected:
  void SetUp() override { StartServer(); }

  json State(const std::string& id, const std::string& run_id = "") {
    std::vector<std::string> args = {"workflow", "describe-state", "--workflow-id", id};
    if (!run_id.empty()) args.insert(args.end(), {"--run-id", run_id});
    return TockJson(args);
  }
};

TEST_F(WorkflowStateCliTest, ANormalRunHasOneCurrentBranch) {
  ProcessResult started =
      Tock({"workflow", "start", "--type", "order", "--task-queue", "q-state", "--id", "state-1"});
  ASSERT_EQ(started.exit_code, kExitOk) << started.err;
  // Before a worker took the first workflow task: CREATED, events 1-2 on the one branch.
  json s = State("state-1");
  EXPECT_EQ(At(s, "/workflowId"), "state-1");
  EXPECT_EQ(At(s, "/state"), "CREATED");
  EXPECT_EQ(At(s, "/status"), "WORKFLOW_EXECUTION_STATUS_RUNNING");
  EXPECT_EQ(At(s, "/isCurrentRun"), true);
  ASSERT_EQ(At(s, "/branches").size(), 1u) << s.dump();
  EXPECT_EQ(At(s, "/branches/0/isCurrent"), true);
  ASSERT_EQ(At(s, "/branches/0/items").size(), 1u) << s.dump();
  EXPECT_EQ(At(s, "/branches/0/items/0/eventId"), "2");
  EXPECT_EQ(At(s, "/workflowTask/scheduledEventId"), "2");
  EXPECT_EQ(At(s, "/workflowTask/taskQueue"), "q-state");

  // A worker completes the first task: RUNNING, the branch's one item now ends at event 4.
  TestWorker worker(server_->address(), "q-state");
  auto task = worker.PollWorkflowTask();
  ASSERT_FALSE(task.task_token().empty());
  worker.CompleteWorkflowTask(task.task_token());
  s = State("state-1");
  const std::string run_id = At(s, "/runId").get<std::string>();
  EXPECT_EQ(At(s, "/state"), "RUNNING");
  EXPECT_EQ(At(s, "/zombie"), false) << s.dump();
  EXPECT_EQ(At(s, "/nextEventId"), "5");
  ASSERT_EQ(At(s, "/branches").size(), 1u) << s.dump();
  ASSERT_EQ(At(s, "/branches/0/items").size(), 1u) << s.dump();
  EXPECT_EQ(At(s, "/branches/0/items/0/eventId"), "4");
  // The last write version is the version of that item (a local namespace's: 0).
  EXPECT_EQ(At(s, "/branches/0/items/0/version"), "0");
  EXPECT_EQ(At(s, "/lastWriteVersion"), "0");
  EXPECT_EQ(At(s, "/workflowTask"), json()) << "no workflow task pending";
  // The whole mutable state, for debugging.
  ASSERT_TRUE(At(s, "/mutableStateJson").is_string()) << s.dump();
  json whole = json::parse(At(s, "/mutableStateJson").get<std::string>());
  EXPECT_EQ(At(whole, "/execution/runId"), run_id);
  EXPECT_EQ(At(whole, "/versionHistories/histories/0/items/0/eventId"), "4");

  // The card and the branch table.
  ProcessResult table = Tock({"workflow", "describe-state", "-w", "state-1", "-o", "table"});
  ASSERT_EQ(table.exit_code, kExitOk) << table.err;
  for (const char* line : {"Workflow id: +state-1", "Current run: +yes", "State: +RUNNING",
                           "Zombie: +no", "Last write version: +0", "Next event id: +5",
                           "Workflow task: +none", "Branches: +1 \\(current: 0\\)",
                           "BRANCH +CURRENT +TOKEN +EVENTS +VERSION", "\n0 +yes +- +1-4 +0\n"}) {
    EXPECT_TRUE(std::regex_search(table.out, std::regex(line))) << line << "\n" << table.out;
  }

  // Closed: COMPLETED, whatever the close; the run asked for by id is still current.
  ASSERT_EQ(Tock({"workflow", "terminate", "-w", "state-1", "--reason", "done"}).exit_code,
            kExitOk);
  s = State("state-1", run_id);
  EXPECT_EQ(At(s, "/state"), "COMPLETED");
  EXPECT_EQ(At(s, "/status"), "WORKFLOW_EXECUTION_STATUS_TERMINATED");
  EXPECT_EQ(At(s, "/isCurrentRun"), true);
  EXPECT_EQ(At(s, "/branches/0/items/0/eventId"), "5");
}

TEST_F(WorkflowStateCliTest, UnknownNamesAndBadIdsAreRefused) {
  ExpectError({"workflow", "describe-state", "-w", "nope"}, kExitNotFound,
              "Workflow execution not found. WorkflowId: nope, RunId: .");
  ExpectError({"workflow", "describe-state", "-w", "nope", "-r",
               "5f0b4b0e-6c43-4d0e-9a4e-0d5b6f1d2c3a"},
              kExitNotFound,
              "Workflow execution not found. WorkflowId: nope, RunId: "
              "5f0b4b0e-6c43-4d0e-9a4e-0d5b6f1d2c3a.");
  ExpectError({"-n", "no-such-ns", "workflow", "describe-state", "-w", "nope"}, kExitNotFound,
              "Namespace no-such-ns is not found.");
  ExpectError({"workflow", "describe-state", "-w", "nope", "-r", "not-a-uuid"}, kExitUsage,
              "Invalid RunId.");
  ExpectError({"workflow", "describe-state", "-w", std::string(1001, 'w')}, kExitUsage,
              "WorkflowId exceeds length limit (1000 characters).");
  // A run id of another workflow is not found under this one.
  ASSERT_EQ(Tock({"workflow", "start", "--type", "t", "--task-queue", "q", "--id", "other"})
                .exit_code,
            kExitOk);
  const std::string other = At(State("other"), "/runId").get<std::string>();
  ExpectError({"workflow", "describe-state", "-w", "nope", "-r", other}, kExitNotFound,
              "Workflow execution not found. WorkflowId: nope, RunId: " + other + ".");
}

}  // namespace
}  // namespace tock::testing
