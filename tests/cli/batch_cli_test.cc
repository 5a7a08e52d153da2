// `tock batch terminate|cancel|signal|delete|list|describe|stop` against a real tock-server:
// what is refused before anything starts (usage, --rps, --yes off a terminal), the question
// on a terminal, batches that run to the end over workflows nobody works on (started on a
// task queue nobody polls), their effect on the workflows, the job's card and list, stopping,
// and job ids completed from the server.
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

constexpr char kOrders[] = "WorkflowType = 'order'";

class BatchCliTest : public CliTest {
 protected:
  void SetUp() override { StartServer(); }

  // Starts workflow `id` of `type` on a task queue nobody polls: it stays Running.
  void StartWorkflow(const std::string& id, const std::string& type = "order") {
    std::vector<std::string> args = {"workflow",     "start",        "--type", type,
                                     "--task-queue", "nobody-polls", "--id",   id};
    ProcessResult r = Tock(args);
    ASSERT_EQ(r.exit_code, kExitOk) << Describe(args, r);
  }

  // The status of a workflow's current run ("WORKFLOW_EXECUTION_STATUS_TERMINATED").
  json Status(const std::string& id) {
    return At(TockJson({"workflow", "describe", "--workflow-id", id}),
              "/workflowExecutionInfo/status");
  }

  // The batch jobs of the namespace (ListBatchOperations as JSON lines).
  std::vector<json> Jobs() { return TockJsonLines({"batch", "list"}); }

  // DescribeBatchOperation until the job is no longer running (20 s at most).
  json WaitForJob(const std::string& job_id) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    json d;
    while (std::chrono::steady_clock::now() < deadline) {
      d = TockJson({"batch", "describe", "--job-id", job_id});
      if (At(d, "/state") != "BATCH_OPERATION_STATE_RUNNING") return d;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "batch " << job_id << " still running: " << d.dump();
    return d;
  }

  // The events of a workflow's history of `type` (EVENT_TYPE_...).
  std::vector<json> Events(const std::string& id, const std::string& type) {
    json history = TockJson({"workflow", "show", "--workflow-id", id});
    std::vector<json> out;
    for (const json& e : At(history, "/events")) {
      if (At(e, "/eventType") == type) out.push_back(e);
    }
    return out;
  }
};

bool IsTerminate(const json& type) {
  return type == "BATCH_OPERATION_TYPE_TERMINATE" ||
         type == "BATCH_OPERATION_TYPE_TERMINATE_WORKFLOW";
}

// ---- refused before anything starts ------------------------------------------------------

TEST_F(BatchCliTest, MissingFlagsAreUsageErrors) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"batch", "terminate", "--reason", "r", "--yes"},
           {"batch", "terminate", "--query", kOrders, "--yes"},
           {"batch", "cancel", "--reason", "r", "--yes"},
           {"batch", "delete", "--query", kOrders, "--yes"},
           {"batch", "signal", "--query", kOrders, "--reason", "r", "--yes"},
           {"batch", "describe"},
           {"batch", "stop", "--job-id", "j"},
           {"batch", "stop", "--reason", "r"}}) {
    ProcessResult r = Tock(args);
    EXPECT_EQ(r.exit_code, kExitUsage) << Describe(args, r);
    EXPECT_NE(r.err.find("is required"), std::string::npos) << Describe(args, r);
    EXPECT_EQ(r.out, "") << Describe(args, r);
  }
  ProcessResult r = Tock({"batch", "terminate", "--reason", "r", "--yes"});
  EXPECT_EQ(r.err, "error: --query is required\nRun 'tock batch terminate --help' for usage.\n");
  EXPECT_TRUE(Jobs().empty());
}

