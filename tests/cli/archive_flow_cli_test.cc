// Archival end to end with the file store (seed 002 "Archival", SPEC §3): the visibility
// record is archived when a run closes, the history when its retention has passed, and only
// then is the run deleted; reads fall back to the archive through the server and work
// offline straight from the directory; a kill -9 between upload and delete loses nothing.
// Time passes with the time-skipping dev server.
#include <filesystem>
#include <fstream>
#include <thread>

#include "lib/common/hashing.h"
#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {
namespace fs = std::filesystem;

class ArchiveFlowTest : public CliTest {
 protected:
  std::string ArchiveDir() const { return dir_.File("archive"); }

  // `faults`: the tests' build of the server, with its fault-point flags.
  void StartArchivingServer(const std::vector<std::string>& fault_flags = {}) {
    server_ = std::make_unique<ServerProcess>(fault_flags.empty() ? TOCK_SERVER_BIN
                                                                  : TOCK_SERVER_FAULTS_BIN);
    std::vector<std::string> args = {"--db-file", dir_.File("tock.db"), "--archival-dir",
                                     ArchiveDir(), "--enable-time-skipping"};
    args.insert(args.end(), fault_flags.begin(), fault_flags.end());
    ASSERT_TRUE(server_->Start(args)) << server_->error();
  }

  // Starts a run and terminates it; returns its run id.
  std::string CloseRun(const std::string& ns, const std::string& workflow_id) {
    json started = TockJson({"-n", ns, "workflow", "start", "--type", "order", "--task-queue",
                             "nobody", "--id", workflow_id});
    const std::string run = At(started, "/runId").get<std::string>();
    EXPECT_EQ(Tock({"-n", ns, "workflow", "terminate", "--workflow-id", workflow_id, "--reason",
                    "done"})
                  .exit_code,
              kExitOk);
    return run;
  }

  // Polls `tock archival status` until `pointer` reads `want` (10 s at most).
  json WaitForStatus(const std::string& ns, const std::string& pointer, const std::string& want) {
    json status;
    for (int i = 0; i < 100; ++i) {
      status = TockJson({"-n", ns, "archival", "status"});
      if (At(status, pointer) == want) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << pointer << " never became " << want << ": " << status.dump();
    return status;
  }

  std::string NamespaceId(const std::string& ns) {
    return At(TockJson({"namespace", "describe", ns}), "/namespaceInfo/id").get<std::string>();
  }

  // Temporal's filestore name of a run's history (SPEC §3).
  std::string HistoryFile(const std::string& ns_id, const std::string& workflow_id,
                          const std::string& run_id, int64_t version = 0) const {
    return ArchiveDir() + "/history/" + std::to_string(Fingerprint64(ns_id)) +
           std::to_string(Fingerprint64(workflow_id)) + std::to_string(Fingerprint64(run_id)) +
           "_" + std::to_string(version) + ".history";
  }

  static size_t FilesEndingWith(const std::string& dir, const std::string& suffix) {
    size_t n = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); ++it) {
      const std::string name = it->path().filename().string();
      if (it->is_regular_file() && name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        ++n;
      }
    }
    return n;
  }

  static json ReadJsonFile(const std::string& path) {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    json parsed = json::parse(text, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << path << ": " << text.substr(0, 200);
    return parsed;
  }
};

