// What the execution-store suites share: a fixture that owns one shard of the test's
// database, and builders for runs, events, tasks and timers. Every helper builds plain
// values; only the fixture touches the store.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/execution_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence::conformance {

constexpr int kRunning = 1;    // WORKFLOW_EXECUTION_STATUS_RUNNING
constexpr int kCompleted = 2;  // WORKFLOW_EXECUTION_STATUS_COMPLETED
constexpr int64_t kBaseMs = 1'800'000'000'000;

// An event whose bytes differ from every other event's (its id and run are in a payload).
inline HistoryEvent Event(const std::string& run_id, int64_t id) {
  HistoryEvent e;
  e.set_event_id(id);
  e.set_task_id(1000 + id);
  e.set_event_type(id == 1 ? temporal::api::enums::v1::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
                           : temporal::api::enums::v1::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
  e.mutable_event_time()->set_seconds(kBaseMs / 1000 + id);
  e.mutable_workflow_task_scheduled_event_attributes()->mutable_task_queue()->set_name(
      absl::StrCat(run_id, "/", id));
  return e;
}

inline std::vector<HistoryEvent> Events(const std::string& run_id, int64_t first, int64_t last) {
  std::vector<HistoryEvent> out;
  for (int64_t id = first; id <= last; ++id) out.push_back(Event(run_id, id));
  return out;
}

inline VisibilityRecord Visibility(const std::string& ns, const std::string& workflow_id,
                                   const std::string& run_id, int status) {
  VisibilityRecord v;
  v.namespace_id = ns;
  v.workflow_id = workflow_id;
  v.run_id = run_id;
  v.workflow_type = "type";
  v.task_queue = "queue";
  v.status = status;
  v.start_time = absl::FromUnixMillis(kBaseMs);
  v.execution_time = absl::FromUnixMillis(kBaseMs);
  if (status != kRunning) v.close_time = absl::FromUnixMillis(kBaseMs + 60'000);
  v.history_length = 3;
  temporal::api::workflow::v1::WorkflowExecutionInfo info;
  info.mutable_execution()->set_workflow_id(workflow_id);
  info.mutable_execution()->set_run_id(run_id);
  info.set_status(static_cast<temporal::api::enums::v1::WorkflowExecutionStatus>(status));
  v.info = info.SerializeAsString();
  return v;
}

// A change of run (ns, workflow_id, run_id) from `db_version - 1` to `db_version`.
inline RunWrite RunChange(const std::string& workflow_id, const std::string& run_id,
                          int64_t db_version, int status = kRunning, const std::string& ns = "ns") {
  RunWrite w;
  auto* exec = w.state.mutable_execution();
  exec->set_namespace_id(ns);
  exec->set_workflow_id(workflow_id);
  exec->set_run_id(run_id);
  exec->set_status(static_cast<temporal::api::enums::v1::WorkflowExecutionStatus>(status));
  exec->set_start_request_id(absl::StrCat("request-", run_id));
  w.state.set_db_version(db_version);
  w.state.set_next_event_id(db_version * 10);
  w.expected_db_version = db_version - 1;
  return w;
}

inline TaskQueueTask Task(const std::string& queue, const std::string& run_id,
                          int64_t scheduled_event_id, TaskKind kind = TaskKind::kWorkflow) {
  TaskQueueTask t;
  t.namespace_id = "ns";
  t.task_queue = queue;
  t.kind = kind;
  t.task.set_kind(kind == TaskKind::kActivity
                      ? tock::persistence::v1::TransferTask::KIND_ACTIVITY_TASK
                      : tock::persistence::v1::TransferTask::KIND_WORKFLOW_TASK);
  t.task.set_namespace_id("ns");
  t.task.set_run_id(run_id);
  t.task.set_task_queue(queue);
  t.task.set_scheduled_event_id(scheduled_event_id);
  return t;
}

// A timer of `shard` firing at kBaseMs + `offset_ms`; `task_id` 0 lets the store choose.
inline TimerTaskRow Timer(int32_t shard, int64_t offset_ms, int64_t task_id,
                          const std::string& run_id = "run") {
  TimerTaskRow t;
  t.shard_id = shard;
  t.fire_time = absl::FromUnixMillis(kBaseMs + offset_ms);
  t.task_id = task_id;
  t.task.set_kind(tock::persistence::v1::TimerTask::KIND_USER_TIMER);
  t.task.set_namespace_id("ns");
  t.task.set_run_id(run_id);
  return t;
}

// (fire ms, task id) of each timer, for comparisons.
inline std::vector<std::pair<int64_t, int64_t>> Keys(const std::vector<TimerTaskRow>& timers) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const TimerTaskRow& t : timers) out.emplace_back(absl::ToUnixMillis(t.fire_time), t.task_id);
  return out;
}