TEST_F(BatchCliTest, BadValuesAreUsageErrorsBeforeAnythingStarts) {
  for (const std::string rps : {"abc", "0", "-5", "inf", "nan", "1x"}) {
    ExpectError({"batch", "terminate", "--query", kOrders, "--reason", "r", "--rps", rps, "--yes"},
                kExitUsage,
                "invalid --rps \"" + rps +
                    "\": give a positive number of operations per second, e.g. 50 or 0.5 "
                    "(default: the server's limit)");
  }
  ExpectError({"batch", "terminate", "--query", "  ", "--reason", "r", "--yes"}, kExitUsage,
              "--query is empty: give the visibility query of the workflows to change, e.g. "
              "\"WorkflowType = 'order' AND ExecutionStatus = 'Running'\"");
  ExpectError({"batch", "cancel", "--query", kOrders, "--reason", "", "--yes"}, kExitUsage,
              "--reason is empty: say why (it is recorded with the batch)");
  ExpectError({"batch", "signal", "--query", kOrders, "--reason", "r", "--name", "go", "--input",
               "{not json", "--yes"},
              kExitUsage,
              "invalid --input \"{not json\": each input is one JSON value, for example "
              "'\"text\"', 42 or '{\"k\": 1}'");
  // A query the server cannot read.
  ProcessResult r =
      Tock({"batch", "terminate", "--query", "WorkflowType = ", "--reason", "r", "--yes"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_TRUE(Jobs().empty());
}

TEST_F(BatchCliTest, RefusesWithoutYesOffATerminal) {
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-1"));
  for (const std::string kind : {"terminate", "cancel", "delete"}) {
    ExpectError({"batch", kind, "--query", kOrders, "--reason", "r"}, kExitUsage,
                "refusing to start batch " + kind +
                    " without confirmation: pass --yes (standard input is not a terminal)");
  }
  ExpectError({"batch", "signal", "--query", kOrders, "--reason", "r", "--name", "go"}, kExitUsage,
              "refusing to start batch signal without confirmation: pass --yes (standard input "
              "is not a terminal)");
  EXPECT_TRUE(Jobs().empty());
  EXPECT_EQ(Status("o-1"), "WORKFLOW_EXECUTION_STATUS_RUNNING");
}

TEST_F(BatchCliTest, AsksOnATerminalWithTheCountOfTheQuery) {
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-1"));
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-2"));
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("x-1", "other"));
  const std::vector<std::string> argv = {
      TOCK_CLI_BIN, "--address", server_->address(), "batch",   "terminate", "--query", kOrders,
      "--reason",   "asked",     "--job-id",         "asked-1", "-o",        "json"};
  ProcessResult no =
      RunProcess(argv, {}, "n\n", std::chrono::seconds(15), {.stdin_is_terminal = true});
  EXPECT_EQ(no.exit_code, kExitError) << no.err;
  EXPECT_NE(no.err.find("Start batch against approximately 2 workflow(s)? [y/N] "),
            std::string::npos)
      << no.err;
  EXPECT_NE(no.err.find("error: did not start batch terminate (answer y to go ahead)"),
            std::string::npos)
      << no.err;
  EXPECT_EQ(no.out, "");
  EXPECT_TRUE(Jobs().empty());
  EXPECT_EQ(Status("o-1"), "WORKFLOW_EXECUTION_STATUS_RUNNING");

  ProcessResult yes =
      RunProcess(argv, {}, "y\n", std::chrono::seconds(30), {.stdin_is_terminal = true});
  ASSERT_EQ(yes.exit_code, kExitOk) << yes.err;
  json done = json::parse(yes.out, nullptr, false);
  ASSERT_FALSE(done.is_discarded()) << yes.out;
  EXPECT_EQ(At(done, "/jobId"), "asked-1");
  EXPECT_EQ(At(done, "/state"), "BATCH_OPERATION_STATE_COMPLETED");
  EXPECT_EQ(Status("o-1"), "WORKFLOW_EXECUTION_STATUS_TERMINATED");
  EXPECT_EQ(Status("o-2"), "WORKFLOW_EXECUTION_STATUS_TERMINATED");
  EXPECT_EQ(Status("x-1"), "WORKFLOW_EXECUTION_STATUS_RUNNING");
}

// ---- batches that run to the end ---------------------------------------------------------

TEST_F(BatchCliTest, TerminateWaitsForTheEndAndPrintsTheJob) {
  for (const std::string id : {"o-1", "o-2", "o-3"}) ASSERT_NO_FATAL_FAILURE(StartWorkflow(id));
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("x-1", "other"));

  // Not a terminal and no -o: the DescribeBatchOperationResponse as JSON, once finished.
  std::vector<std::string> args = {"batch",   "terminate", "--query",  kOrders, "--reason",
                                   "cleanup", "--yes",     "--job-id", "term-1"};
  ProcessResult r = Tock(args);
  ASSERT_EQ(r.exit_code, kExitOk) << Describe(args, r);
  EXPECT_EQ(r.err, "");
  json done = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(done.is_discarded()) << r.out;
  EXPECT_EQ(At(done, "/jobId"), "term-1");
  EXPECT_EQ(At(done, "/state"), "BATCH_OPERATION_STATE_COMPLETED");
  EXPECT_TRUE(IsTerminate(At(done, "/operationType"))) << done.dump();
  EXPECT_EQ(At(done, "/reason"), "cleanup");
  EXPECT_EQ(At(done, "/query"), kOrders);
  EXPECT_EQ(At(done, "/totalOperationCount"), "3");
  EXPECT_EQ(At(done, "/completeOperationCount"), "3");
  EXPECT_EQ(At(done, "/failureOperationCount"), "0");
  EXPECT_GT(TimestampNanos(At(done, "/closeTime")), 0) << done.dump();

  for (const std::string id : {"o-1", "o-2", "o-3"}) {
    EXPECT_EQ(Status(id), "WORKFLOW_EXECUTION_STATUS_TERMINATED") << id;
    std::vector<json> terminated = Events(id, "EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED");
    ASSERT_EQ(terminated.size(), 1u) << id;
    EXPECT_EQ(At(terminated[0], "/workflowExecutionTerminatedEventAttributes/reason"), "cleanup");
  }
  EXPECT_EQ(Status("x-1"), "WORKFLOW_EXECUTION_STATUS_RUNNING");
  std::vector<json> still = TockJsonLines(
      {"workflow", "list", "--query", "WorkflowType = 'order' AND ExecutionStatus = 'Running'"});
  EXPECT_TRUE(still.empty());
}

