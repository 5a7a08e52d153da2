// Failover with work in flight, engine level (reference/replication.md §4.5, §6.3 scenario
// 9): two clusters, each a history engine on its own database, A (initial version 1) and B
// (initial version 2, increment 10), with the replication queue of one carried to the other
// by this test (the way HistoryReplicator's pull does: events for history tasks, the
// activity's current state for SyncActivity tasks).
//  (a) A workflow task a worker of A started is failed by B's first write after the
//      failover (WORKFLOW_TASK_FAILED_CAUSE_FAILOVER_CLOSE_COMMAND, B's version) and a new
//      one dispatched to B's workers; A refuses the late completion.
//  (b) A pending activity's heartbeat details, attempt and last failure reach B (SyncActivity)
//      and B retries the activity with them after the failover.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/proto_time.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/shard_controller.h"
#include "server-core/matching/matching_engine.h"
#include "server-core/persistence/persistence.h"
#include "server-core/replication/sync_activity_task.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
namespace adm = tock::admin::v1;
using temporal::api::command::v1::Command;
using temporal::api::history::v1::HistoryEvent;

const absl::Time kStart = absl::FromUnixMicros(1'800'000'000'000'000);
constexpr absl::Duration kWait = absl::Seconds(10);  // bound on every wait in these tests
constexpr int64_t kIncrement = 10;
constexpr char kNamespaceId[] = "ns-id";
constexpr int32_t kShards = 2;

// One cluster: its database, engine and matching; the namespace's failover version as this
// cluster knows it.
struct Cluster {
  std::string name;
  int64_t initial_version = 0;
  std::atomic<int64_t> version{1};
  std::unique_ptr<persistence::Persistence> persistence;
  std::unique_ptr<ShardController> shards;
  std::unique_ptr<TimerThread> timer_thread;
  std::unique_ptr<matching::MatchingEngine> matching;
  std::unique_ptr<HistoryEngine> engine;
  std::map<int32_t, int64_t> sent;  // replication cursor per shard (for the other cluster)

  NamespaceRef ns() const { return NamespaceRef{kNamespaceId, "ns", version.load()}; }
  bool active() const { return version.load() % kIncrement == initial_version; }
};

class ReplicationFailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_.Set(kStart);
    Open(a_, "a", 1);
    Open(b_, "b", 2);
  }
  void TearDown() override {
    for (Cluster* c : {&a_, &b_}) {
      c->engine->StopBackground();
      c->timer_thread.reset();
      c->engine.reset();
    }
  }

  void Open(Cluster& c, const std::string& name, int64_t initial) {
    c.name = name;
    c.initial_version = initial;
    auto p = persistence::OpenPersistence({});
    ASSERT_TRUE(p.ok()) << p.status();
    c.persistence = std::move(*p);
    c.shards = std::make_unique<ShardController>(c.persistence->executions(), kShards, name);
    ASSERT_TRUE(c.shards->AcquireAll().ok());
    c.timer_thread = std::make_unique<TimerThread>(clock_);
    c.matching = std::make_unique<matching::MatchingEngine>(clock_, *c.timer_thread);
    c.engine = std::make_unique<HistoryEngine>(c.persistence->executions(), *c.shards,
                                               *c.matching, clock_, *c.timer_thread, NullLogger());
    Cluster* self = &c;
    c.engine->SetNamespaceActivity([self](const std::string&) {
      HistoryEngine::NamespaceActivity activity;
      activity.failover_version = self->version.load();
      activity.active = self->active();
      activity.version_increment = kIncrement;
      activity.name = "ns";
      activity.active_cluster = self->active() ? self->name : (self->name == "a" ? "b" : "a");
      activity.current_cluster = self->name;
      return activity;
    });
    ASSERT_TRUE(c.engine->Recover().ok());
  }

  // A forced failover that both clusters learn at once.
  void FailOver(int64_t version) {
    a_.version = version;
    b_.version = version;
  }

  // Carries `from`'s replication tasks not sent yet to `to`, as the pull does: the events of
  // a history task, the activity's state now for a SyncActivity task (its tasks of one
  // activity in one page sent once). Returns how many SyncActivity tasks were sent.
  int Replicate(Cluster& from, Cluster& to) {
    int sync_sent = 0;
    for (int32_t shard = 1; shard <= kShards; ++shard) {
      auto rows = from.persistence->replication().LoadReplicationTasks(shard, from.sent[shard], 100);
      EXPECT_TRUE(rows.ok()) << rows.status();
      if (!rows.ok()) return sync_sent;
      adm::ReplicationMessages messages;
      replication::SentActivities sent;
      for (const persistence::ReplicationTaskRow& row : *rows) {
        from.sent[shard] = row.task_id;
        const auto& t = row.task;
        auto run = from.persistence->executions().GetRun(t.namespace_id(), t.workflow_id(), t.run_id());
        EXPECT_TRUE(run.ok()) << run.status();
        if (!run.ok()) continue;
        if (t.kind() == tock::persistence::v1::ReplicationTask::KIND_SYNC_ACTIVITY) {
          replication::AddSyncActivityTask(*run, row.task_id, t, sent, messages);
          continue;
        }
        auto events = from.persistence->executions().ReadEvents(
            t.run_id(), t.first_event_id(), t.next_event_id(),
            static_cast<int32_t>(t.next_event_id() - t.first_event_id()));
        EXPECT_TRUE(events.ok()) << events.status();
        adm::HistoryReplicationTask* task = messages.add_tasks();
        task->set_namespace_id(t.namespace_id());
        task->set_workflow_id(t.workflow_id());
        task->set_run_id(t.run_id());
        *task->mutable_version_history_items() = run->version_histories().histories(0).items();
        for (const auto& e : *events) *task->add_events() = e;
      }
      for (const adm::HistoryReplicationTask& task : messages.tasks()) {
        const std::vector<tock::persistence::v1::VersionHistoryItem> items(
            task.version_history_items().begin(), task.version_history_items().end());
        absl::StatusOr<std::optional<HistoryEngine::ReplicationGap>> applied;
        if (task.has_sync_activity()) {
          ++sync_sent;
          applied = to.engine->ApplySyncActivity(task.namespace_id(), task.workflow_id(),
                                                 task.run_id(), items, task.sync_activity().version(),
                                                 task.sync_activity().activity());
        } else {
          applied = to.engine->ApplyReplicated(task.namespace_id(), task.workflow_id(), task.run_id(),
                                               items, {task.events().begin(), task.events().end()});
        }
        EXPECT_TRUE(applied.ok()) << applied.status();
        EXPECT_TRUE(applied.ok() && !applied->has_value()) << "a gap";
      }
    }
    return sync_sent;
  }

  std::optional<persistence::TaskQueueTask> PollTask(Cluster& c, const std::string& queue,
                                                     persistence::TaskKind kind,
                                                     absl::Duration wait = kWait) {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<persistence::TaskQueueTask> got;
    bool done = false;
    c.matching->Poll(kNamespaceId, queue, kind, clock_.Now() + absl::Hours(1), "worker-" + c.name,
                     [&](std::optional<persistence::TaskQueueTask> task) {
                       std::lock_guard lock(mu);
                       got = std::move(task);
                       done = true;
                       cv.notify_all();
                     });
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, absl::ToChronoNanoseconds(wait), [&] { return done; })) {
      // The poll stays registered; a later task would go to it and be lost: these tests
      // expect a task each time they poll.
      return std::nullopt;
    }
    return got;
  }

  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> PollWorkflowTask(Cluster& c) {
    for (int i = 0; i < 10; ++i) {
      std::optional<persistence::TaskQueueTask> task = PollTask(c, "q", persistence::TaskKind::kWorkflow);
      if (!task) return absl::DeadlineExceededError("no workflow task on " + c.name);
      auto started = c.engine->RecordWorkflowTaskStarted(c.ns(), *task, "worker-" + c.name);
      if (started.status().code() != absl::StatusCode::kNotFound) return started;
    }
    return absl::DeadlineExceededError("only stale workflow tasks on " + c.name);
  }

  absl::StatusOr<wf::PollActivityTaskQueueResponse> PollActivityTask(Cluster& c) {
    for (int i = 0; i < 10; ++i) {
      std::optional<persistence::TaskQueueTask> task = PollTask(c, "q", persistence::TaskKind::kActivity);
      if (!task) return absl::DeadlineExceededError("no activity task on " + c.name);
      auto started = c.engine->RecordActivityTaskStarted(c.ns(), *task, "worker-" + c.name);
      if (started.status().code() != absl::StatusCode::kNotFound) return started;
    }
    return absl::DeadlineExceededError("only stale activity tasks on " + c.name);
  }

  std::string Start(Cluster& c, const std::string& workflow_id) {
    wf::StartWorkflowExecutionRequest req;
    req.set_workflow_id(workflow_id);
    req.mutable_workflow_type()->set_name("flow");
    req.mutable_task_queue()->set_name("q");
    req.set_request_id("start-" + workflow_id);
    *req.mutable_workflow_task_timeout() = ToProtoDuration(absl::Seconds(10));
    auto started = c.engine->StartWorkflow(c.ns(), req);
    EXPECT_TRUE(started.ok()) << started.status();
    return started.ok() ? started->run_id() : "";
  }

  absl::Status Signal(Cluster& c, const std::string& workflow_id, const std::string& name) {
    wf::SignalWorkflowExecutionRequest req;
    req.mutable_workflow_execution()->set_workflow_id(workflow_id);
    req.set_signal_name(name);
    req.set_identity("client");
    req.set_request_id("signal-" + name);
    return c.engine->SignalWorkflow(c.ns(), req);
  }

  absl::Status Complete(Cluster& c, const std::string& token, const std::vector<Command>& commands) {
    wf::RespondWorkflowTaskCompletedRequest done;
    done.set_task_token(token);
    done.set_identity("worker-" + c.name);
    for (const Command& command : commands) *done.add_commands() = command;
    return c.engine->RespondWorkflowTaskCompleted(c.ns(), done).status();
  }

  std::vector<HistoryEvent> History(Cluster& c, const std::string& run_id) {
    auto events = c.persistence->executions().ReadEvents(run_id, 1, 100000, 100000);
    EXPECT_TRUE(events.ok()) << events.status();
    return events.ok() ? *events : std::vector<HistoryEvent>{};
  }

  MutableStateRecord Stored(Cluster& c, const std::string& workflow_id, const std::string& run_id) {
    auto state = c.persistence->executions().GetRun(kNamespaceId, workflow_id, run_id);
    EXPECT_TRUE(state.ok()) << state.status();
    return state.ok() ? *state : MutableStateRecord();
  }

  // Waits (bounded) until the run's last event on `c` has `type`.
  bool WaitForLast(Cluster& c, const std::string& run_id, enums::EventType type) {
    const absl::Time until = absl::Now() + kWait;
    while (absl::Now() < until) {
      std::vector<HistoryEvent> events = History(c, run_id);
      if (!events.empty() && events.back().event_type() == type) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  }

  void ExpectSameHistories(const std::string& run_id) {
    std::vector<HistoryEvent> on_a = History(a_, run_id), on_b = History(b_, run_id);
    ASSERT_EQ(on_a.size(), on_b.size());
    for (size_t i = 0; i < on_a.size(); ++i) {
      EXPECT_EQ(on_a[i].SerializeAsString(), on_b[i].SerializeAsString()) << "event " << i + 1;
    }
  }

  static Command ScheduleActivity(absl::Duration heartbeat) {
    Command c;
    c.set_command_type(enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK);
    auto* a = c.mutable_schedule_activity_task_command_attributes();
    a->set_activity_id("act-1");
    a->mutable_activity_type()->set_name("act");
    a->mutable_task_queue()->set_name("q");
    *a->mutable_start_to_close_timeout() = ToProtoDuration(absl::Minutes(1));
    *a->mutable_heartbeat_timeout() = ToProtoDuration(heartbeat);
    *a->mutable_retry_policy()->mutable_initial_interval() = ToProtoDuration(absl::Seconds(1));
    return c;
  }

  ManualClock clock_;
  Cluster a_, b_;
};

