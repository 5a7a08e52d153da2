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
#include "tests/integration/two_cluster_engines.h"

namespace tock::server::history {
namespace {

class ReplicationFailoverTest : public TwoClusterEngines {};

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