TEST_F(ArchiveFlowTest, ArchivesOnCloseDeletesAfterRetentionAndReadsBack) {
  ASSERT_NO_FATAL_FAILURE(StartArchivingServer());
  ASSERT_NO_FATAL_FAILURE(Register({"orders", "--retention", "1d"}));
  const std::string ns_id = NamespaceId("orders");
  const std::string run = CloseRun("orders", "order-1");
  ASSERT_EQ(Tock({"-n", "orders", "workflow", "start", "--type", "order", "--task-queue", "nobody",
                  "--id", "still-open"})
                .exit_code,
            kExitOk);

  // On close: the visibility record, not yet the history; the run stays in the database.
  json status = WaitForStatus("orders", "/visibility/archived", "1");
  EXPECT_EQ(At(status, "/history/pending"), "1");
  EXPECT_EQ(At(status, "/history/uri"), "file://" + ArchiveDir() + "/history");
  EXPECT_EQ(FilesEndingWith(ArchiveDir() + "/visibility/" + ns_id, ".visibility"), 1u);
  EXPECT_FALSE(fs::exists(HistoryFile(ns_id, "order-1", run)));
  EXPECT_EQ(At(TockJson({"-n", "orders", "workflow", "describe", "--workflow-id", "order-1"}),
               "/archived"),
            json())
      << "still in the database";

  // Retention passes: history archived under Temporal's name, then the run deleted.
  TockJson({"server", "advance-time", "25h"});
  status = WaitForStatus("orders", "/runsDeleted", "1");
  EXPECT_EQ(At(status, "/history/archived"), "1");
  EXPECT_EQ(At(status, "/failing"), "0");
  ASSERT_TRUE(fs::exists(HistoryFile(ns_id, "order-1", run))) << HistoryFile(ns_id, "order-1", run);
  json file = ReadJsonFile(HistoryFile(ns_id, "order-1", run));
  ASSERT_TRUE(file.is_array());
  size_t events = 0;
  for (const json& batch : file) events += At(batch, "/events").size();
  EXPECT_EQ(events, 3u);
  EXPECT_EQ(At(file, "/0/events/0/eventType"), "EVENT_TYPE_WORKFLOW_EXECUTION_STARTED");
  // Gone from the database; describe shows the archived record.
  json described = TockJson({"-n", "orders", "workflow", "describe", "--workflow-id", "order-1"});
  EXPECT_EQ(At(described, "/archived"), true);
  EXPECT_EQ(At(described, "/workflowExecutionInfo/execution/runId"), run);
  EXPECT_EQ(At(described, "/workflowExecutionInfo/status"), "WORKFLOW_EXECUTION_STATUS_TERMINATED");
  EXPECT_EQ(Tock({"-n", "orders", "workflow", "describe", "--workflow-id", "still-open"}).exit_code,
            kExitOk)
      << "a running run is neither archived nor deleted";

  // Reads: through the server (with and without the run id) and offline.
  json by_run = TockJson({"-n", "orders", "workflow", "show", "-w", "order-1", "-r", run});
  ASSERT_EQ(At(by_run, "/events").size(), 3u) << by_run.dump();
  EXPECT_EQ(At(by_run, "/events/2/eventType"), "EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED");
  EXPECT_EQ(At(by_run, "/events/2/workflowExecutionTerminatedEventAttributes/reason"), "done");
  EXPECT_EQ(TockJson({"-n", "orders", "workflow", "show", "-w", "order-1"}), by_run);
  json offline = TockJson({"archival", "show", "file://" + ArchiveDir() + "/history",
                           "--namespace-id", ns_id, "-w", "order-1", "-r", run});
  EXPECT_EQ(offline, by_run);

  std::vector<json> listed = TockJsonLines(
      {"-n", "orders", "workflow", "list", "--archived", "--query", "WorkflowId = 'order-1'"});
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(At(listed[0], "/execution/runId"), run);
  EXPECT_EQ(At(listed[0], "/status"), "WORKFLOW_EXECUTION_STATUS_TERMINATED");
  EXPECT_EQ(At(listed[0], "/historyLength"), "3");
  std::vector<json> offline_list =
      TockJsonLines({"archival", "list", "file://" + ArchiveDir() + "/visibility", "--namespace-id",
                     ns_id, "--query", "ExecutionStatus = 'terminated' AND WorkflowType = 'order'"});
  ASSERT_EQ(offline_list.size(), 1u);
  EXPECT_EQ(At(offline_list[0], "/execution/workflowId"), "order-1");
  EXPECT_TRUE(TockJsonLines({"-n", "orders", "workflow", "list", "--archived", "--query",
                             "ExecutionStatus = 'failed'"})
                  .empty());
}

