// The history engine driven directly (no gRPC), for engine-level tests: persistence (SQLite
// in memory unless a test opens another), a ShardController owning all 4 shards, a
// TimerThread, the MatchingEngine and the HistoryEngine, all on a ManualClock; and the
// helpers these tests share (taking a task from matching, starting a workflow task, the
// stored history, waiting for an event of it). A test with its own wiring (a store wrapper that injects faults, a
// database file, namespace activity) overrides SetUp and calls OpenStore and StartEngine.
#pragma once

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/proto_time.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/shard_controller.h"
#include "server-core/matching/matching_engine.h"
#include "server-core/persistence/persistence.h"

namespace tock::server::history {

// The next task of (namespace_id, queue, kind) from `matching`, unstarted, polled by `worker`
// until `deadline` (of the engine's clock); none when none came within `wait` of real time.
// After a timeout the poll stays registered: a later task would go to it and be lost.
inline std::optional<persistence::TaskQueueTask> TakeTaskFrom(
    matching::MatchingEngine& matching, const std::string& namespace_id, const std::string& queue,
    persistence::TaskKind kind, absl::Time deadline, const std::string& worker,
    absl::Duration wait) {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<persistence::TaskQueueTask> got;
  bool done = false;
  matching.Poll(namespace_id, queue, kind, deadline, worker,
                [&](std::optional<persistence::TaskQueueTask> task) {
                  std::lock_guard lock(mu);
                  got = std::move(task);
                  done = true;
                  cv.notify_all();
                });
  std::unique_lock lock(mu);
  if (!cv.wait_for(lock, absl::ToChronoNanoseconds(wait), [&] { return done; })) {
    return std::nullopt;
  }
  return got;
}

class HistoryEngineTest : public ::testing::Test {
 protected:
  static constexpr absl::Duration kTaskWait = absl::Seconds(10);  // bound on every poll

  // `start`: the clock's time at SetUp. `worker`: the identity tasks are polled and
  // completed with.
  explicit HistoryEngineTest(absl::Time start = absl::FromUnixMicros(1'800'000'000'000'000),
                             std::string worker = "test-worker")
      : start_(start), worker_(std::move(worker)) {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenStore());
    ASSERT_NO_FATAL_FAILURE(StartEngine(persistence_->executions()));
  }
  void TearDown() override { StopEngine(); }

  // Sets the clock to the start time and opens the database of `config`.
  void OpenStore(const persistence::PersistenceConfig& config = {}) {
    clock_.Set(start_);
    auto p = persistence::OpenPersistence(config);
    ASSERT_TRUE(p.ok()) << p.status();
    persistence_ = std::move(*p);
  }

  // Starts the engine on `store` (the database's, or a wrapper of it). `configure` runs on
  // the engine before it recovers its shards.
  void StartEngine(persistence::ExecutionStore& store,
                   const std::function<void(HistoryEngine&)>& configure = nullptr) {
    shards_ = std::make_unique<ShardController>(store, 4, "test");
    ASSERT_TRUE(shards_->AcquireAll().ok());
    timer_thread_ = std::make_unique<TimerThread>(clock_);
    matching_ = std::make_unique<matching::MatchingEngine>(clock_, *timer_thread_);
    engine_ = std::make_unique<HistoryEngine>(store, *shards_, *matching_, clock_, *timer_thread_,
                                              NullLogger());
    if (configure) configure(*engine_);
    ASSERT_TRUE(engine_->Recover().ok());
  }

  // Stops the engine and drops its parts (the database stays open). Before a derived
  // fixture's members go: they may be the store the shards write through.
  void StopEngine() {
    if (engine_) engine_->StopBackground();
    timer_thread_.reset();
    engine_.reset();
    matching_.reset();
    shards_.reset();
  }