TEST_F(BatchCliTest, NoWaitPrintsANewUuidAtOnce) {
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-1"));
  json started =
      TockJson({"batch", "terminate", "--query", kOrders, "--reason", "r", "--yes", "--no-wait"});
  ASSERT_TRUE(started.is_object()) << started.dump();
  EXPECT_EQ(started.size(), 1u) << started.dump();
  const std::string job_id = At(started, "/jobId").get<std::string>();
  // A version-4 UUID, lower case: 8-4-4-4-12.
  ASSERT_EQ(job_id.size(), 36u) << job_id;
  EXPECT_EQ(job_id[14], '4') << job_id;
  for (size_t i : {8u, 13u, 18u, 23u}) EXPECT_EQ(job_id[i], '-') << job_id;
  json done = WaitForJob(job_id);
  EXPECT_EQ(At(done, "/state"), "BATCH_OPERATION_STATE_COMPLETED");
  EXPECT_EQ(At(done, "/completeOperationCount"), "1");
  EXPECT_EQ(Status("o-1"), "WORKFLOW_EXECUTION_STATUS_TERMINATED");

  ProcessResult card = Tock({"batch", "terminate", "--query", kOrders, "--reason", "r", "--yes",
                             "--no-wait", "--job-id", "nw-2", "-o", "card"});
  ASSERT_EQ(card.exit_code, kExitOk) << card.err;
  EXPECT_EQ(card.out, "Job id:  nw-2\n");
}

TEST_F(BatchCliTest, CancelRequestsCancellation) {
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-1"));
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-2"));
  json done = TockJson({"batch", "cancel", "--query", kOrders, "--reason", "customer left", "--yes",
                        "--job-id", "cancel-1"});
  EXPECT_EQ(At(done, "/state"), "BATCH_OPERATION_STATE_COMPLETED");
  EXPECT_EQ(At(done, "/completeOperationCount"), "2");
  for (const std::string id : {"o-1", "o-2"}) {
    // Nobody runs the workflow's code: the request waits in its history.
    EXPECT_EQ(Events(id, "EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED").size(), 1u) << id;
  }
}

TEST_F(BatchCliTest, SignalSendsTheNameAndInputs) {
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-1"));
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-2"));
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("x-1", "other"));
  json done = TockJson({"batch", "signal", "--query", kOrders, "--reason", "bulk approve", "--name",
                        "approve", "--input", R"({"by": "ops"})", "--input", "7", "--yes"});
  EXPECT_EQ(At(done, "/state"), "BATCH_OPERATION_STATE_COMPLETED");
  EXPECT_EQ(At(done, "/completeOperationCount"), "2");
  for (const std::string id : {"o-1", "o-2"}) {
    std::vector<json> signaled = Events(id, "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED");
    ASSERT_EQ(signaled.size(), 1u) << id;
    const json attributes = At(signaled[0], "/workflowExecutionSignaledEventAttributes");
    EXPECT_EQ(At(attributes, "/signalName"), "approve");
    // json/plain payloads, compact JSON: {"by":"ops"} and 7.
    EXPECT_EQ(At(attributes, "/input/payloads/0/metadata/encoding"), "anNvbi9wbGFpbg==");
    EXPECT_EQ(At(attributes, "/input/payloads/0/data"), "eyJieSI6Im9wcyJ9");
    EXPECT_EQ(At(attributes, "/input/payloads/1/data"), "Nw==");
  }
  EXPECT_TRUE(Events("x-1", "EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED").empty());
}