TEST_F(ArchiveFlowTest, TriggerArchivesAtOnceAndTheRunStaysUntilRetention) {
  ASSERT_NO_FATAL_FAILURE(StartArchivingServer());
  ASSERT_NO_FATAL_FAILURE(Register({"orders", "--retention", "3d"}));
  ASSERT_NO_FATAL_FAILURE(Register({"plain", "--retention", "1d", "--history-archival-state",
                                    "disabled", "--visibility-archival-state", "disabled"}));
  const std::string ns_id = NamespaceId("orders");
  ASSERT_EQ(Tock({"-n", "orders", "workflow", "start", "--type", "order", "--task-queue", "nobody",
                  "--id", "open"})
                .exit_code,
            kExitOk);
  ExpectErrorStartingWith({"-n", "orders", "archival", "trigger", "-w", "open"}, kExitError,
                          "error: workflow \"open\" run ");
  ExpectError({"-n", "orders", "archival", "trigger", "-w", "nobody-ran-this"}, kExitNotFound,
              "workflow \"nobody-ran-this\" not found in namespace \"orders\"");

  const std::string run = CloseRun("orders", "order-7");
  json triggered = TockJson({"-n", "orders", "archival", "trigger", "-w", "order-7"});
  EXPECT_EQ(At(triggered, "/runId"), run);
  EXPECT_EQ(At(triggered, "/historyArchivalUri"), "file://" + ArchiveDir() + "/history");
  EXPECT_TRUE(fs::exists(HistoryFile(ns_id, "order-7", run)));
  EXPECT_EQ(At(TockJson({"-n", "orders", "workflow", "describe", "-w", "order-7"}), "/archived"),
            json())
      << "triggering archives; deleting still waits for the retention";
  json status = TockJson({"-n", "orders", "archival", "status"});
  EXPECT_EQ(At(status, "/history/archived"), "1");
  EXPECT_EQ(At(status, "/runsDeleted"), "0");
  // Again: idempotent, the same single file.
  TockJson({"-n", "orders", "archival", "trigger", "-w", "order-7", "-r", run});
  EXPECT_EQ(FilesEndingWith(ArchiveDir() + "/history", ".history"), 1u);

  TockJson({"server", "advance-time", "73h"});
  WaitForStatus("orders", "/runsDeleted", "1");
  EXPECT_EQ(FilesEndingWith(ArchiveDir() + "/history", ".history"), 1u);
  EXPECT_EQ(At(TockJson({"-n", "orders", "workflow", "show", "-w", "order-7"}), "/events").size(),
            3u);

  // A namespace that archives nothing: the trigger says how to turn it on; retention deletes.
  CloseRun("plain", "p-1");
  ExpectError({"-n", "plain", "archival", "trigger", "-w", "p-1"}, kExitError,
              "namespace \"plain\" archives neither histories nor visibility records; enable it "
              "with tock namespace update plain --history-archival-state enabled");
  TockJson({"server", "advance-time", "25h"});
  ExpectError({"-n", "plain", "workflow", "describe", "-w", "p-1"}, kExitNotFound,
              "Workflow execution not found. WorkflowId: p-1, RunId: .");
  ExpectError({"-n", "plain", "workflow", "list", "--archived"}, kExitUsage,
              "Namespace is not configured for visibility archival.");
}

TEST_F(ArchiveFlowTest, RunsTheServerClosesAreArchivedToo) {
  // Closed by a timer (its run timeout), not by a client or worker call.
  ASSERT_NO_FATAL_FAILURE(StartArchivingServer());
  ASSERT_NO_FATAL_FAILURE(Register({"orders", "--retention", "1d"}));
  ASSERT_EQ(Tock({"-n", "orders", "workflow", "start", "--type", "order", "--task-queue", "nobody",
                  "--id", "slow", "--run-timeout", "1m"})
                .exit_code,
            kExitOk);
  TockJson({"server", "advance-time", "2m"});
  WaitForStatus("orders", "/visibility/archived", "1");
  std::vector<json> listed = TockJsonLines(
      {"-n", "orders", "workflow", "list", "--archived", "--query", "ExecutionStatus = 'timedout'"});
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(At(listed[0], "/execution/workflowId"), "slow");
}

