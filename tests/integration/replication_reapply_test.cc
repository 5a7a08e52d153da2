// What a losing branch received from outside is applied again to the winner (reference/
// replication.md §3.5 step 6), engine level, two clusters (two_cluster_engines.h):
//  - a standby that finds a losing branch forwards its signals to the active cluster
//    (AdminService.ReapplyEvents; here the forwarder calls the other engine directly), which
//    applies each once, also when the branch is delivered again;
//  - updates of a losing branch are admitted again (origin REAPPLY), once;
//  - a standby refuses ReapplyEvents with NamespaceNotActive;
//  - a signal A buffered while its worker held a workflow task is not lost when B's events
//    arrive after a failover: A writes it first as its own (§3.5 step 3), B applies it again.
#include "tests/integration/two_cluster_engines.h"

namespace tock::server::history {
namespace {

class ReplicationReapplyTest : public TwoClusterEngines {
 protected:
  void SetUp() override {
    TwoClusterEngines::SetUp();
    // The standby's forward reaches the other cluster's engine, as the RPC would.
    for (Cluster* c : {&a_, &b_}) {
      c->engine->SetReapplyForwarder([this](const std::string& active_cluster,
                                            const std::string& namespace_id,
                                            const std::string& workflow_id,
                                            const std::vector<HistoryEvent>& events) {
        ++forwards_;
        Cluster& to = active_cluster == "a" ? a_ : b_;
        return to.engine->ReapplyEvents(namespace_id, workflow_id, events);
      });
    }
  }

  static std::vector<std::string> Signals(const std::vector<HistoryEvent>& events) {
    std::vector<std::string> out;
    for (const HistoryEvent& e : events) {
      if (e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) {
        out.push_back(absl::StrCat(e.workflow_execution_signaled_event_attributes().signal_name(),
                                   "@v", e.version()));
      }
    }
    return out;
  }

  static HistoryEvent UpdateEvent(enums::EventType type, const std::string& update_id) {
    HistoryEvent e;
    e.set_event_id(7);
    e.set_version(2);
    e.set_task_id(70);
    e.set_event_type(type);
    temporal::api::update::v1::Request request;
    request.mutable_meta()->set_update_id(update_id);
    request.mutable_input()->set_name("add");
    if (type == enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) {
      auto* attrs = e.mutable_workflow_execution_update_accepted_event_attributes();
      attrs->set_protocol_instance_id(update_id);
      *attrs->mutable_accepted_request() = request;
    } else {
      *e.mutable_workflow_execution_update_admitted_event_attributes()->mutable_request() = request;
    }
    return e;
  }

