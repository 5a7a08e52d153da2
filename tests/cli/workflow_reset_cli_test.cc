// `tock workflow reset` against a real tock-server, with a worker of raw WorkflowService
// calls (test_worker.h) completing the workflow tasks, so that the runs have points to reset
// to: by --event-id, by --type (the point found in the history), the reapply type, refused
// points with the server's messages, usage errors, unknown workflows, LastContinuedAsNew, and
// reset batches by --query.
#include <map>

#include "tests/cli/cli_fixture.h"
#include "tests/cli/test_worker.h"

namespace tock::testing {
namespace {

constexpr char kResetCause[] = "WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW";

class WorkflowResetCliTest : public CliTest {
 protected:
  void SetUp() override { StartServer(); }

  // The worker of workflow `id`'s own task queue (one per workflow: the new workflow task of
  // a reset run never reaches another test workflow's worker).
  TestWorker& Worker(const std::string& id) {
    auto& w = workers_[id];
    if (!w) w = std::make_unique<TestWorker>(server_->address(), "q-" + id);
    return *w;
  }

  // Starts workflow `id` of `type` and completes `tasks` workflow tasks, each after the first
  // brought by a signal "go". With 2 tasks the history is: 1 WorkflowExecutionStarted,
  // 2 WorkflowTaskScheduled, 3 WorkflowTaskStarted, 4 WorkflowTaskCompleted,
  // 5 WorkflowExecutionSignaled, 6 WorkflowTaskScheduled, 7 WorkflowTaskStarted,
  // 8 WorkflowTaskCompleted. Returns the run id.
  std::string StartWithTasks(const std::string& id, int tasks, const std::string& type = "order") {
    std::vector<std::string> args = {"workflow",     "start",   "--type", type,
                                     "--task-queue", "q-" + id, "--id",   id};
    ProcessResult r = Tock(args);
    EXPECT_EQ(r.exit_code, kExitOk) << Describe(args, r);
    for (int i = 0; i < tasks; ++i) {
      if (i > 0) {
        EXPECT_EQ(Tock({"workflow", "signal", "-w", id, "--name", "go"}).exit_code, kExitOk);
      }
      auto task = Worker(id).PollWorkflowTask();
      EXPECT_FALSE(task.task_token().empty()) << "no workflow task for " << id;
      Worker(id).CompleteWorkflowTask(task.task_token());
    }
    return CurrentRun(id);
  }

  std::string CurrentRun(const std::string& id) {
    json d = TockJson({"workflow", "describe", "--workflow-id", id});
    const json run = At(d, "/workflowExecutionInfo/execution/runId");
    return run.is_string() ? run.get<std::string>() : "";
  }

  json RunStatus(const std::string& id, const std::string& run_id) {
    return At(TockJson({"workflow", "describe", "-w", id, "-r", run_id}),
              "/workflowExecutionInfo/status");
  }

  // The decoded events of a run (`workflow show -o jsonl`).
  std::vector<json> History(const std::string& id, const std::string& run_id) {
    return TockJsonLines({"workflow", "show", "--workflow-id", id, "--run-id", run_id});
  }

  // `tock workflow reset ... -o json`: must exit 0 and print {workflowId, runId}; the run id.
  std::string Reset(std::vector<std::string> args) {
    args.insert(args.begin(), {"workflow", "reset"});
    json out = TockJson(args);
    EXPECT_EQ(At(out, "/workflowId"), args[3]) << out.dump();
    EXPECT_EQ(out.size(), 2u) << out.dump();
    const json run = At(out, "/runId");
    EXPECT_TRUE(run.is_string() && !run.get<std::string>().empty()) << out.dump();
    return run.is_string() ? run.get<std::string>() : "";
  }

