// History service pieces without gRPC: shard routing, range-id fencing, timer ordering,
// and the run transaction's event rules.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "lib/common/timer_thread.h"
#include "lib/common/proto_time.h"
#include "server-core/history/run_transaction.h"
#include "server-core/history/shard_controller.h"
#include "server-core/persistence/persistence.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;

TEST(ShardRoutingTest, StableInRangeAndSpread) {
  std::map<int32_t, int> counts;
  for (int i = 0; i < 4000; ++i) {
    int32_t shard = ShardForWorkflow("ns-id", "wf-" + std::to_string(i), 4);
    ASSERT_GE(shard, 1);
    ASSERT_LE(shard, 4);
    EXPECT_EQ(shard, ShardForWorkflow("ns-id", "wf-" + std::to_string(i), 4));
    ++counts[shard];
  }
  ASSERT_EQ(counts.size(), 4u);
  for (const auto& [shard, n] : counts) EXPECT_GT(n, 800) << "shard " << shard;
  // The namespace id is part of the key, joined with "_" as Temporal does.
  EXPECT_EQ(ShardForWorkflow("a", "b_c", 1024), ShardForWorkflow("a_b", "c", 1024));
}

persistence::Commit OneRunCommit(persistence::Persistence& p, ShardController& shards,
                                 const std::string& workflow_id) {
  MutableStateRecord state;
  state.mutable_execution()->set_namespace_id("ns");
  state.mutable_execution()->set_workflow_id(workflow_id);
  state.mutable_execution()->set_run_id("run-" + workflow_id);
  state.mutable_execution()->set_status(enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
  RunTransaction tx(state, absl::FromUnixSeconds(1'800'000'000), 0, shards);
  tx.Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)
      .mutable_workflow_execution_started_event_attributes();
  persistence::Commit commit;
  commit.shard_id = tx.shard_id();
  commit.range_id = shards.RangeId(tx.shard_id());
  commit.runs.push_back(tx.TakeRunWrite(persistence::CurrentRunChange::kCreate));
  return commit;
}

TEST(RangeFencingTest, AStaleOwnerWritesNothing) {
  auto p = persistence::OpenPersistence({});
  ASSERT_TRUE(p.ok());
  ShardController old_owner((*p)->executions(), 1, "old");
  ASSERT_TRUE(old_owner.AcquireAll().ok());
  EXPECT_EQ(old_owner.NextTaskId(1) >> 20, old_owner.RangeId(1));

  ShardController new_owner((*p)->executions(), 1, "new");
  ASSERT_TRUE(new_owner.AcquireAll().ok());
  EXPECT_EQ(new_owner.RangeId(1), old_owner.RangeId(1) + 1);

  persistence::Commit stale = OneRunCommit(**p, old_owner, "wf");
  absl::Status s = (*p)->executions().Write(stale);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("owned by another server"), std::string::npos);
  EXPECT_EQ((*p)->executions().GetCurrentRun("ns", "wf").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ((*p)->executions().ReadEvents("run-wf", 1, 100, 100)->size(), 0u);

  persistence::Commit fresh = OneRunCommit(**p, new_owner, "wf");
  ASSERT_TRUE((*p)->executions().Write(fresh).ok());
  EXPECT_EQ((*p)->executions().GetCurrentRun("ns", "wf")->run_id, "run-wf");
  persistence::Commit again = OneRunCommit(**p, new_owner, "wf");
  again.runs[0].state.mutable_execution()->set_run_id("other-run");
  EXPECT_EQ((*p)->executions().Write(again).code(), absl::StatusCode::kAlreadyExists);
}

TEST(RunTransactionTest, BufferedEventsGetIdsAtFlushAndReferToTheirStart) {
  auto p = persistence::OpenPersistence({});
  ASSERT_TRUE(p.ok());
  ShardController shards((*p)->executions(), 1, "test");
  ASSERT_TRUE(shards.AcquireAll().ok());
  MutableStateRecord state;
  state.mutable_execution()->set_namespace_id("ns");
  state.mutable_execution()->set_workflow_id("wf");
  state.mutable_execution()->set_run_id("run");
  state.mutable_execution()->set_status(enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
  RunTransaction tx(state, absl::FromUnixSeconds(1'800'000'000), 7, shards);
  tx.Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  tx.ScheduleWorkflowTask();
  EXPECT_EQ(tx.state().workflow_task().scheduled_event_id(), 2);
  tx.state().mutable_workflow_task()->set_started_event_id(3);
  tx.Append(enums::EVENT_TYPE_WORKFLOW_TASK_STARTED);

  // While the task is started, outside events wait without ids.
  HistoryEvent& started = tx.AppendOrBuffer(enums::EVENT_TYPE_ACTIVITY_TASK_STARTED);
  started.mutable_activity_task_started_event_attributes()->set_scheduled_event_id(5);
  HistoryEvent& done = tx.AppendOrBuffer(enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
  done.mutable_activity_task_completed_event_attributes()->set_scheduled_event_id(5);
  EXPECT_EQ(tx.new_events().size(), 3u);
  EXPECT_TRUE(tx.HasBuffered());
  tx.ScheduleWorkflowTask();  // one workflow task at a time: nothing happens
  EXPECT_EQ(tx.new_events().size(), 3u);

  tx.state().clear_workflow_task();
  tx.Append(enums::EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  tx.FlushBuffered();
  ASSERT_EQ(tx.new_events().size(), 6u);
  for (size_t i = 0; i < tx.new_events().size(); ++i) {
    EXPECT_EQ(tx.new_events()[i].event_id(), static_cast<int64_t>(i + 1)) << "dense ids";
    EXPECT_EQ(tx.new_events()[i].version(), 7);
  }
  EXPECT_EQ(tx.new_events()[5].activity_task_completed_event_attributes().started_event_id(), 5);
  const auto& items = tx.state().version_histories().histories(0).items();
  ASSERT_EQ(items.size(), 1);
  EXPECT_EQ(items[0].event_id(), 6);
  EXPECT_EQ(items[0].version(), 7);
}

TEST(TimerOrderTest, StoredTimersComeBackEarliestFirst) {
  auto p = persistence::OpenPersistence({});
  ASSERT_TRUE(p.ok());
  ShardController shards((*p)->executions(), 1, "test");
  ASSERT_TRUE(shards.AcquireAll().ok());
  persistence::Commit commit = OneRunCommit(**p, shards, "wf");
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  for (int seconds : {30, 10, 20, 10}) {
    persistence::TimerTaskRow row;
    row.shard_id = 1;
    row.fire_time = t0 + absl::Seconds(seconds);
    row.task_id = shards.NextTaskId(1);
    row.task.set_timer_id(std::to_string(seconds));
    commit.new_timers.push_back(row);
  }
  ASSERT_TRUE((*p)->executions().Write(commit).ok());
  auto due = (*p)->executions().LoadTimers(1, {}, t0 + absl::Seconds(25), 100);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 3u);
  EXPECT_EQ((*due)[0].task.timer_id(), "10");
  EXPECT_EQ((*due)[1].task.timer_id(), "10");
  EXPECT_LT((*due)[0].task_id, (*due)[1].task_id);
  EXPECT_EQ((*due)[2].task.timer_id(), "20");
}

TEST(TimerThreadTest, FiresInTimeOrderAndCancels) {
  ManualClock clock;
  TimerThread timers(clock);
  std::mutex mu;
  std::vector<int> fired;
  std::atomic<int> count{0};
  auto record = [&](int n) {
    return [&, n] {
      std::lock_guard lock(mu);
      fired.push_back(n);
      ++count;
    };
  };
  const absl::Time t0 = clock.Now();
  timers.Schedule(t0 + absl::Seconds(3), record(3));
  timers.Schedule(t0 + absl::Seconds(1), record(1));
  auto cancelled = timers.Schedule(t0 + absl::Seconds(2), record(2));
  timers.Schedule(t0 + absl::Seconds(2), record(22));
  EXPECT_TRUE(timers.Cancel(cancelled));
  EXPECT_FALSE(timers.Cancel(cancelled));
  clock.Advance(absl::Seconds(5));
  timers.Wake();
  for (int i = 0; i < 500 && count < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::lock_guard lock(mu);
  EXPECT_EQ(fired, (std::vector<int>{1, 22, 3}));
}

}  // namespace
}  // namespace tock::server::history
