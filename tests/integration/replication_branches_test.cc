// A third history of a run (reference/replication.md §3.5 step 4), engine level, two
// clusters (two_cluster_engines.h): events that leave a stored, non-current branch partway
// are forked from that branch — kept beside the others when their version is lower than the
// current branch's (their signal applied again), made the current branch (the mutable state
// rebuilt from the stored branch's prefix and them) when it is higher.
#include "lib/common/time_format.h"
#include "tests/integration/two_cluster_engines.h"

namespace tock::server::history {
namespace {

class ReplicationBranchesTest : public TwoClusterEngines {
 protected:
  // A task of another cluster: event `event_id`, a signal `name` at `version`, on a branch
  // whose earlier items are `prefix`.
  static adm::HistoryReplicationTask Leaving(const std::vector<std::pair<int64_t, int64_t>>& prefix,
                                             int64_t event_id, int64_t version,
                                             const std::string& name, const std::string& run_id) {
    adm::HistoryReplicationTask task;
    task.set_namespace_id(kNamespaceId);
    task.set_workflow_id("wf");
    task.set_run_id(run_id);
    for (const auto& [id, v] : prefix) {
      auto* item = task.add_version_history_items();
      item->set_event_id(id);
      item->set_version(v);
    }
    auto* item = task.add_version_history_items();
    item->set_event_id(event_id);
    item->set_version(version);
    HistoryEvent* e = task.add_events();
    e->set_event_id(event_id);
    e->set_version(version);
    e->set_task_id(900000 + version);
    e->set_event_type(enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    *e->mutable_event_time() = ToProtoTime(kStart);
    e->mutable_workflow_execution_signaled_event_attributes()->set_signal_name(name);
    return task;
  }

  static std::vector<std::string> Summary(const std::vector<HistoryEvent>& events) {
    std::vector<std::string> out;
    for (const HistoryEvent& e : events) {
      const std::string& name = e.workflow_execution_signaled_event_attributes().signal_name();
      out.push_back(absl::StrCat(e.event_id(), " v", e.version(), name.empty() ? "" : " ", name));
    }
    return out;
  }

  std::vector<HistoryEvent> OnBranch(Cluster& c, const std::string& run_id, const std::string& token) {
    auto events = c.persistence->executions().ReadBranchEvents(run_id, token, 1, 1000, 1000);
    EXPECT_TRUE(events.ok()) << events.status();
    return events.ok() ? *events : std::vector<HistoryEvent>{};
  }
};

TEST_F(ReplicationBranchesTest, EventsLeavingAStoredBranchPartwayAreForkedFromIt) {
  const std::string run = Start(a_, "wf");  // 1 and 2 at version 1
  Replicate(a_, b_);
  // B, forced active (2), writes 3 and 4; A, at 11, writes its own 3 first.
  b_.version = 2;
  ASSERT_TRUE(Signal(b_, "wf", "b3").ok());
  ASSERT_TRUE(Signal(b_, "wf", "b4").ok());
  const std::vector<adm::HistoryReplicationTask> from_b = Collect(b_);
  a_.version = 11;
  ASSERT_TRUE(Signal(a_, "wf", "a3").ok());
  Deliver(a_, from_b);  // B's branch loses on A (kept); A, active, applies b3 and b4 again
  EXPECT_EQ(Summary(History(a_, run)),
            (std::vector<std::string>{"1 v1", "2 v1", "3 v11 a3", "4 v11 b3", "5 v11 b4"}));
  MutableStateRecord state = Stored(a_, "wf", run);
  ASSERT_EQ(state.version_histories().histories_size(), 2);

  // A history that has B's 3 but its own 4 at version 7: it leaves B's stored branch after
  // event 3 and loses to A's current one; kept as a third branch, its signal applied again.
  Deliver(a_, {Leaving({{2, 1}, {3, 2}}, 4, 7, "c4", run)});
  state = Stored(a_, "wf", run);
  ASSERT_EQ(state.version_histories().histories_size(), 3);
  const std::string third = state.version_histories().histories(2).branch_token();
  EXPECT_EQ(Summary(OnBranch(a_, run, third)),
            (std::vector<std::string>{"1 v1", "2 v1", "3 v2 b3", "4 v7 c4"}));
  EXPECT_EQ(Summary(History(a_, run)),
            (std::vector<std::string>{"1 v1", "2 v1", "3 v11 a3", "4 v11 b3", "5 v11 b4", "6 v11 c4"}));

  // One at version 12 after B's 3 wins: the run's history becomes 1, 2, B's 3 and its 4,
  // and the state is rebuilt from them; the branch that was current is kept.
  Deliver(a_, {Leaving({{2, 1}, {3, 2}}, 4, 12, "d4", run)});
  EXPECT_EQ(Summary(History(a_, run)),
            (std::vector<std::string>{"1 v1", "2 v1", "3 v2 b3", "4 v12 d4"}));
  state = Stored(a_, "wf", run);
  ASSERT_EQ(state.version_histories().histories_size(), 4);
  const auto& histories = state.version_histories();
  const auto& current = histories.histories(histories.current_version_history_index());
  ASSERT_EQ(current.items_size(), 3);
  EXPECT_EQ(current.items(1).event_id(), 3);
  EXPECT_EQ(current.items(1).version(), 2);
  EXPECT_EQ(current.items(2).event_id(), 4);
  EXPECT_EQ(current.items(2).version(), 12);
  EXPECT_EQ(state.next_event_id(), 5);
  // The stored branches are unchanged.
  EXPECT_EQ(Summary(OnBranch(a_, run, third)),
            (std::vector<std::string>{"1 v1", "2 v1", "3 v2 b3", "4 v7 c4"}));
}

}  // namespace
}  // namespace tock::server::history