  // The next task of (queue, kind) from matching, unstarted; none when none came within
  // `wait`.
  std::optional<persistence::TaskQueueTask> TakeTask(const std::string& queue,
                                                     persistence::TaskKind kind,
                                                     absl::Duration wait = kTaskWait) {
    return TakeTaskFrom(*matching_, ns_.id, queue, kind, clock_.Now() + absl::Hours(1), worker_,
                        wait);
  }

  // Takes the next workflow task of `queue` and starts it (waits at most kTaskWait).
  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> PollWorkflowTask(
      const std::string& queue = "q") {
    std::optional<persistence::TaskQueueTask> task =
        TakeTask(queue, persistence::TaskKind::kWorkflow);
    if (!task) return absl::DeadlineExceededError("no workflow task");
    return engine_->RecordWorkflowTaskStarted(ns_, *task, worker_);
  }

  // Completes the workflow task of `token` with `commands`.
  absl::Status CompleteWorkflowTask(
      const std::string& token, const std::vector<temporal::api::command::v1::Command>& commands) {
    wf::RespondWorkflowTaskCompletedRequest done;
    done.set_task_token(token);
    done.set_identity(worker_);
    for (const auto& c : commands) *done.add_commands() = c;
    return engine_->RespondWorkflowTaskCompleted(ns_, done).status();
  }

  // Workflow `id` of type "flow" on queue "q", request id "req-<id>".
  static wf::StartWorkflowExecutionRequest StartRequest(const std::string& id) {
    wf::StartWorkflowExecutionRequest req;
    req.set_workflow_id(id);
    req.mutable_workflow_type()->set_name("flow");
    req.mutable_task_queue()->set_name("q");
    req.set_request_id("req-" + id);
    return req;
  }

  // A StartTimer command of timer `timer_id` firing after `d`.
  static temporal::api::command::v1::Command StartTimer(absl::Duration d,
                                                        const std::string& timer_id = "t1") {
    temporal::api::command::v1::Command c;
    c.set_command_type(temporal::api::enums::v1::COMMAND_TYPE_START_TIMER);
    c.mutable_start_timer_command_attributes()->set_timer_id(timer_id);
    *c.mutable_start_timer_command_attributes()->mutable_start_to_fire_timeout() =
        ToProtoDuration(d);
    return c;
  }

  // The run's stored history (as the database has it, not through the engine).
  std::vector<temporal::api::history::v1::HistoryEvent> History(const std::string& run_id) {
    auto events = persistence_->executions().ReadEvents(run_id, 1, 100000, 100000);
    EXPECT_TRUE(events.ok()) << events.status();
    return events.ok() ? *events : std::vector<temporal::api::history::v1::HistoryEvent>{};
  }
  // How many events of `type` the run's stored history has.
  int Count(const std::string& run_id, temporal::api::enums::v1::EventType type) {
    int n = 0;
    for (const auto& e : History(run_id)) n += e.event_type() == type;
    return n;
  }
  // The first event of `type` in the run's stored history, waiting (bounded by kTaskWait)
  // for it to be written: follow-up work of a commit (a child's start, a timer's firing)
  // happens after the call that made it returned.
  std::optional<temporal::api::history::v1::HistoryEvent> WaitForEvent(
      const std::string& run_id, temporal::api::enums::v1::EventType type) {
    const absl::Time until = absl::Now() + kTaskWait;
    while (absl::Now() < until) {
      for (const auto& e : History(run_id)) {
        if (e.event_type() == type) return e;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    return std::nullopt;
  }

  const absl::Time start_;
  const std::string worker_;
  ManualClock clock_;
  std::unique_ptr<persistence::Persistence> persistence_;
  std::unique_ptr<ShardController> shards_;
  std::unique_ptr<TimerThread> timer_thread_;
  std::unique_ptr<matching::MatchingEngine> matching_;
  std::unique_ptr<HistoryEngine> engine_;
  NamespaceRef ns_{"ns-id", "ns", 0};
};

}  // namespace tock::server::history