TEST_F(BatchCliTest, DeleteRemovesTheRuns) {
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-1"));
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-2"));
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("x-1", "other"));
  json done = TockJson(
      {"batch", "delete", "--query", kOrders, "--reason", "cleanup", "--yes", "--rps", "50"});
  EXPECT_EQ(At(done, "/state"), "BATCH_OPERATION_STATE_COMPLETED");
  EXPECT_EQ(At(done, "/completeOperationCount"), "2");
  // Deletion may finish after the batch answered: wait for the runs to be gone.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (const std::string id : {"o-1", "o-2"}) {
    ProcessResult r;
    do {
      r = Tock({"workflow", "describe", "--workflow-id", id});
      if (r.exit_code == kExitNotFound) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (std::chrono::steady_clock::now() < deadline);
    EXPECT_EQ(r.exit_code, kExitNotFound) << id << ": " << r.out << r.err;
  }
  EXPECT_EQ(Status("x-1"), "WORKFLOW_EXECUTION_STATUS_RUNNING");
}

TEST_F(BatchCliTest, AQueryMatchingNothingCompletesWithNoOperations) {
  json done = TockJson(
      {"batch", "terminate", "--query", "WorkflowType = 'none'", "--reason", "r", "--yes"});
  EXPECT_EQ(At(done, "/state"), "BATCH_OPERATION_STATE_COMPLETED");
  EXPECT_EQ(At(done, "/totalOperationCount"), "0");
}

TEST_F(BatchCliTest, AJobIdInUseIsAConflict) {
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-1"));
  ASSERT_EQ(
      Tock({"batch", "terminate", "--query", kOrders, "--reason", "r", "--yes", "--job-id", "same"})
          .exit_code,
      kExitOk);
  std::vector<std::string> again = {"batch", "cancel", "--query",  kOrders, "--reason",
                                    "r",     "--yes",  "--job-id", "same"};
  ProcessResult r = Tock(again);
  EXPECT_EQ(r.exit_code, kExitConflict) << Describe(again, r);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Jobs().size(), 1u);
}

// ---- list, describe, stop ----------------------------------------------------------------

TEST_F(BatchCliTest, ListAndDescribeShowTheJobs) {
  ProcessResult empty = Tock({"batch", "list", "-o", "table"});
  ASSERT_EQ(empty.exit_code, kExitOk) << empty.err;
  EXPECT_EQ(empty.out, "No batch jobs.\n");
  EXPECT_EQ(TockJson({"batch", "list"}), json::array());

  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-1"));
  ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-2"));
  ASSERT_EQ(Tock({"batch", "terminate", "--query", kOrders, "--reason", "first", "--yes",
                  "--job-id", "job-a"})
                .exit_code,
            kExitOk);
  ASSERT_EQ(Tock({"batch", "delete", "--query", kOrders, "--reason", "second", "--yes", "--job-id",
                  "job-b"})
                .exit_code,
            kExitOk);

  std::vector<json> jobs = Jobs();
  ASSERT_EQ(jobs.size(), 2u);
  std::set<std::string> ids;
  for (const json& job : jobs) {
    ids.insert(At(job, "/jobId").get<std::string>());
    EXPECT_EQ(At(job, "/state"), "BATCH_OPERATION_STATE_COMPLETED") << job.dump();
    EXPECT_GT(TimestampNanos(At(job, "/startTime")), 0) << job.dump();
    EXPECT_GT(TimestampNanos(At(job, "/closeTime")), 0) << job.dump();
  }
  EXPECT_EQ(ids, (std::set<std::string>{"job-a", "job-b"}));
  json array = TockJson({"batch", "list"});
  ASSERT_TRUE(array.is_array());
  EXPECT_EQ(array.size(), 2u);
  EXPECT_EQ(TockJsonLines({"batch", "list", "--limit", "1"}).size(), 1u);

  ProcessResult table = Tock({"batch", "list", "-o", "table"});
  ASSERT_EQ(table.exit_code, kExitOk) << table.err;
  std::istringstream lines(table.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 3u) << table.out;
  EXPECT_EQ(rows[0].rfind("JOB ID  STATE      START", 0), 0u) << table.out;
  EXPECT_NE(rows[0].find("  CLOSE"), std::string::npos) << table.out;
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_TRUE(rows[i].rfind("job-a   Completed  20", 0) == 0 ||
                rows[i].rfind("job-b   Completed  20", 0) == 0)
        << table.out;
  }

  json described = TockJson({"batch", "describe", "--job-id", "job-a"});
  EXPECT_EQ(At(described, "/jobId"), "job-a");
  EXPECT_TRUE(IsTerminate(At(described, "/operationType"))) << described.dump();
  EXPECT_EQ(At(described, "/reason"), "first");
  EXPECT_EQ(At(described, "/totalOperationCount"), "2");
  EXPECT_EQ(At(described, "/identity"), "tock");

  ProcessResult card = Tock({"batch", "describe", "--job-id", "job-a", "-o", "card"});
  ASSERT_EQ(card.exit_code, kExitOk) << card.err;
  for (const std::string line :
       {"Job id:      job-a\n", "Type:        Terminate\n", "State:       Completed\n",
        "Reason:      first\n", "Query:       WorkflowType = 'order'\n", "Identity:    tock\n",
        "Total:       2\n", "Completed:   2\n", "Failed:      0\n", "Start time:  20",
        "Close time:  20"}) {
    EXPECT_NE(card.out.find(line), std::string::npos) << line << "\n" << card.out;
  }
  ProcessResult deleted = Tock({"batch", "describe", "--job-id", "job-b", "-o", "card"});
  EXPECT_NE(deleted.out.find("Type:        Delete\n"), std::string::npos) << deleted.out;
}