  std::atomic<int> forwards_{0};
};

// B's signal, written while B was forced active in a partition, reaches A only after the
// namespace failed over to B for good: on A it lies on a losing branch, and A is standby.
// Without the forward it would be lost: B itself dropped its branch when A's newer one won.
TEST_F(ReplicationReapplyTest, AStandbyForwardsALosingBranchsSignalToTheActiveCluster) {
  const std::string run = Start(a_, "wf");
  Replicate(a_, b_);
  // The partition: B is made active by force (version 2) and signaled.
  b_.version = 2;
  ASSERT_TRUE(Signal(b_, "wf", "s-b").ok());
  const std::vector<adm::HistoryReplicationTask> from_b = Collect(b_);
  ASSERT_EQ(from_b.size(), 1u);
  // A fails over away and back without hearing of it (version 11) and is signaled too.
  a_.version = 11;
  ASSERT_TRUE(Signal(a_, "wf", "s-a").ok());
  // The namespace heals first (11, active A): A's branch wins on B, which switches to it.
  b_.version = 11;
  Replicate(a_, b_);
  EXPECT_EQ(Signals(History(b_, run)), std::vector<std::string>({"s-a@v11"}));
  // An operator fails over to B (12); then B's old branch reaches A.
  FailOver(12);
  Deliver(a_, from_b);
  EXPECT_EQ(forwards_.load(), 1);
  // B applied s-b again as its own event, at its version; A receives it like any other.
  EXPECT_EQ(Signals(History(b_, run)), std::vector<std::string>({"s-a@v11", "s-b@v12"}));
  Replicate(b_, a_);
  ExpectSameHistories(run);
  const MutableStateRecord on_a = Stored(a_, "wf", run);
  EXPECT_EQ(on_a.version_histories().histories_size(), 2) << "A keeps B's losing branch";

  // Delivered again (a receiver's restart): forwarded again, applied once all the same.
  const size_t events = History(b_, run).size();
  Deliver(a_, from_b);
  EXPECT_EQ(forwards_.load(), 2);
  EXPECT_EQ(History(b_, run).size(), events);
  Replicate(b_, a_);
  ExpectSameHistories(run);
}

// When the forward fails (the active cluster unreachable), the task fails and is delivered
// again: then the events, already on their branch, are forwarded again.
TEST_F(ReplicationReapplyTest, AFailedForwardFailsTheTaskAndItsNextDeliveryForwardsAgain) {
  const std::string run = Start(a_, "wf");
  Replicate(a_, b_);
  b_.version = 2;
  ASSERT_TRUE(Signal(b_, "wf", "s-b").ok());
  const std::vector<adm::HistoryReplicationTask> from_b = Collect(b_);
  a_.version = 11;
  ASSERT_TRUE(Signal(a_, "wf", "s-a").ok());
  b_.version = 11;
  Replicate(a_, b_);
  FailOver(12);
  bool reachable = false;
  a_.engine->SetReapplyForwarder(
      [&](const std::string&, const std::string& namespace_id, const std::string& workflow_id,
          const std::vector<HistoryEvent>& events) -> absl::Status {
        if (!reachable) return absl::UnavailableError("connection refused");
        return b_.engine->ReapplyEvents(namespace_id, workflow_id, events);
      });
  const adm::HistoryReplicationTask& task = from_b.front();
  const std::vector<tock::persistence::v1::VersionHistoryItem> items(
      task.version_history_items().begin(), task.version_history_items().end());
  const std::vector<HistoryEvent> events(task.events().begin(), task.events().end());
  absl::StatusOr<std::optional<HistoryEngine::ReplicationGap>> applied =
      a_.engine->ApplyReplicated(task.namespace_id(), task.workflow_id(), task.run_id(), items, events);
  ASSERT_EQ(applied.status().code(), absl::StatusCode::kUnavailable) << applied.status();
  EXPECT_NE(applied.status().message().find("forwarding 1 events of a losing branch to cluster b"),
            std::string::npos)
      << applied.status();
  EXPECT_EQ(Signals(History(b_, run)), std::vector<std::string>({"s-a@v11"}));

  reachable = true;
  applied = a_.engine->ApplyReplicated(task.namespace_id(), task.workflow_id(), task.run_id(), items, events);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(Signals(History(b_, run)), std::vector<std::string>({"s-a@v11", "s-b@v12"}));
}

TEST_F(ReplicationReapplyTest, UpdatesOfALosingBranchAreAdmittedAgainOnce) {
  FailOver(2);  // B active
  const std::string b_run = Start(b_, "wf-b");
  const size_t before = History(b_, b_run).size();
  const std::vector<HistoryEvent> events = {
      UpdateEvent(enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED, "u-1"),
      UpdateEvent(enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED, "u-2"),
  };
  std::vector<HistoryEvent> renumbered = events;
  renumbered[1].set_event_id(8);
  renumbered[1].set_task_id(80);
  // Not reappliable: ignored.
  HistoryEvent scheduled;
  scheduled.set_event_id(9);
  scheduled.set_version(2);
  scheduled.set_event_type(enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
  renumbered.push_back(scheduled);
  ASSERT_TRUE(b_.engine->ReapplyEvents(kNamespaceId, "wf-b", renumbered).ok());
  std::vector<HistoryEvent> after = History(b_, b_run);
  ASSERT_EQ(after.size(), before + 2);
  for (size_t i = before; i < after.size(); ++i) {
    const HistoryEvent& e = after[i];
    ASSERT_EQ(e.event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED);
    EXPECT_EQ(e.workflow_execution_update_admitted_event_attributes().origin(),
              enums::UPDATE_ADMITTED_EVENT_ORIGIN_REAPPLY);
    EXPECT_EQ(e.workflow_execution_update_admitted_event_attributes().request().meta().update_id(),
              i == before ? "u-1" : "u-2");
    EXPECT_EQ(e.workflow_execution_update_admitted_event_attributes().request().input().name(), "add");
    EXPECT_EQ(e.version(), 2);
  }
  // The start's workflow task is still pending: it carries them; none is added.
  EXPECT_NE(Stored(b_, "wf-b", b_run).workflow_task().scheduled_event_id(), 0);

  // The same events again: nothing new.
  ASSERT_TRUE(b_.engine->ReapplyEvents(kNamespaceId, "wf-b", renumbered).ok());
  EXPECT_EQ(History(b_, b_run).size(), before + 2);
}

TEST_F(ReplicationReapplyTest, ASignalBufferedOnTheOldActiveClusterReachesTheNewOne) {
  const std::string run = Start(a_, "wf");
  ASSERT_TRUE(PollWorkflowTask(a_).ok());  // A's worker holds the workflow task
  Replicate(a_, b_);
  ASSERT_TRUE(Signal(a_, "wf", "late").ok());  // buffered behind the started task
  EXPECT_TRUE(Collect(a_).empty()) << "a buffered event is not replicated yet";
  FailOver(12);
  ASSERT_TRUE(Signal(b_, "wf", "s-b").ok());
  Replicate(b_, a_);
  // A wrote its buffered signal first, as its own (version 1), then took B's newer branch.
  EXPECT_EQ(Stored(a_, "wf", run).buffered_events_size(), 0);
  EXPECT_EQ(Signals(History(a_, run)), std::vector<std::string>({"s-b@v12"}));
  Replicate(a_, b_);  // A's flushed events lose on B, which applies the signal again
  EXPECT_EQ(Signals(History(b_, run)), std::vector<std::string>({"s-b@v12", "late@v12"}));
  Replicate(b_, a_);
  ExpectSameHistories(run);
}

TEST_F(ReplicationReapplyTest, AStandbyRefusesReapplyEventsWithNamespaceNotActive) {
  Start(a_, "wf");
  Replicate(a_, b_);
  HistoryEvent signal;
  signal.set_event_id(3);
  signal.set_version(1);
  signal.set_event_type(enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
  signal.mutable_workflow_execution_signaled_event_attributes()->set_signal_name("s");
  absl::Status s = b_.engine->ReapplyEvents(kNamespaceId, "wf", {signal});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(s.message(),
            "Namespace: ns is active in cluster: a, while current cluster b is a standby cluster.");
  EXPECT_EQ(a_.engine->ReapplyEvents(kNamespaceId, "", {signal}).code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<HistoryEvent> too_many(1001, signal);
  EXPECT_EQ(a_.engine->ReapplyEvents(kNamespaceId, "wf", too_many).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tock::server::history