class ExecutionStoreFixture : public BackendTest {
 protected:
  void SetUp() override {
    p_ = Open();
    ASSERT_NE(p_, nullptr);
    absl::StatusOr<int64_t> range = store().AcquireShard(1, "test-owner");
    ASSERT_TRUE(range.ok()) << range.status();
    range_id_ = *range;
  }

  ExecutionStore& store() { return p_->executions(); }

  // A commit on shard 1 with the fixture's range id.
  Commit NewCommit() const {
    Commit c;
    c.shard_id = 1;
    c.range_id = range_id_;
    return c;
  }

  absl::Status WriteRuns(std::vector<RunWrite> runs) {
    Commit c = NewCommit();
    c.runs = std::move(runs);
    return store().Write(c);
  }

  // A new run with `events` 1..n, a visibility record and (with kCreate) a current pointer.
  void CreateRun(const std::string& workflow_id, const std::string& run_id, int64_t events = 3) {
    RunWrite w = RunChange(workflow_id, run_id, 1);
    w.current_run_change = CurrentRunChange::kCreate;
    w.events = Events(run_id, 1, events);
    w.visibility = Visibility("ns", workflow_id, run_id, kRunning);
    absl::Status s = WriteRuns({std::move(w)});
    ASSERT_TRUE(s.ok()) << s;
  }

  std::optional<int64_t> StoredVersion(const std::string& workflow_id, const std::string& run_id,
                                       const std::string& ns = "ns") {
    absl::StatusOr<MutableStateRecord> state = store().GetRun(ns, workflow_id, run_id);
    if (state.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    EXPECT_TRUE(state.ok()) << state.status();
    return state.ok() ? std::optional<int64_t>(state->db_version()) : std::nullopt;
  }

  std::vector<int64_t> EventIds(const std::string& run_id, int64_t first = 1,
                                int64_t next = 1'000'000, int32_t limit = 100'000) {
    absl::StatusOr<std::vector<HistoryEvent>> events =
        store().ReadEvents(run_id, first, next, limit);
    EXPECT_TRUE(events.ok()) << events.status();
    std::vector<int64_t> ids;
    if (events.ok()) {
      for (const HistoryEvent& e : *events) ids.push_back(e.event_id());
    }
    return ids;
  }

  std::vector<int64_t> TaskIds() {
    absl::StatusOr<std::vector<TaskQueueTask>> tasks = store().LoadTaskQueueTasks();
    EXPECT_TRUE(tasks.ok()) << tasks.status();
    std::vector<int64_t> ids;
    if (tasks.ok()) {
      for (const TaskQueueTask& t : *tasks) ids.push_back(t.task_id);
    }
    return ids;
  }

  std::vector<std::pair<int64_t, int64_t>> TimerKeys(int32_t shard = 1) {
    absl::StatusOr<std::vector<TimerTaskRow>> timers =
        store().LoadTimers(shard, TimerCursor{}, absl::InfiniteFuture(), 100'000);
    EXPECT_TRUE(timers.ok()) << timers.status();
    return timers.ok() ? Keys(*timers) : std::vector<std::pair<int64_t, int64_t>>{};
  }

  int64_t VisibilityCount(const std::string& run_id) {
    absl::StatusOr<int64_t> n = p_->visibility().Count(
        "ns", VisibilityPredicate::Of(VisibilityField::kRunId, VisibilityOp::kEqual, {run_id}));
    EXPECT_TRUE(n.ok()) << n.status();
    return n.ok() ? *n : -1;
  }

  std::unique_ptr<Persistence> p_;
  int64_t range_id_ = 0;
};

}  // namespace tock::persistence::conformance