TEST_F(BatchCliTest, UnknownJobsAreNotFound) {
  ExpectError({"batch", "describe", "--job-id", "nope"}, kExitNotFound,
              "batch operation nope not found");
  ProcessResult stop = Tock({"batch", "stop", "--job-id", "nope", "--reason", "r"});
  EXPECT_EQ(stop.exit_code, kExitNotFound) << stop.err;
  EXPECT_EQ(stop.out, "");
}

TEST_F(BatchCliTest, StopOfAFinishedJobIsRefused) {
  ASSERT_EQ(
      Tock({"batch", "terminate", "--query", kOrders, "--reason", "r", "--yes", "--job-id", "over"})
          .exit_code,
      kExitOk);
  ProcessResult r = Tock({"batch", "stop", "--job-id", "over", "--reason", "late"});
  EXPECT_EQ(r.exit_code, kExitError) << r.err;  // FAILED_PRECONDITION
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(At(TockJson({"batch", "describe", "--job-id", "over"}), "/state"),
            "BATCH_OPERATION_STATE_COMPLETED");
}

TEST_F(BatchCliTest, StopEndsARunningJobAndTheWaiterFails) {
  for (int i = 1; i <= 6; ++i) ASSERT_NO_FATAL_FAILURE(StartWorkflow("o-" + std::to_string(i)));
  // One operation every 2 s: the job is still running when it is stopped.
  const std::vector<std::string> argv = {
      TOCK_CLI_BIN, "--address", server_->address(), "batch",  "terminate",
      "--query",    kOrders,     "--reason",         "slowly", "--rps",
      "0.5",        "--yes",     "--job-id",         "slow",   "-o",
      "json"};
  ProcessResult waiter;
  std::thread waiting([&] { waiter = RunProcess(argv, {}, "", std::chrono::seconds(60)); });
  auto running = [&] {
    return TockJsonLines({"workflow", "list", "--query",
                          "WorkflowType = 'order' AND ExecutionStatus = 'Running'"})
        .size();
  };
  // Stop once the job has terminated its first workflow: it is then in the middle of its
  // page, waiting 2 s for the next.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (running() == 6 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_LT(running(), 6u) << "the job terminated nothing in 10 s";
  ProcessResult stop = Tock({"batch", "stop", "--job-id", "slow", "--reason", "enough"});
  EXPECT_EQ(stop.exit_code, kExitOk) << stop.err;
  json stopped = json::parse(stop.out, nullptr, false);
  EXPECT_EQ(At(stopped, "/jobId"), "slow") << stop.out;
  EXPECT_EQ(At(stopped, "/result"), "stopped") << stop.out;
  waiting.join();

  // The waiting command prints the job as it ended and fails.
  EXPECT_EQ(waiter.exit_code, kExitError) << waiter.err;
  json ended = json::parse(waiter.out, nullptr, false);
  EXPECT_EQ(At(ended, "/state"), "BATCH_OPERATION_STATE_FAILED") << waiter.out;
  EXPECT_EQ(waiter.err.rfind("error: batch slow ended in state Failed after ", 0), 0u)
      << waiter.err;

  // The stop answered once the job's runner had ended, its last act writing its counts: the
  // job does nothing more, so what is read now is final and needs no wait. It stopped short
  // of the end, and exactly the workflows it counts are terminated.
  json described = TockJson({"batch", "describe", "--job-id", "slow"});
  EXPECT_EQ(At(described, "/state"), "BATCH_OPERATION_STATE_FAILED") << described.dump();
  EXPECT_GT(TimestampNanos(At(described, "/closeTime")), 0) << described.dump();
  const size_t left = running();
  EXPECT_GT(left, 0u) << "the job ran to its end: the stop did not stop it";
  const json completed = At(described, "/completeOperationCount");
  ASSERT_TRUE(completed.is_string()) << described.dump();
  EXPECT_EQ(left + std::stoul(completed.get<std::string>()), 6u)
      << "workflows were terminated after the stop answered, or not counted: " << left
      << " running, " << described.dump();
}