// Scenario 9a: the signal is B's first write of the run after the failover.
TEST_F(ReplicationFailoverTest, AWorkflowTaskStartedOnAIsFailedAndRescheduledByBsFirstWrite) {
  const std::string run = Start(a_, "wf");
  auto held = PollWorkflowTask(a_);  // a worker of A holds it
  ASSERT_TRUE(held.ok()) << held.status();
  Replicate(a_, b_);
  ASSERT_EQ(History(b_, run).back().event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_STARTED);

  FailOver(2);
  ASSERT_TRUE(Signal(b_, "wf", "s1").ok());
  std::vector<HistoryEvent> events = History(b_, run);
  ASSERT_EQ(events.size(), 6u);
  const HistoryEvent& failed = events[3];
  ASSERT_EQ(failed.event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_FAILED);
  EXPECT_EQ(failed.workflow_task_failed_event_attributes().cause(),
            enums::WORKFLOW_TASK_FAILED_CAUSE_FAILOVER_CLOSE_COMMAND);
  EXPECT_EQ(failed.workflow_task_failed_event_attributes().scheduled_event_id(), 2);
  EXPECT_EQ(failed.workflow_task_failed_event_attributes().started_event_id(), 3);
  EXPECT_EQ(failed.workflow_task_failed_event_attributes().identity(), kHistoryServiceIdentity);
  EXPECT_EQ(events[4].event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
  EXPECT_EQ(events[4].workflow_task_scheduled_event_attributes().attempt(), 1);
  EXPECT_EQ(events[5].event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].version(), i < 3 ? 1 : 2) << "event " << i + 1;
  }

  // The new task goes to B's workers, with the signal in its history.
  auto taken = PollWorkflowTask(b_);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(taken->started_event_id(), 7);
  EXPECT_EQ(taken->history().events(5).event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);

  // The worker of A answers late: A is no longer active.
  absl::Status late = Complete(a_, held->task_token(), {});
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition) << late;
  EXPECT_TRUE(absl::StrContains(late.message(), "is active in cluster: b")) << late;

  ASSERT_TRUE(Complete(b_, taken->task_token(), {}).ok());
  Replicate(b_, a_);
  ExpectSameHistories(run);
  EXPECT_EQ(Stored(a_, "wf", run).workflow_task().scheduled_event_id(), 0)
      << "A's copy no longer has the task its worker held";
}

