// AdminService.DescribeMutableState's answer from a run's stored state (pure): branches with
// their tokens as hex and the current one marked, the last write version from the current
// branch, Temporal's execution state, the pending work counted, the state as JSON.
#include "server-core/history/describe_mutable_state.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;

persistence::MutableStateRecord Parse(const std::string& text) {
  persistence::MutableStateRecord state;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &state)) << text;
  return state;
}

// A run forked by conflict resolution: branch 0 (written on cluster a at version 1, then
// 11) lost to branch 1 (version 2 after event 5), which is current.
constexpr char kForked[] = R"(
  execution { namespace_id: "ns-1" workflow_id: "order-7" run_id: "r-1"
              status: WORKFLOW_EXECUTION_STATUS_RUNNING }
  next_event_id: 13
  last_completed_workflow_task_started_event_id: 3
  workflow_task { scheduled_event_id: 12 attempt: 1 task_queue: "orders" }
  activities { key: 5 value { activity_id: "1" } }
  timers { key: "t1" value { timer_id: "t1" } }
  timers { key: "t2" value { timer_id: "t2" } }
  db_version: 7
  last_event_task_id: 4242
  version_histories {
    current_version_history_index: 1
    histories { branch_token: "\x01\xab" items { event_id: 5 version: 1 } items { event_id: 9 version: 11 } }
    histories { branch_token: "\xff" items { event_id: 5 version: 1 } items { event_id: 12 version: 2 } }
  }
)";

TEST(DescribeMutableStateTest, EveryBranchWithTheCurrentOneAndTheLastWriteVersion) {
  const auto out = DescribeMutableStateOf(Parse(kForked), true);
  EXPECT_EQ(out.namespace_id(), "ns-1");
  EXPECT_EQ(out.workflow_id(), "order-7");
  EXPECT_EQ(out.run_id(), "r-1");
  EXPECT_TRUE(out.is_current_run());
  EXPECT_EQ(out.status(), enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
  EXPECT_FALSE(out.zombie());
  EXPECT_EQ(out.state(), "RUNNING");
  EXPECT_EQ(out.current_branch_index(), 1);
  ASSERT_EQ(out.branches_size(), 2);
  EXPECT_EQ(out.branches(0).branch_token(), "01ab");
  EXPECT_FALSE(out.branches(0).is_current());
  ASSERT_EQ(out.branches(0).items_size(), 2);
  EXPECT_EQ(out.branches(0).items(1).event_id(), 9);
  EXPECT_EQ(out.branches(0).items(1).version(), 11);
  EXPECT_EQ(out.branches(1).branch_token(), "ff");
  EXPECT_TRUE(out.branches(1).is_current());
  // The current branch's last item, not the highest version of any branch (11).
  EXPECT_EQ(out.last_write_version(), 2);
  EXPECT_EQ(out.next_event_id(), 13);
  EXPECT_EQ(out.db_version(), 7);
  EXPECT_EQ(out.last_event_task_id(), 4242);
  ASSERT_TRUE(out.has_workflow_task());
  EXPECT_EQ(out.workflow_task().scheduled_event_id(), 12);
  EXPECT_EQ(out.workflow_task().started_event_id(), 0);
  EXPECT_EQ(out.workflow_task().task_queue(), "orders");
  EXPECT_EQ(out.pending_activities(), 1);
  EXPECT_EQ(out.pending_timers(), 2);
  EXPECT_EQ(out.pending_children(), 0);
  // The whole state, as protobuf JSON (int64 as strings).
  EXPECT_NE(out.mutable_state_json().find(R"("nextEventId":"13")"), std::string::npos)
      << out.mutable_state_json();
  persistence::MutableStateRecord back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out.mutable_state_json(), &back).ok());
  EXPECT_EQ(back.version_histories().histories(0).branch_token(), "\x01\xab");
}

TEST(DescribeMutableStateTest, ARunNeverForkedHasOneCurrentBranchWithAnEmptyToken) {
  auto state = Parse(R"(
    execution { workflow_id: "w" status: WORKFLOW_EXECUTION_STATUS_RUNNING }
    next_event_id: 3
    workflow_task { scheduled_event_id: 2 attempt: 1 }
    version_histories { histories { items { event_id: 2 version: 0 } } })");
  const auto out = DescribeMutableStateOf(state, false);
  EXPECT_FALSE(out.is_current_run());
  ASSERT_EQ(out.branches_size(), 1);
  EXPECT_TRUE(out.branches(0).is_current());
  EXPECT_EQ(out.branches(0).branch_token(), "");
  EXPECT_EQ(out.last_write_version(), 0);
  // No workflow task has started yet: Temporal's CREATED.
  EXPECT_EQ(out.state(), "CREATED");
}

TEST(DescribeMutableStateTest, TemporalsExecutionStates) {
  auto running = Parse(R"(execution { status: WORKFLOW_EXECUTION_STATUS_RUNNING }
                          workflow_task { scheduled_event_id: 2 started_event_id: 3 })");
  EXPECT_EQ(ExecutionStateOf(running), "RUNNING");
  // A first task that timed out is retried as attempt 2: the run had started one.
  auto retried = Parse(R"(execution { status: WORKFLOW_EXECUTION_STATUS_RUNNING }
                          workflow_task { scheduled_event_id: 5 attempt: 2 })");
  EXPECT_EQ(ExecutionStateOf(retried), "RUNNING");
  auto closed = Parse(R"(execution { status: WORKFLOW_EXECUTION_STATUS_TERMINATED })");
  EXPECT_EQ(ExecutionStateOf(closed), "COMPLETED");
  // Zombie wins over the status: a zombie is kept open to receive its history.
  auto zombie = Parse(R"(execution { status: WORKFLOW_EXECUTION_STATUS_RUNNING zombie: true })");
  EXPECT_EQ(ExecutionStateOf(zombie), "ZOMBIE");
  const auto out = DescribeMutableStateOf(zombie, false);
  EXPECT_TRUE(out.zombie());
  EXPECT_EQ(out.state(), "ZOMBIE");
  EXPECT_FALSE(out.has_workflow_task());
  EXPECT_TRUE(out.branches().empty());
}

}  // namespace
}  // namespace tock::server::history
