// ResetWorkflowExecution driven on the history engine directly (no gRPC), on a SQLite file
// and a manual clock (review 2026-11-27 P1-1, P1-2, P1-7):
// - a reset of an older run that is refused (a point outside the history or not after a
//   workflow task, a child still pending) writes nothing: the current run keeps running;
// - a reset is answered once per request id: a retry answers the first reset's run and
//   terminates nothing, whichever run it names;
// - a base run whose stored history lacks events the reset needs answers DATA_LOSS (nothing
//   written), never reads past what the store returned.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server-core/history/history_engine.h"
#include "server-core/persistence/history_batches.h"
#include "server-core/persistence/persistence.h"
#include "server-core/persistence/sqlite/sqlite_db.h"
#include "tests/integration/engine_fixture.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::history::v1::HistoryEvent;

class ResetTest : public HistoryEngineTest {
 protected:
  ResetTest() : HistoryEngineTest(absl::FromUnixSeconds(1'800'000'000)) {}
  void SetUp() override {
    clock_.Set(start_);
    std::string pattern = (std::filesystem::temp_directory_path() / "tock-reset-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    Open();
  }
  void TearDown() override {
    Close();
    std::filesystem::remove_all(dir_);
  }

  std::string DbPath() const { return (std::filesystem::path(dir_) / "tock.db").string(); }

  // The server on the database file (the clock keeps its time: DropEvents reopens it).
  void Open() {
    persistence::PersistenceConfig config;
    config.sqlite_path = DbPath();
    auto p = persistence::OpenPersistence(config);
    ASSERT_TRUE(p.ok()) << p.status();
    persistence_ = std::move(*p);
    ASSERT_NO_FATAL_FAILURE(StartEngine(persistence_->executions()));
  }
  void Close() {
    StopEngine();
    persistence_.reset();
  }
  // Stops the server, removes the events [from, through] of `run` from its database file
  // (what another host's retention or archiver delete does to a history), and starts it
  // again: nothing is cached any more. The run's other events are stored again in batches
  // of consecutive ids, as the store writes them (history_batches.h).
  void DropEvents(const std::string& run, int64_t from, int64_t through) {
    Close();
    {
      auto db = persistence::SqliteDb::Open(DbPath());
      ASSERT_TRUE(db.ok()) << db.status();
      std::lock_guard lock((*db)->mutex());
      auto read = (*db)->Prepare(
          "SELECT first_event_id, data FROM history_batches WHERE run_id = ? "
          "ORDER BY first_event_id");
      ASSERT_TRUE(read.ok()) << read.status();
      std::vector<int64_t> ids;
      std::vector<std::string> kept;
      (*read)->Bind(1, run);
      ASSERT_TRUE((*read)->ForEachRow([&] {
        return persistence::VisitBatch((*read)->BlobView(1), (*read)->Int(0),
                                       [&](int64_t id, std::string_view bytes) {
                                         if (id < from || id > through) {
                                           ids.push_back(id);
                                           kept.emplace_back(bytes);
                                         }
                                         return true;
                                       });
      }).ok());
      ASSERT_TRUE((*db)->Exec(absl::StrCat("DELETE FROM history_batches WHERE run_id = '", run,
                                           "'")).ok());
      for (const persistence::EventBatch& batch : persistence::BatchEvents(ids, kept)) {
        auto insert = (*db)->Prepare(
            "INSERT INTO history_batches(run_id, first_event_id, last_event_id, data) "
            "VALUES (?, ?, ?, ?)");
        ASSERT_TRUE(insert.ok()) << insert.status();
        ASSERT_TRUE((*insert)
                        ->Bind(1, run)
                        .Bind(2, batch.first_event_id)
                        .Bind(3, batch.last_event_id())
                        .BindBlob(4, batch.bytes)
                        .Run()
                        .ok());
      }
    }
    Open();
  }

  // Starts workflow `id` on queue "q-<id>" and starts its first workflow task: the history
  // is 1 WorkflowExecutionStarted, 2 WorkflowTaskScheduled, 3 WorkflowTaskStarted.
  std::string StartWithTaskStarted(const std::string& id, std::string* token = nullptr) {
    wf::StartWorkflowExecutionRequest req;
    req.set_workflow_id(id);
    req.mutable_workflow_type()->set_name("flow");
    req.mutable_task_queue()->set_name("q-" + id);
    req.set_request_id("start-" + id);
    auto started = engine_->StartWorkflow(ns_, req);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return "";
    auto task = PollWorkflowTask("q-" + id);
    EXPECT_TRUE(task.ok()) << task.status();
    if (task.ok() && token != nullptr) *token = task->task_token();
    return started->run_id();
  }

  wf::ResetWorkflowExecutionRequest ResetRequest(const std::string& id, const std::string& run_id,
                                                 int64_t point, const std::string& request_id) {
    wf::ResetWorkflowExecutionRequest req;
    req.mutable_workflow_execution()->set_workflow_id(id);
    req.mutable_workflow_execution()->set_run_id(run_id);
    req.set_workflow_task_finish_event_id(point);
    req.set_reason("test reset");
    req.set_request_id(request_id);
    return req;
  }

  bool HasEvent(const std::string& run_id, enums::EventType type) {
    for (const HistoryEvent& e : History(run_id)) {
      if (e.event_type() == type) return true;
    }
    return false;
  }

  int Status(const std::string& id, const std::string& run_id) {
    auto run = persistence_->executions().GetRun(ns_.id, id, run_id);
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? run->execution().status() : -1;
  }
  std::string CurrentRunId(const std::string& id) {
    auto current = persistence_->executions().GetCurrentRun(ns_.id, id);
    EXPECT_TRUE(current.ok()) << current.status();
    return current.ok() ? current->run_id : "";
  }

  std::string dir_;
};

// P1-1: the checks of a reset of an older run come before its commit, which also ends the
// current run: a refused reset leaves the current run running and current.
TEST_F(ResetTest, ARefusedResetOfAnOlderRunLeavesTheCurrentRunRunning) {
  const std::string first = StartWithTaskStarted("older");
  auto reset = engine_->ResetWorkflow(ns_, ResetRequest("older", first, 3, "reset-1"));
  ASSERT_TRUE(reset.ok()) << reset.status();
  const std::string current = reset->run_id();
  ASSERT_EQ(CurrentRunId("older"), current);
  ASSERT_EQ(Status("older", current), enums::WORKFLOW_EXECUTION_STATUS_RUNNING);

  // Event 1 is WorkflowExecutionStarted, not a workflow task; 99 is past the history.
  for (int64_t point : {2, 99}) {
    SCOPED_TRACE(point);
    auto refused = engine_->ResetWorkflow(
        ns_, ResetRequest("older", first, point, absl::StrCat("bad-", point)));
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
    EXPECT_EQ(CurrentRunId("older"), current);
    EXPECT_EQ(Status("older", current), enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
    EXPECT_FALSE(HasEvent(current, enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED));
  }

  // A valid reset of the older run ends the current one in the same commit.
  auto again = engine_->ResetWorkflow(ns_, ResetRequest("older", first, 3, "reset-2"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(CurrentRunId("older"), again->run_id());
  EXPECT_EQ(Status("older", current), enums::WORKFLOW_EXECUTION_STATUS_TERMINATED);
  EXPECT_EQ(Status("older", again->run_id()), enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
  auto base = persistence_->executions().GetRun(ns_.id, "older", first);
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(base->execution().reset_run_id(), again->run_id());
}

// P1-1: a point where a child the base run started is still pending is refused before the
// current run is touched.
TEST_F(ResetTest, AResetOfAnOlderRunToAPointWithAPendingChildLeavesTheCurrentRunRunning) {
  std::string token;
  const std::string first = StartWithTaskStarted("parent", &token);
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(token);
  auto* cmd = done.add_commands();
  cmd->set_command_type(enums::COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION);
  auto* child = cmd->mutable_start_child_workflow_execution_command_attributes();
  child->set_workflow_id("kid");
  child->mutable_workflow_type()->set_name("flow");
  child->mutable_task_queue()->set_name("q-kid");
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());
  // The child started and is running: the parent's next workflow task is a point after it.
  ASSERT_TRUE(WaitForEvent(first, enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED));
  wf::SignalWorkflowExecutionRequest signal;
  signal.mutable_workflow_execution()->set_workflow_id("parent");
  signal.set_signal_name("go");
  ASSERT_TRUE(engine_->SignalWorkflow(ns_, signal).ok());
  int64_t after_child = 0;
  for (const HistoryEvent& e : History(first)) {
    if (e.event_type() == enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) after_child = e.event_id() + 1;
  }
  ASSERT_GT(after_child, 6);

  auto reset = engine_->ResetWorkflow(ns_, ResetRequest("parent", first, 3, "reset-1"));
  ASSERT_TRUE(reset.ok()) << reset.status();
  const std::string current = reset->run_id();

  auto refused = engine_->ResetWorkflow(ns_, ResetRequest("parent", first, after_child, "r-2"));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_NE(refused.status().message().find("pending child workflows"), std::string::npos)
      << refused.status();
  EXPECT_EQ(CurrentRunId("parent"), current);
  EXPECT_EQ(Status("parent", current), enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
}

// P1-2: a retried reset (its answer lost, or a batch retrying) answers the first reset's run
// and terminates nothing, whether it names the base run or the current one.
TEST_F(ResetTest, AResetRetriedWithItsRequestIdAnswersTheFirstResetsRun) {
  const std::string first = StartWithTaskStarted("retried");
  auto reset = engine_->ResetWorkflow(ns_, ResetRequest("retried", first, 3, "same-request"));
  ASSERT_TRUE(reset.ok()) << reset.status();
  auto current = persistence_->executions().GetCurrentRun(ns_.id, "retried");
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->run_id, reset->run_id());
  EXPECT_EQ(current->start_request_id, "same-request");

  for (const std::string& named : {first, std::string()}) {
    auto retry = engine_->ResetWorkflow(ns_, ResetRequest("retried", named, 3, "same-request"));
    ASSERT_TRUE(retry.ok()) << retry.status();
    EXPECT_EQ(retry->run_id(), reset->run_id());
  }
  EXPECT_EQ(CurrentRunId("retried"), reset->run_id());
  EXPECT_EQ(Status("retried", reset->run_id()), enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
  EXPECT_FALSE(HasEvent(reset->run_id(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED));

  // Another request id is another reset; an empty one gets an id of its own each time.
  auto other = engine_->ResetWorkflow(ns_, ResetRequest("retried", first, 3, ""));
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(other->run_id(), reset->run_id());
  EXPECT_EQ(Status("retried", reset->run_id()), enums::WORKFLOW_EXECUTION_STATUS_TERMINATED);
  auto last = persistence_->executions().GetCurrentRun(ns_.id, "retried");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->run_id, other->run_id());
  EXPECT_FALSE(last->start_request_id.empty());
}

// P1-7: events the reset would copy are gone from the store: DATA_LOSS, nothing written.
TEST_F(ResetTest, AHistoryShorterThanItsRunSaysIsDataLossNotACrash) {
  const std::string run = StartWithTaskStarted("short");
  DropEvents(run, 2, INT64_MAX);
  auto reset = engine_->ResetWorkflow(ns_, ResetRequest("short", run, 3, "r"));
  EXPECT_EQ(reset.status().code(), absl::StatusCode::kDataLoss) << reset.status();
  EXPECT_NE(reset.status().message().find("is missing event 2"), std::string::npos)
      << reset.status();
  EXPECT_EQ(CurrentRunId("short"), run);
  EXPECT_EQ(Status("short", run), enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
}

// P1-7: an event after the point that would be reapplied (a signal) is gone: the reset does
// not go on without it.
TEST_F(ResetTest, AMissingEventAfterThePointIsDataLossToo) {
  std::string token;
  const std::string run = StartWithTaskStarted("tail", &token);
  wf::RespondWorkflowTaskCompletedRequest done;  // a signal meanwhile would be buffered
  done.set_task_token(token);
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());
  wf::SignalWorkflowExecutionRequest signal;
  signal.mutable_workflow_execution()->set_workflow_id("tail");
  signal.set_signal_name("s");
  ASSERT_TRUE(engine_->SignalWorkflow(ns_, signal).ok());
  int64_t signaled = 0;
  for (const HistoryEvent& e : History(run)) {
    if (e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) signaled = e.event_id();
  }
  ASSERT_GT(signaled, 3);
  DropEvents(run, signaled, signaled);
  auto reset = engine_->ResetWorkflow(ns_, ResetRequest("tail", run, 3, "r"));
  EXPECT_EQ(reset.status().code(), absl::StatusCode::kDataLoss) << reset.status();
  EXPECT_EQ(CurrentRunId("tail"), run);
  EXPECT_EQ(Status("tail", run), enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
}

}  // namespace
}  // namespace tock::server::history