  std::map<std::string, std::unique_ptr<TestWorker>> workers_;
};

std::vector<std::string> Types(const std::vector<json>& events) {
  std::vector<std::string> out;
  for (const json& e : events) out.push_back(At(e, "/eventType").get<std::string>());
  return out;
}

// The run's WorkflowTaskFailed event of a reset, checked: its id, cause, runs and reason.
void ExpectResetEvent(const std::vector<json>& events, int64_t event_id,
                      const std::string& base_run, const std::string& new_run,
                      const std::string& reason) {
  ASSERT_GE(events.size(), static_cast<size_t>(event_id)) << json(events).dump();
  const json& e = events[event_id - 1];
  EXPECT_EQ(At(e, "/eventId"), std::to_string(event_id)) << e.dump();
  EXPECT_EQ(At(e, "/eventType"), "EVENT_TYPE_WORKFLOW_TASK_FAILED") << e.dump();
  EXPECT_EQ(At(e, "/workflowTaskFailedEventAttributes/cause"), kResetCause) << e.dump();
  EXPECT_EQ(At(e, "/workflowTaskFailedEventAttributes/baseRunId"), base_run) << e.dump();
  EXPECT_EQ(At(e, "/workflowTaskFailedEventAttributes/newRunId"), new_run) << e.dump();
  EXPECT_EQ(At(e, "/workflowTaskFailedEventAttributes/failure/message"), reason) << e.dump();
}

// ---- one workflow ----------------------------------------------------------------------------

TEST_F(WorkflowResetCliTest, ResetByEventIdStartsANewRunThatRecordsTheReset) {
  const std::string base = StartWithTasks("order-1", 2);
  const std::string run =
      Reset({"--workflow-id", "order-1", "--event-id", "4", "--reason", "bad deploy"});
  EXPECT_NE(run, base);
  EXPECT_EQ(CurrentRun("order-1"), run);
  EXPECT_EQ(RunStatus("order-1", base), "WORKFLOW_EXECUTION_STATUS_TERMINATED");
  EXPECT_EQ(RunStatus("order-1", run), "WORKFLOW_EXECUTION_STATUS_RUNNING");

  // Events 1-3 kept, the task of the point failed by the reset, the signal received after
  // the point sent again (--reapply-type Signal is the default), a new workflow task.
  const std::vector<json> events = History("order-1", run);
  ASSERT_NO_FATAL_FAILURE(ExpectResetEvent(events, 4, base, run, "bad deploy"));
  EXPECT_EQ(Types(events), (std::vector<std::string>{
                               "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED",
                               "EVENT_TYPE_WORKFLOW_TASK_SCHEDULED",
                               "EVENT_TYPE_WORKFLOW_TASK_STARTED",
                               "EVENT_TYPE_WORKFLOW_TASK_FAILED",
                               "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED",
                               "EVENT_TYPE_WORKFLOW_TASK_SCHEDULED",
                           }));

  // Again, from the new run, in a table and without reapplying the signal.
  std::vector<std::string> args = {
      "workflow", "reset", "-w",    "order-1",        "-e",  "4", "--reason",
      "again",    "-o",    "table", "--reapply-type", "None"};
  ProcessResult r = Tock(args);
  ASSERT_EQ(r.exit_code, kExitOk) << Describe(args, r);
  const std::string third = CurrentRun("order-1");
  EXPECT_NE(third, run);
  EXPECT_EQ(r.out, "Reset order-1: new run " + third + "\n");
  EXPECT_EQ(r.err, "");
  const std::vector<json> again = History("order-1", third);
  ASSERT_NO_FATAL_FAILURE(ExpectResetEvent(again, 4, run, third, "again"));
  for (const std::string& type : Types(again)) {
    EXPECT_NE(type, "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED") << "reapplied with None";
  }
}

TEST_F(WorkflowResetCliTest, ResetByTypeFindsThePointInTheHistory) {
  // FirstWorkflowTask: the first WorkflowTaskCompleted event (4).
  const std::string first_base = StartWithTasks("first", 2);
  const std::string first = Reset(
      {"--workflow-id", "first", "--type", "FirstWorkflowTask", "--reason", "from the start"});
  EXPECT_EQ(CurrentRun("first"), first);
  ASSERT_NO_FATAL_FAILURE(
      ExpectResetEvent(History("first", first), 4, first_base, first, "from the start"));

  // LastWorkflowTask: the last one (8); the signal before it is kept, not reapplied.
  const std::string last_base = StartWithTasks("last", 2);
  const std::string last =
      Reset({"-w", "last", "-t", "LastWorkflowTask", "--reason", "redo the last task"});
  const std::vector<json> events = History("last", last);
  ASSERT_NO_FATAL_FAILURE(ExpectResetEvent(events, 8, last_base, last, "redo the last task"));
  int signals = 0;
  for (const std::string& type : Types(events)) {
    signals += type == "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED";
  }
  EXPECT_EQ(signals, 1);

  // An explicit run id is the run read and reset.
  const std::string by_run =
      Reset({"-w", "last", "-r", last, "--type", "FirstWorkflowTask", "--reason", "by run id"});
  ASSERT_NO_FATAL_FAILURE(ExpectResetEvent(History("last", by_run), 4, last, by_run, "by run id"));
}

TEST_F(WorkflowResetCliTest, PointsThatAreNotAWorkflowTaskAreRefusedByTheServer) {
  const std::string base = StartWithTasks("order-2", 2);  // events 1-8
  // The event before the point must be a WorkflowTaskScheduled or WorkflowTaskStarted.
  for (const std::string id : {"2", "5", "6"}) {
    ExpectError({"workflow", "reset", "-w", "order-2", "--event-id", id, "--reason", "r"},
                kExitUsage,
                "Can only reset workflow to event ID in range [WorkflowTaskScheduled +1, "
                "WorkflowTaskStarted + 1]: " +
                    id);
  }
  for (const std::string id : {"1", "9", "99", "-3"}) {
    ExpectError({"workflow", "reset", "-w", "order-2", "--event-id", id, "--reason", "r"},
                kExitUsage, "Workflow task finish ID must be > 1 && <= workflow last event ID.");
  }
  EXPECT_EQ(CurrentRun("order-2"), base);
  EXPECT_EQ(RunStatus("order-2", base), "WORKFLOW_EXECUTION_STATUS_RUNNING");
}

TEST_F(WorkflowResetCliTest, UsageErrorsAreExitTwoBeforeAnythingIsSent) {
  ExpectError({"workflow", "reset", "-w", "w", "--reason", "r"}, kExitUsage,
              "give --event-id or --type: the event to reset to (the id of a "
              "WorkflowTaskCompleted event), or FirstWorkflowTask, LastWorkflowTask or "
              "LastContinuedAsNew");
  ExpectError({"workflow", "reset", "-w", "w", "--event-id", "4", "--type", "LastWorkflowTask",
               "--reason", "r"},
              kExitUsage, "--event-id and --type cannot be used together: give one of them");
  ExpectError({"workflow", "reset", "-w", "w", "--event-id", "four", "--reason", "r"}, kExitUsage,
              "invalid --event-id \"four\": give the id of a WorkflowTaskCompleted event (tock "
              "workflow show lists them)");
  ExpectError({"workflow", "reset", "-w", "w", "--event-id", "4", "--reason", " "}, kExitUsage,
              "--reason is empty: say why (it is recorded in the new run's history)");
  ExpectError({"workflow", "reset", "--event-id", "4", "--reason", "r"}, kExitUsage,
              "give --workflow-id (reset one workflow) or --query (a batch over the workflows it "
              "matches)");
  ExpectError({"workflow", "reset", "-w", "w", "--query", "WorkflowType = 'order'", "--type",
               "FirstWorkflowTask", "--reason", "r"},
              kExitUsage,
              "--workflow-id and --query cannot be used together: reset one workflow, or start a "
              "batch over the workflows of a query");
  ExpectError({"workflow", "reset", "--query", "WorkflowType = 'order'", "--event-id", "4",
               "--reason", "r", "--yes"},
              kExitUsage,
              "--event-id cannot be used with --query: event ids differ from run to run; give "
              "--type FirstWorkflowTask or LastWorkflowTask");
  ExpectError({"workflow", "reset", "--query", "WorkflowType = 'order'", "--reason", "r", "--yes"},
              kExitUsage, "give --type with --query: FirstWorkflowTask or LastWorkflowTask");
  ExpectError({"workflow", "reset", "--query", "WorkflowType = 'order'", "--type",
               "LastContinuedAsNew", "--reason", "r", "--yes"},
              kExitUsage,
              "--type LastContinuedAsNew cannot be used with --query: give FirstWorkflowTask or "
              "LastWorkflowTask");
  ExpectError({"workflow", "reset", "--query", "WorkflowType = 'order'", "-r", "run", "--type",
               "LastWorkflowTask", "--reason", "r", "--yes"},
              kExitUsage,
              "--run-id cannot be used with --query: a batch resets the run of each workflow "
              "the query matches");

  // The parser's own: a missing --reason, a --type or --reapply-type outside their sets.
  ProcessResult r = Tock({"workflow", "reset", "-w", "w", "--event-id", "4"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_EQ(r.err, "error: --reason is required\nRun 'tock workflow reset --help' for usage.\n");
  EXPECT_EQ(r.out, "");
  r = Tock({"workflow", "reset", "-w", "w", "--type", "Last", "--reason", "r"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_EQ(r.err,
            "error: --type: Last not in {FirstWorkflowTask,LastWorkflowTask,LastContinuedAsNew}\n"
            "Run 'tock workflow reset --help' for usage.\n");
  r = Tock({"workflow", "reset", "-w", "w", "-e", "4", "--reason", "r", "--reapply-type", "All"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_EQ(r.err.rfind("error: --reapply-type: All not in {Signal,None}", 0), 0u) << r.err;
}

TEST_F(WorkflowResetCliTest, UnknownWorkflowsAreNotFound) {
  ExpectError({"workflow", "reset", "-w", "nope", "--event-id", "4", "--reason", "r"},
              kExitNotFound, "Workflow execution not found. WorkflowId: nope, RunId: .");
  ExpectError({"workflow", "reset", "-w", "nope", "--type", "FirstWorkflowTask", "--reason", "r"},
              kExitNotFound, "Workflow execution not found. WorkflowId: nope, RunId: .");
}

TEST_F(WorkflowResetCliTest, ARunWithoutTheTypesPointIsAnError) {
  const std::string run = StartWithTasks("fresh", 0);  // no workflow task completed yet
  for (const std::string type : {"FirstWorkflowTask", "LastWorkflowTask"}) {
    ExpectError({"workflow", "reset", "-w", "fresh", "--type", type, "--reason", "r"}, kExitError,
                "run " + run +
                    " of workflow fresh has no completed workflow task to reset to "
                    "(--type " +
                    type + ")");
  }
  ExpectError({"workflow", "reset", "-w", "fresh", "--type", "LastContinuedAsNew", "--reason", "r"},
              kExitError,
              "run " + run +
                  " of workflow fresh was not continued from another run: --type "
                  "LastContinuedAsNew resets the run that continued as new into it");
  EXPECT_EQ(CurrentRun("fresh"), run);
}

TEST_F(WorkflowResetCliTest, LastContinuedAsNewResetsThePreviousRunAndEndsTheCurrentOne) {
  const std::string first = StartWithTasks("chain", 1);
  ASSERT_EQ(Tock({"workflow", "signal", "-w", "chain", "--name", "go"}).exit_code, kExitOk);
  auto task = Worker("chain").PollWorkflowTask();
  ASSERT_FALSE(task.task_token().empty());
  temporal::api::command::v1::Command continue_as_new;
  continue_as_new.set_command_type(
      temporal::api::enums::v1::COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION);
  auto* attrs = continue_as_new.mutable_continue_as_new_workflow_execution_command_attributes();
  attrs->mutable_workflow_type()->set_name("order");
  attrs->mutable_task_queue()->set_name("q-chain");
  Worker("chain").CompleteWorkflowTask(task.task_token(), {continue_as_new});
  const std::string second = CurrentRun("chain");
  ASSERT_NE(second, first);

  // The point is in the first run (its last completed task), which is no longer the current
  // one: the running second run is terminated, and the new run takes over from it.
  const std::string reset = Reset({"-w", "chain", "--type", "LastContinuedAsNew", "--reason", "r"});
  EXPECT_EQ(CurrentRun("chain"), reset);
  EXPECT_NE(reset, first);
  EXPECT_NE(reset, second);
  EXPECT_EQ(RunStatus("chain", second), "WORKFLOW_EXECUTION_STATUS_TERMINATED");
  EXPECT_EQ(RunStatus("chain", reset), "WORKFLOW_EXECUTION_STATUS_RUNNING");
}

TEST_F(WorkflowResetCliTest, CompletionOffersTheTypesAndTheWorkflowIds) {
  StartWithTasks("order-9", 0);
  auto complete = [&](std::vector<std::string> words) {
    words.insert(words.begin(), "__complete");
    ProcessResult r = Tock(words);
    EXPECT_EQ(r.exit_code, kExitOk) << Describe(words, r);
    EXPECT_EQ(r.err, "") << Describe(words, r);
    return r.out;
  };
  EXPECT_EQ(complete({"workflow", "reset", "--type", ""}),
            "FirstWorkflowTask\nLastWorkflowTask\nLastContinuedAsNew\n");
  EXPECT_EQ(complete({"workflow", "reset", "-w", "order-9", "--type", "Last"}),
            "LastWorkflowTask\nLastContinuedAsNew\n");
  EXPECT_EQ(complete({"workflow", "reset", "--reapply-type", ""}), "Signal\nNone\n");
  EXPECT_EQ(complete({"workflow", "reset", "--workflow-id", "order-"}).rfind("order-9", 0), 0u);
  const std::string commands = complete({"workflow", "res"});
  EXPECT_NE(commands.find("reset\tReset a workflow to one of its workflow tasks"),
            std::string::npos)
      << commands;
}

// ---- a batch over a query --------------------------------------------------------------------

TEST_F(WorkflowResetCliTest, QueryResetsEveryMatchingWorkflowAsABatch) {
  const std::string a = StartWithTasks("b-1", 2);
  const std::string b = StartWithTasks("b-2", 1);
  const std::string other = StartWithTasks("x-1", 1, "other");
  const std::vector<std::string> start = {
      "workflow",          "reset",    "--query", "WorkflowType = 'order'", "--type",
      "FirstWorkflowTask", "--reason", "fixed"};

  // Off a terminal without --yes nothing starts.
  ExpectError(start, kExitUsage,
              "refusing to start batch reset without confirmation: pass --yes (standard input is "
              "not a terminal)");
  // On a terminal the count, then the question; "n" starts nothing.
  std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", server_->address(), "-o", "json"};
  argv.insert(argv.end(), start.begin(), start.end());
  ProcessResult no =
      RunProcess(argv, {}, "n\n", std::chrono::seconds(15), {.stdin_is_terminal = true});
  EXPECT_EQ(no.exit_code, kExitError) << no.err;
  EXPECT_NE(no.err.find("Start batch against approximately 2 workflow(s)? [y/N] "),
            std::string::npos)
      << no.err;
  EXPECT_NE(no.err.find("error: did not start batch reset (answer y to go ahead)"),
            std::string::npos)
      << no.err;
  EXPECT_TRUE(TockJsonLines({"batch", "list"}).empty());
  EXPECT_EQ(CurrentRun("b-1"), a);

  std::vector<std::string> yes = start;
  yes.push_back("--yes");
  json done = TockJson(yes);
  EXPECT_EQ(At(done, "/state"), "BATCH_OPERATION_STATE_COMPLETED") << done.dump();
  EXPECT_EQ(At(done, "/operationType"), "BATCH_OPERATION_TYPE_RESET") << done.dump();
  EXPECT_EQ(At(done, "/totalOperationCount"), "2") << done.dump();
  EXPECT_EQ(At(done, "/completeOperationCount"), "2") << done.dump();
  EXPECT_EQ(At(done, "/reason"), "fixed") << done.dump();

  for (const auto& [id, base] : {std::pair{"b-1", a}, std::pair{"b-2", b}}) {
    SCOPED_TRACE(id);
    const std::string run = CurrentRun(id);
    EXPECT_NE(run, base);
    ASSERT_NO_FATAL_FAILURE(ExpectResetEvent(History(id, run), 4, base, run, "fixed"));
  }
  EXPECT_EQ(CurrentRun("x-1"), other);
}

}  // namespace
}  // namespace tock::testing
