// `tock activity complete|fail` and `tock workflow stack` against a real tock-server, with
// a worker of raw WorkflowService calls (test_worker.h) holding the worker's side: it
// schedules and takes the activities, and answers the __stack_trace query.
#include <future>

#include "tests/cli/cli_fixture.h"
#include "tests/cli/test_worker.h"

namespace tock::testing {
namespace {

// The first event of `type` ("EVENT_TYPE_ACTIVITY_TASK_COMPLETED"), or null.
json FindEvent(const std::vector<json>& events, const std::string& type) {
  for (const json& e : events) {
    if (At(e, "/eventType") == type) return e;
  }
  return json();
}

class ActivityCliTest : public CliTest {
 protected:
  // Starts workflow `id` on queue "q" and answers its first workflow task by scheduling
  // `activities`, which the worker then takes (they are started).
  void StartWithActivities(const std::string& id, const std::vector<std::string>& activities) {
    ProcessResult r = Tock({"workflow", "start", "--type", "t", "--task-queue", "q", "--id", id});
    ASSERT_EQ(r.exit_code, kExitOk) << r.err;
    auto task = worker_->PollWorkflowTask();
    ASSERT_FALSE(task.task_token().empty()) << "no workflow task";
    std::vector<temporal::api::command::v1::Command> commands;
    for (const std::string& a : activities) commands.push_back(worker_->ScheduleActivity(a));
    worker_->CompleteWorkflowTask(task.task_token(), commands);
    for (size_t i = 0; i < activities.size(); ++i) {
      ASSERT_FALSE(worker_->PollActivityTask().task_token().empty()) << "no activity task";
    }
  }

  // The decoded events of a run (`workflow show -o jsonl`: payloads shown as values).
  std::vector<json> History(const std::string& id) {
    return TockJsonLines({"workflow", "show", "--workflow-id", id});
  }

  void SetUp() override {
    StartServer();
    worker_ = std::make_unique<TestWorker>(server_->address(), "q");
  }

  std::unique_ptr<TestWorker> worker_;
};

TEST_F(ActivityCliTest, CompleteRecordsTheResultAndASecondCompleteIsNotFound) {
  ASSERT_NO_FATAL_FAILURE(StartWithActivities("order-1", {"charge"}));
  json done = TockJson({"activity", "complete", "--workflow-id", "order-1", "--activity-id",
                        "charge", "--result", R"({"ok": true, "id": 7})"});
  EXPECT_EQ(done,
            json({{"workflowId", "order-1"}, {"activityId", "charge"}, {"result", "completed"}}));

  json completed = FindEvent(History("order-1"), "EVENT_TYPE_ACTIVITY_TASK_COMPLETED");
  ASSERT_FALSE(completed.is_null()) << "no ActivityTaskCompleted event";
  EXPECT_EQ(At(completed, "/activityTaskCompletedEventAttributes/result"),
            json({{"ok", true}, {"id", 7}}));
  EXPECT_EQ(At(completed, "/activityTaskCompletedEventAttributes/identity"), "tock");

  ExpectError({"activity", "complete", "--workflow-id", "order-1", "--activity-id", "charge",
               "--result", "1"},
              kExitNotFound, "Activity charge of workflow order-1 is not running.");
}

TEST_F(ActivityCliTest, FailRecordsANonRetryableFailureWithItsDetail) {
  ASSERT_NO_FATAL_FAILURE(StartWithActivities("order-2", {"charge", "ship"}));
  ProcessResult r =
      Tock({"activity", "fail", "--workflow-id", "order-2", "--activity-id", "charge", "--reason",
            "card declined", "--detail", R"({"code": 51})", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "Workflow id:  order-2\nActivity id:  charge\nResult:       failed\n");
  // Without --detail, and addressed by run id.
  json described = TockJson({"workflow", "describe", "--workflow-id", "order-2"});
  const std::string run_id = At(described, "/workflowExecutionInfo/execution/runId");
  EXPECT_EQ(Tock({"activity", "fail", "-w", "order-2", "-r", run_id, "--activity-id", "ship",
                  "--reason", "no truck"})
                .exit_code,
            kExitOk);

  std::vector<json> events = History("order-2");
  std::vector<json> failures;
  for (const json& e : events) {
    if (At(e, "/eventType") == "EVENT_TYPE_ACTIVITY_TASK_FAILED") failures.push_back(e);
  }
  ASSERT_EQ(failures.size(), 2u) << "each failure is final (not retried)";
  const json first = At(failures[0], "/activityTaskFailedEventAttributes/failure");
  EXPECT_EQ(At(first, "/message"), "card declined");
  EXPECT_EQ(At(first, "/source"), "tock");
  EXPECT_EQ(At(first, "/applicationFailureInfo/nonRetryable"), true);
  EXPECT_EQ(At(first, "/applicationFailureInfo/details"), json({{"code", 51}}));
  const json second = At(failures[1], "/activityTaskFailedEventAttributes/failure");
  EXPECT_EQ(At(second, "/message"), "no truck");
  EXPECT_FALSE(At(second, "/applicationFailureInfo").contains("details")) << second.dump();
}

TEST_F(ActivityCliTest, BadInputIsExitTwoAndUnknownTargetsAreNotFound) {
  // Checked before anything is sent.
  ExpectError(
      {"activity", "complete", "--workflow-id", "w", "--activity-id", "a", "--result", "not json"},
      kExitUsage,
      "invalid --result \"not json\": give one JSON value, for example '\"done\"', 42 or "
      "'{\"k\": 1}'");
  ExpectError({"activity", "fail", "--workflow-id", "w", "--activity-id", "a", "--reason", "r",
               "--detail", "{"},
              kExitUsage,
              "invalid --detail \"{\": give one JSON value, for example '\"done\"', 42 or "
              "'{\"k\": 1}'");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"activity", "complete", "--workflow-id", "w", "--result", "1"},
           {"activity", "complete", "--activity-id", "a", "--result", "1"},
           {"activity", "complete", "--workflow-id", "w", "--activity-id", "a"},
           {"activity", "fail", "--workflow-id", "w", "--activity-id", "a"}}) {
    ProcessResult r = Tock(args);
    EXPECT_EQ(r.exit_code, kExitUsage) << Describe(args, r);
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << Describe(args, r);
    EXPECT_EQ(r.out, "") << Describe(args, r);
  }