// Without a signal: the task's start-to-close timer, due on B after the failover, fails it
// for the failover (not a timeout: the worker did not fail to answer, it answered elsewhere).
TEST_F(ReplicationFailoverTest, TheWorkflowTaskTimeoutOnBFailsItForTheFailover) {
  const std::string run = Start(a_, "wf");
  ASSERT_TRUE(PollWorkflowTask(a_).ok());
  Replicate(a_, b_);
  FailOver(2);
  clock_.Advance(absl::Seconds(11));
  b_.engine->WakeTimers();
  ASSERT_TRUE(WaitForLast(b_, run, enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED));
  std::vector<HistoryEvent> events = History(b_, run);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[3].event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_FAILED);
  EXPECT_EQ(events[3].workflow_task_failed_event_attributes().cause(),
            enums::WORKFLOW_TASK_FAILED_CAUSE_FAILOVER_CLOSE_COMMAND);
  EXPECT_EQ(events[3].version(), 2);
  EXPECT_EQ(events[4].version(), 2);
  auto taken = PollWorkflowTask(b_);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(taken->attempt(), 1);
}

// A task this cluster's worker started before the namespace failed over away and back is
// kept: its worker talks to this cluster and may still complete it.
TEST_F(ReplicationFailoverTest, AWorkflowTaskStartedHereBeforeFailingAwayAndBackIsKept) {
  const std::string run = Start(a_, "wf");
  auto held = PollWorkflowTask(a_);
  ASSERT_TRUE(held.ok()) << held.status();
  FailOver(2);
  FailOver(11);
  ASSERT_TRUE(Signal(a_, "wf", "s1").ok());
  for (const HistoryEvent& e : History(a_, run)) {
    EXPECT_NE(e.event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_FAILED);
  }
  EXPECT_TRUE(Complete(a_, held->task_token(), {}).ok());
}

