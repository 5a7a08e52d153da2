// Two clusters at the engine level, for replication tests: each a history engine on its
// own database, A (initial version 1) and B (initial version 2, increment 10), the
// namespace's failover version as each knows it, and the replication queue of one carried
// to the other by the test (the way HistoryReplicator's pull does: events for history tasks,
// the activity's current state for SyncActivity tasks), at once or collected now and
// delivered later (a partition).
#pragma once

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
#include "server-core/history/version_histories.h"
#include "server-core/replication/history_replicator.h"
#include "server-core/replication/sync_activity_task.h"
#include "tests/integration/engine_fixture.h"

namespace tock::server::history {

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

class TwoClusterEngines : public ::testing::Test {
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
    c.engine->SetOwnsVersion([initial](int64_t version) { return version % kIncrement == initial; });
    ASSERT_TRUE(c.engine->Recover().ok());
  }

  // A forced failover that both clusters learn at once.
  void FailOver(int64_t version) {
    a_.version = version;
    b_.version = version;
  }

  // `from`'s replication tasks not collected yet, as the pull sends them: the events of a
  // history task (from the branch that holds them), the activity's state now for a
  // SyncActivity task (its tasks of one activity in one page sent once).
  std::vector<adm::HistoryReplicationTask> Collect(Cluster& from) {
    std::vector<adm::HistoryReplicationTask> out;
    for (int32_t shard = 1; shard <= kShards; ++shard) {
      auto rows = from.persistence->replication().LoadReplicationTasks(shard, from.sent[shard], 100);
      EXPECT_TRUE(rows.ok()) << rows.status();
      if (!rows.ok()) return out;
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
        const int branch =
            replication::HistoryReplicator::BranchHolding(*run, t.next_event_id() - 1, t.version());
        EXPECT_GE(branch, 0) << "no branch holds task " << row.task_id;
        if (branch < 0) continue;
        const auto& histories = run->version_histories();
        const int32_t count = static_cast<int32_t>(t.next_event_id() - t.first_event_id());
        auto events =
            branch == histories.current_version_history_index()
                ? from.persistence->executions().ReadEvents(t.run_id(), t.first_event_id(),
                                                            t.next_event_id(), count)
                : from.persistence->executions().ReadBranchEvents(
                      t.run_id(), histories.histories(branch).branch_token(), t.first_event_id(),
                      t.next_event_id(), count);
        EXPECT_TRUE(events.ok()) << events.status();
        if (!events.ok()) continue;
        adm::HistoryReplicationTask* task = messages.add_tasks();
        task->set_task_id(row.task_id);
        task->set_namespace_id(t.namespace_id());
        task->set_workflow_id(t.workflow_id());
        task->set_run_id(t.run_id());
        const VersionItems items =
            TruncatedTo(ToItems(histories.histories(branch).items()), t.next_event_id() - 1);
        task->mutable_version_history_items()->Assign(items.begin(), items.end());
        for (const auto& e : *events) *task->add_events() = e;
      }
      out.insert(out.end(), messages.tasks().begin(), messages.tasks().end());
    }
    return out;
  }

  // Applies `tasks` to `to`, as the receiver does (every one must apply, without a gap).
  // Returns how many SyncActivity tasks there were.
  int Deliver(Cluster& to, const std::vector<adm::HistoryReplicationTask>& tasks) {
    int sync_sent = 0;
    for (const adm::HistoryReplicationTask& task : tasks) {
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
    return sync_sent;
  }

  // Carries `from`'s replication tasks not sent yet to `to`. Returns how many SyncActivity
  // tasks were sent.
  int Replicate(Cluster& from, Cluster& to) { return Deliver(to, Collect(from)); }

  std::optional<persistence::TaskQueueTask> PollTask(Cluster& c, const std::string& queue,
                                                     persistence::TaskKind kind,
                                                     absl::Duration wait = kWait) {
    return TakeTaskFrom(*c.matching, kNamespaceId, queue, kind, clock_.Now() + absl::Hours(1),
                        "worker-" + c.name, wait);
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

}  // namespace tock::server::history
