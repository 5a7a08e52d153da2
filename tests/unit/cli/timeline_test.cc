// The inspector's timeline, built from events alone.
#include "cmd/tock/repl/timeline.h"

#include <gtest/gtest.h>

#include "lib/common/time_format.h"

namespace tock::cli::repl {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::history::v1::HistoryEvent;

class TimelineTest : public ::testing::Test {
 protected:
  HistoryEvent& Add(enums::EventType type, int64_t ms) {
    HistoryEvent& e = events_.emplace_back();
    e.set_event_id(static_cast<int64_t>(events_.size()));
    e.set_event_type(type);
    e.mutable_event_time()->set_seconds(1'700'000'000 + ms / 1000);
    e.mutable_event_time()->set_nanos(static_cast<int32_t>(ms % 1000) * 1'000'000);
    return e;
  }
  std::vector<HistoryEvent> events_;
};

TEST_F(TimelineTest, ActivitiesTimersAndChildrenWithDurationsAttemptsAndOutcomes) {
  Add(enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, 0)
      .mutable_workflow_execution_started_event_attributes()
      ->mutable_workflow_type()
      ->set_name("order");
  auto& scheduled = Add(enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, 100);
  scheduled.mutable_activity_task_scheduled_event_attributes()->set_activity_id("1");
  scheduled.mutable_activity_task_scheduled_event_attributes()->mutable_activity_type()->set_name(
      "charge");
  auto& timer = Add(enums::EVENT_TYPE_TIMER_STARTED, 100);
  timer.mutable_timer_started_event_attributes()->set_timer_id("t1");
  timer.mutable_timer_started_event_attributes()->mutable_start_to_fire_timeout()->set_seconds(5);
  auto& started = Add(enums::EVENT_TYPE_ACTIVITY_TASK_STARTED, 2000);
  started.mutable_activity_task_started_event_attributes()->set_scheduled_event_id(2);
  started.mutable_activity_task_started_event_attributes()->set_attempt(3);
  Add(enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED, 2500)
      .mutable_activity_task_completed_event_attributes()
      ->set_scheduled_event_id(2);
  auto& child = Add(enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED, 3000);
  child.mutable_start_child_workflow_execution_initiated_event_attributes()->set_workflow_id("c-1");
  child.mutable_start_child_workflow_execution_initiated_event_attributes()
      ->mutable_workflow_type()
      ->set_name("ship");
  Add(enums::EVENT_TYPE_TIMER_FIRED, 5100)
      .mutable_timer_fired_event_attributes()
      ->set_started_event_id(3);
  Add(enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, 6000);

  std::vector<TimelineRow> rows = BuildTimeline(events_);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].kind, "workflow");
  EXPECT_TRUE(rows[0].open);
  EXPECT_EQ(rows[0].outcome, "Running");
  EXPECT_EQ(rows[1].name, "charge #1");
  EXPECT_EQ(rows[1].attempts, 3);
  EXPECT_EQ(rows[1].outcome, "Completed");
  EXPECT_EQ(rows[1].end - rows[1].start, absl::Milliseconds(2400));
  EXPECT_EQ(rows[2].name, "t1 (5s)");
  EXPECT_EQ(rows[2].outcome, "Fired");
  EXPECT_EQ(rows[3].name, "ship c-1");
  EXPECT_TRUE(rows[3].open) << "a child that has not closed runs to the last event";
  EXPECT_EQ(rows[3].end, FromProtoTime(events_.back().event_time()));

  const std::string text = RenderTimeline(rows, 10);
  EXPECT_NE(text.find("activity  charge #1  +0.100s  2.400s    3         Completed  |"),
            std::string::npos)
      << text;
  // The workflow spans the whole axis and is still open; the timer ends before the end.
  EXPECT_NE(text.find("|=========>|"), std::string::npos) << text;
  EXPECT_NE(text.find("Fired      |========= |"), std::string::npos) << text;
  EXPECT_NE(text.find("Running    |     ====>|"), std::string::npos) << text;
}

TEST_F(TimelineTest, AnEmptyHistorySaysSo) {
  EXPECT_TRUE(BuildTimeline(events_).empty());
  EXPECT_EQ(RenderTimeline({}), "(no events)\n");
}

}  // namespace
}  // namespace tock::cli::repl