  ExpectError(
      {"activity", "complete", "--workflow-id", "nope", "--activity-id", "a", "--result", "1"},
      kExitNotFound, "Workflow execution not found. WorkflowId: nope, RunId: .");
  // Scheduled but not taken by a worker: not running yet.
  ASSERT_EQ(
      Tock({"workflow", "start", "--type", "t", "--task-queue", "q", "--id", "idle"}).exit_code,
      kExitOk);
  auto task = worker_->PollWorkflowTask();
  worker_->CompleteWorkflowTask(task.task_token(), {worker_->ScheduleActivity("later")});
  ExpectError(
      {"activity", "fail", "--workflow-id", "idle", "--activity-id", "later", "--reason", "x"},
      kExitNotFound, "Activity later of workflow idle is not running.");
}

TEST_F(ActivityCliTest, StackPrintsTheWorkersAnswerToTheStackTraceQuery) {
  ASSERT_EQ(
      Tock({"workflow", "start", "--type", "t", "--task-queue", "q", "--id", "stuck"}).exit_code,
      kExitOk);
  // The first workflow task done: queries go to the worker from now on.
  worker_->CompleteWorkflowTask(worker_->PollWorkflowTask().task_token());
  const std::string trace = "coroutine root [blocked on signal]:\n\tat main (workflow.ts:12)";

  for (const std::string output : {"table", "json"}) {
    SCOPED_TRACE(output);
    std::future<ProcessResult> stack = std::async(std::launch::async, [&] {
      return Tock({"workflow", "stack", "--workflow-id", "stuck", "-o", output});
    });
    auto query = worker_->PollWorkflowTask();
    ASSERT_TRUE(query.has_query()) << query.DebugString();
    EXPECT_EQ(query.query().query_type(), "__stack_trace");
    worker_->AnswerQuery(query.task_token(), json(trace).dump());
    ProcessResult r = stack.get();
    ASSERT_EQ(r.exit_code, kExitOk) << r.err;
    if (output == "table") {
      EXPECT_EQ(r.out, trace + "\n");
    } else {
      EXPECT_EQ(json::parse(r.out, nullptr, false),
                json({{"workflowId", "stuck"}, {"stackTrace", trace}}))
          << r.out;
    }
  }
}

TEST_F(ActivityCliTest, StackWithoutAWorkerTimesOutAndOfAnUnknownWorkflowIsNotFound) {
  ASSERT_EQ(Tock({"workflow", "start", "--type", "t", "--task-queue", "nobody", "--id", "lonely"})
                .exit_code,
            kExitOk);
  std::vector<std::string> args = {"--timeout",     "2s",    "workflow", "stack",
                                   "--workflow-id", "lonely"};
  ProcessResult r = Tock(args);
  EXPECT_EQ(r.exit_code, kExitUnavailable) << Describe(args, r);
  const std::string prefix =
      "error: the server at " + server_->address() + " did not answer within 2s (";
  EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << Describe(args, r);
  EXPECT_EQ(r.out, "");

  ExpectError({"workflow", "stack", "--workflow-id", "nope"}, kExitNotFound,
              "Workflow execution not found. WorkflowId: nope, RunId: .");
}

}  // namespace
}  // namespace tock::testing