// Scenario 9b (Temporal's TestActivityHeartbeatFailover).
TEST_F(ReplicationFailoverTest, AnActivitysHeartbeatReachesBWhichRetriesItAfterTheFailover) {
  const std::string run = Start(a_, "wf");
  auto wft = PollWorkflowTask(a_);
  ASSERT_TRUE(wft.ok()) << wft.status();
  ASSERT_TRUE(Complete(a_, wft->task_token(), {ScheduleActivity(absl::Seconds(3))}).ok());
  auto activity = PollActivityTask(a_);
  ASSERT_TRUE(activity.ok()) << activity.status();
  temporal::api::common::v1::Payloads details;
  details.add_payloads()->set_data("50");
  ASSERT_TRUE(a_.engine->RecordActivityTaskHeartbeat(a_.ns(), activity->task_token(), details).ok());
  clock_.Advance(absl::Seconds(1));
  details.mutable_payloads(0)->set_data("100");
  ASSERT_TRUE(a_.engine->RecordActivityTaskHeartbeat(a_.ns(), activity->task_token(), details).ok());

  // Three changes without events (started, two heartbeats), three tasks in A's queue; the
  // activity's state is sent once, as it is last.
  int queued = 0;
  for (int32_t shard = 1; shard <= kShards; ++shard) {
    auto rows = a_.persistence->replication().LoadReplicationTasks(shard, 0, 100);
    ASSERT_TRUE(rows.ok()) << rows.status();
    for (const auto& row : *rows) {
      if (row.task.kind() != tock::persistence::v1::ReplicationTask::KIND_SYNC_ACTIVITY) continue;
      ++queued;
      EXPECT_EQ(row.task.version(), 1);
      EXPECT_EQ(row.task.scheduled_event_id(), 5);
    }
  }
  EXPECT_EQ(queued, 3);
  EXPECT_EQ(Replicate(a_, b_), 1);
  const tock::persistence::v1::ActivityInfo started_on_b = Stored(b_, "wf", run).activities().at(5);
  EXPECT_TRUE(started_on_b.has_started_time());
  EXPECT_EQ(started_on_b.heartbeat_details().payloads(0).data(), "100");
  EXPECT_EQ(started_on_b.version(), 1);

  // A's worker stops; the heartbeat timeout passes on A, which schedules attempt 2.
  clock_.Advance(absl::Seconds(4));
  a_.engine->WakeTimers();
  const absl::Time until = absl::Now() + kWait;
  while (absl::Now() < until && Stored(a_, "wf", run).activities().at(5).attempt() < 2) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_EQ(Stored(a_, "wf", run).activities().at(5).attempt(), 2);
  EXPECT_EQ(Replicate(a_, b_), 1);
  const tock::persistence::v1::ActivityInfo retried = Stored(b_, "wf", run).activities().at(5);
  EXPECT_EQ(retried.attempt(), 2);
  EXPECT_FALSE(retried.has_started_time());
  EXPECT_EQ(retried.heartbeat_details().payloads(0).data(), "100");
  EXPECT_EQ(retried.last_failure().timeout_failure_info().timeout_type(),
            enums::TIMEOUT_TYPE_HEARTBEAT);

  // An older state (delivered late, or again) changes nothing.
  const MutableStateRecord on_a = Stored(a_, "wf", run);
  const auto& items_on_a = on_a.version_histories().histories(0).items();
  auto stale = b_.engine->ApplySyncActivity(kNamespaceId, "wf", run,
                                            {items_on_a.begin(), items_on_a.end()}, 1, started_on_b);
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_EQ(Stored(b_, "wf", run).activities().at(5).attempt(), 2);
  // A run B does not have is dropped.
  tock::persistence::v1::VersionHistoryItem item;
  item.set_event_id(5);
  item.set_version(1);
  auto unknown = b_.engine->ApplySyncActivity(kNamespaceId, "wf", "no-such-run", {item}, 1,
                                              started_on_b);
  EXPECT_TRUE(unknown.ok() && !unknown->has_value()) << unknown.status();

  // The failover: B describes the pending activity with what A's worker left, and its
  // retry timer (parked while B was standby) dispatches attempt 2 to B's workers.
  FailOver(2);
  wf::DescribeWorkflowExecutionRequest describe;
  describe.mutable_execution()->set_workflow_id("wf");
  auto described = b_.engine->DescribeWorkflow(b_.ns(), describe);
  ASSERT_TRUE(described.ok()) << described.status();
  ASSERT_EQ(described->pending_activities_size(), 1);
  const auto& pending = described->pending_activities(0);
  EXPECT_EQ(pending.state(), enums::PENDING_ACTIVITY_STATE_SCHEDULED);
  EXPECT_EQ(pending.attempt(), 2);
  EXPECT_EQ(pending.heartbeat_details().payloads(0).data(), "100");
  EXPECT_EQ(pending.last_failure().timeout_failure_info().timeout_type(),
            enums::TIMEOUT_TYPE_HEARTBEAT);

  clock_.Advance(absl::Seconds(2));
  b_.engine->WakeTimers();
  auto second = PollActivityTask(b_);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->attempt(), 2);
  ASSERT_EQ(second->heartbeat_details().payloads_size(), 1);
  EXPECT_EQ(second->heartbeat_details().payloads(0).data(), "100");
  ASSERT_TRUE(b_.engine->RespondActivityTaskCompleted(b_.ns(), second->task_token(), {}, "worker-b").ok());
  ASSERT_TRUE(WaitForLast(b_, run, enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED));
  Replicate(b_, a_);
  ExpectSameHistories(run);
}

}  // namespace
}  // namespace tock::server::history
