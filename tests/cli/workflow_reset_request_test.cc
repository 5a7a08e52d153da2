// The pure half of `tock workflow reset` (workflow_reset.h), in process: the requests built
// from the flags and the scan of a history for the points of --type.
#include <gtest/gtest.h>

#include "cmd/tock/commands/workflow_reset.h"

// reset_reapply_type is deprecated in the API, and still what --reapply-type sets.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace tock::cli {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::history::v1::HistoryEvent;

HistoryEvent Event(int64_t id, enums::EventType type) {
  HistoryEvent e;
  e.set_event_id(id);
  e.set_event_type(type);
  return e;
}

TEST(ResetPointScanTest, FirstAndLastCompletedTasksAndThePreviousRun) {
  ResetPointScan scan;
  EXPECT_EQ(scan.first_completed(), 0);
  HistoryEvent started = Event(1, enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  started.mutable_workflow_execution_started_event_attributes()->set_continued_execution_run_id(
      "run-0");
  scan.Add(started);
  for (const auto& [id, type] : std::vector<std::pair<int64_t, enums::EventType>>{
           {2, enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED},
           {3, enums::EVENT_TYPE_WORKFLOW_TASK_STARTED},
           {4, enums::EVENT_TYPE_WORKFLOW_TASK_COMPLETED},
           {5, enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED},
           {6, enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED},
           {7, enums::EVENT_TYPE_WORKFLOW_TASK_STARTED},
           {8, enums::EVENT_TYPE_WORKFLOW_TASK_COMPLETED},
           {9, enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED},
           {10, enums::EVENT_TYPE_WORKFLOW_TASK_STARTED},
           {11, enums::EVENT_TYPE_WORKFLOW_TASK_FAILED}}) {
    scan.Add(Event(id, type));
  }
  EXPECT_EQ(scan.first_completed(), 4);
  EXPECT_EQ(scan.last_completed(), 8);
  EXPECT_EQ(scan.continued_from(), "run-0");
}

TEST(MakeResetRequestTest, CarriesThePointTheReasonAndTheReapplyType) {
  ResetFlags flags;
  flags.reason = "bad deploy";
  auto req = MakeResetRequest("orders", "order-7", "run-1", 4, flags, "me");
  EXPECT_EQ(req.namespace_(), "orders");
  EXPECT_EQ(req.workflow_execution().workflow_id(), "order-7");
  EXPECT_EQ(req.workflow_execution().run_id(), "run-1");
  EXPECT_EQ(req.workflow_task_finish_event_id(), 4);
  EXPECT_EQ(req.reason(), "bad deploy");
  EXPECT_EQ(req.identity(), "me");
  EXPECT_EQ(req.reset_reapply_type(), enums::RESET_REAPPLY_TYPE_SIGNAL);
  EXPECT_FALSE(req.request_id().empty());
  EXPECT_NE(MakeResetRequest("orders", "order-7", "", 4, flags, "me").request_id(),
            req.request_id());
  flags.reapply_type = "None";
  EXPECT_EQ(MakeResetRequest("orders", "order-7", "", 4, flags, "me").reset_reapply_type(),
            enums::RESET_REAPPLY_TYPE_NONE);
}

TEST(MakeResetBatchRequestTest, ResetOptionsFromTheType) {
  ResetFlags flags;
  flags.query = "WorkflowType = 'order'";
  flags.reason = "fixed";
  flags.type = kResetFirstWorkflowTask;
  auto first = MakeResetBatchRequest(flags, "orders", "me");
  EXPECT_EQ(first.namespace_(), "orders");
  EXPECT_EQ(first.visibility_query(), "WorkflowType = 'order'");
  EXPECT_EQ(first.reason(), "fixed");
  EXPECT_FALSE(first.job_id().empty());
  ASSERT_TRUE(first.has_reset_operation());
  EXPECT_EQ(first.reset_operation().identity(), "me");
  EXPECT_TRUE(first.reset_operation().options().has_first_workflow_task());
  EXPECT_EQ(first.reset_operation().options().reset_reapply_type(),
            enums::RESET_REAPPLY_TYPE_SIGNAL);

  flags.type = kResetLastWorkflowTask;
  flags.reapply_type = "None";
  auto last = MakeResetBatchRequest(flags, "orders", "me");
  EXPECT_TRUE(last.reset_operation().options().has_last_workflow_task());
  EXPECT_EQ(last.reset_operation().options().reset_reapply_type(), enums::RESET_REAPPLY_TYPE_NONE);
  EXPECT_NE(last.job_id(), first.job_id());
}

TEST(CheckResetFlagsTest, AcceptsTheValidCombinations) {
  ResetFlags by_event;
  by_event.workflow_id = "w";
  by_event.event_id = "4";
  by_event.reason = "r";
  EXPECT_TRUE(CheckResetFlags(by_event).ok());
  ResetFlags by_type = by_event;
  by_type.event_id.clear();
  by_type.type = kResetLastContinuedAsNew;
  by_type.run_id = "run-1";
  EXPECT_TRUE(CheckResetFlags(by_type).ok());
  ResetFlags batch;
  batch.query = "WorkflowType = 'order'";
  batch.type = kResetLastWorkflowTask;
  batch.reason = "r";
  EXPECT_TRUE(CheckResetFlags(batch).ok());
  batch.query = "  ";
  EXPECT_EQ(CheckResetFlags(batch).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tock::cli