TEST_F(ArchiveFlowTest, KillBetweenUploadAndDeleteLosesNothing) {
  // The archiver stops for good right after each history upload, before recording it or
  // deleting the run: the server is then killed exactly between upload and delete.
  ASSERT_NO_FATAL_FAILURE(StartArchivingServer({"--hang-after-history-upload"}));
  ASSERT_NO_FATAL_FAILURE(Register({"orders", "--retention", "1d"}));
  const std::string ns_id = NamespaceId("orders");
  std::vector<std::string> runs;
  for (int i = 0; i < 3; ++i) runs.push_back(CloseRun("orders", "order-" + std::to_string(i)));
  WaitForStatus("orders", "/visibility/archived", "3");
  TockJson({"server", "advance-time", "25h"});
  bool paused = false;
  for (int i = 0; i < 100 && !paused; ++i) {
    paused = server_->stderr_text().find("fault point: history of run") != std::string::npos;
    if (!paused) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(paused) << server_->stderr_text();
  // Runs are archived several at a time: each upload that finished stopped right there.
  const size_t uploaded = FilesEndingWith(ArchiveDir() + "/history", ".history");
  EXPECT_GE(uploaded, 1u);
  EXPECT_LE(uploaded, 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(At(TockJson({"-n", "orders", "workflow", "describe", "-w", "order-" + std::to_string(i)}),
                 "/archived"),
              json())
        << "nothing deleted before the kill";
  }
  server_->Kill();

  // A restarted dev server's clock starts at the real time again: skip the day once more.
  ASSERT_NO_FATAL_FAILURE(StartArchivingServer());
  TockJson({"server", "advance-time", "25h"});
  json status = WaitForStatus("orders", "/runsDeleted", "3");
  EXPECT_EQ(At(status, "/history/archived"), "3");
  EXPECT_EQ(At(status, "/visibility/archived"), "3");
  EXPECT_EQ(At(status, "/failing"), "0");
  // Archived once each (the interrupted upload was rewritten in place), deleted once each.
  EXPECT_EQ(FilesEndingWith(ArchiveDir() + "/history", ".history"), 3u);
  EXPECT_EQ(FilesEndingWith(ArchiveDir() + "/visibility", ".visibility"), 3u);
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string id = "order-" + std::to_string(i);
    EXPECT_TRUE(fs::exists(HistoryFile(ns_id, id, runs[i])));
    EXPECT_EQ(At(TockJson({"-n", "orders", "workflow", "describe", "-w", id}), "/archived"), true);
    json shown = TockJson({"-n", "orders", "workflow", "show", "-w", id, "-r", runs[i]});
    EXPECT_EQ(At(shown, "/events").size(), 3u) << id;
  }
  EXPECT_EQ(TockJsonLines({"-n", "orders", "workflow", "list", "--archived"}).size(), 3u);
}

TEST_F(ArchiveFlowTest, BadInputNamesWhatIsWrong) {
  StartServer();  // no archival configured
  ExpectError({"workflow", "list", "--archived"}, kExitUsage,
              "Cluster is not configured for visibility archival.");
  ExpectError({"archival", "show", "gs://bucket/x", "--namespace-id", "n", "-w", "w", "-r", "r"},
              kExitUsage,
              "invalid archival URI \"gs://bucket/x\": unknown archiver scheme \"gs\"; use "
              "file:///DIR or s3://BUCKET[/PREFIX]");
  ExpectError({"archival", "list", "s3://", "--namespace-id", "n"}, kExitUsage,
              "invalid archival URI \"s3://\": the bucket is empty; use s3://BUCKET[/PREFIX]");
  ExpectError({"archival", "list", "file://" + dir_.File("none"), "--namespace-id", "n", "--query",
               "WorkflowId = 'a' OR WorkflowId = 'b'"},
              kExitUsage, "only comparison and \"and\" expression is supported");
  ExpectError({"archival", "show", "file://" + dir_.File("none"), "--namespace-id", "n", "-w",
               "w", "-r", "r"},
              kExitNotFound,
              "no archived history of workflow \"w\" run r in namespace n at file://" +
                  dir_.File("none"));
  ExpectError({"archival", "status", "-n", "missing"}, kExitNotFound,
              "Namespace missing is not found.");
}

}  // namespace
}  // namespace tock::testing