// ---- on a terminal -------------------------------------------------------------------------

TEST_F(BatchCliTest, OnATerminalAProgressBarThenTheSummary) {
  // script(1) gives tock a terminal for all three streams; skip where it is missing.
  if (access("/usr/bin/script", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/script";
  for (const std::string id : {"o-1", "o-2", "o-3"}) ASSERT_NO_FATAL_FAILURE(StartWorkflow(id));
  const std::string command = std::string(TOCK_CLI_BIN) + " --address " + server_->address() +
                              " --color never batch terminate --query \"" + kOrders +
                              "\" --reason tty --job-id tty-1";
  ProcessResult r = RunProcess({"/usr/bin/script", "-qec", command, "/dev/null"}, {}, "y\n",
                               std::chrono::seconds(30));
  ASSERT_EQ(r.exit_code, kExitOk) << r.out << r.err;
  for (const std::string part :
       {"Start batch against approximately 3 workflow(s)? [y/N] ", "Started batch tty-1\r\n",
        "\r[##############################] 3/3 (3 completed, 0 failed)\r\n",
        "Job id:      tty-1\r\n", "State:       Completed\r\n", "Completed:   3\r\n"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  EXPECT_EQ(Status("o-1"), "WORKFLOW_EXECUTION_STATUS_TERMINATED");
}

// ---- completion ----------------------------------------------------------------------------

TEST_F(BatchCliTest, JobIdsAreCompletedFromTheServer) {
  ASSERT_EQ(Tock({"batch", "terminate", "--query", kOrders, "--reason", "r", "--yes", "--job-id",
                  "cleanup-7"})
                .exit_code,
            kExitOk);
  auto complete = [&](std::vector<std::string> words) {
    words.insert(words.begin(), "__complete");
    ProcessResult r = Tock(words);
    EXPECT_EQ(r.exit_code, kExitOk) << Describe(words, r);
    EXPECT_EQ(r.err, "") << Describe(words, r);
    return r.out;
  };
  const std::string described = complete({"batch", "describe", "--job-id", ""});
  EXPECT_EQ(described.rfind("cleanup-7\tCompleted ", 0), 0u) << described;
  EXPECT_EQ(complete({"batch", "stop", "--job-id", "clean"}), described);
  EXPECT_EQ(complete({"batch", "stop", "--job-id", "x"}), "");
  // A new job's id is not completed; other namespaces have their own jobs.
  EXPECT_EQ(complete({"batch", "terminate", "--job-id", ""}), "");
  ASSERT_NO_FATAL_FAILURE(Register({"other"}));
  EXPECT_EQ(complete({"-n", "other", "batch", "describe", "--job-id", ""}), "");
  const std::string commands = complete({"batch", ""});
  for (const std::string name :
       {"terminate\t", "cancel\t", "signal\t", "delete\t", "list\t", "describe\t", "stop\t"}) {
    EXPECT_NE(commands.find(name), std::string::npos) << name << "\n" << commands;
  }
}

}  // namespace
}  // namespace tock::testing
