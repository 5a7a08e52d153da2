// How `tock workflow describe-state` and the inspector's `branches` show a run's branches
// (BranchRows) and its state card (MutableStateCard): pure functions of the answer.
#include "cmd/tock/output/branch_format.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "cmd/tock/commands/workflow_state.h"

namespace tock::cli {
namespace {

using Rows = std::vector<std::vector<std::string>>;

tock::admin::v1::DescribeMutableStateResponse Parse(const std::string& text) {
  tock::admin::v1::DescribeMutableStateResponse out;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &out)) << text;
  return out;
}

TEST(BranchFormatTest, OneRowPerItemWithTheEventIdsItCovers) {
  auto s = Parse(R"(branches { branch_token: "0123456789abcdef0123" is_current: true
                               items { event_id: 5 version: 1 } items { event_id: 6 version: 11 }
                               items { event_id: 12 version: 21 } })");
  EXPECT_EQ(BranchColumns(), (std::vector<std::string>{"BRANCH", "CURRENT", "TOKEN", "EVENTS", "VERSION"}));
  EXPECT_EQ(BranchRows(s.branches(0), 1),
            (Rows{{"1", "yes", "0123456789abcdef...", "1-5", "1"},
                  {"", "", "", "6", "11"},
                  {"", "", "", "7-12", "21"}}));
}

TEST(BranchFormatTest, AnEmptyTokenAndABranchWithoutItems) {
  auto s = Parse(R"(branches { items { event_id: 2 version: 0 } } branches { branch_token: "ff" })");
  EXPECT_EQ(BranchRows(s.branches(0), 0), (Rows{{"0", "", "-", "1-2", "0"}}));
  EXPECT_EQ(BranchRows(s.branches(1), 1), (Rows{{"1", "", "ff", "-", ""}}));
}

TEST(BranchFormatTest, TheStateCard) {
  auto s = Parse(R"(workflow_id: "order-7" run_id: "r-1" is_current_run: false
                    status: WORKFLOW_EXECUTION_STATUS_RUNNING zombie: true state: "ZOMBIE"
                    last_write_version: 11 next_event_id: 10 last_event_task_id: 77 db_version: 4
                    workflow_task { scheduled_event_id: 9 started_event_id: 10 attempt: 2
                                    task_queue: "orders" }
                    pending_activities: 1 pending_timers: 2 pending_children: 3 buffered_events: 4
                    branches { } branches { is_current: true })");
  const CardRows card = MutableStateCard(s);
  const CardRows expected = {
      {"Workflow id", "order-7"},
      {"Run id", "r-1"},
      {"Current run", "no"},
      {"Status", "Running"},
      {"State", "ZOMBIE"},
      {"Zombie", "yes"},
      {"Last write version", "11"},
      {"Next event id", "10"},
      {"Last event task id", "77"},
      {"DB version", "4"},
      {"Workflow task", "started (event 10), attempt 2, task queue orders"},
      {"Pending", "1 activities, 2 timers, 3 children, 4 buffered events"},
      {"Branches", "2 (current: 1)"},
  };
  EXPECT_EQ(card, expected);
  s.clear_workflow_task();
  EXPECT_EQ(MutableStateCard(s)[10], (std::pair<std::string, std::string>{"Workflow task", "none"}));
}

}  // namespace
}  // namespace tock::cli
