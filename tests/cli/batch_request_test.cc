// The pure half of `tock batch` (cmd/tock/commands/batch_request.h): what each command puts
// in its StartBatchOperationRequest, what it refuses before sending anything, and how a job
// reads (labels, card, progress line). No server.
#include "cmd/tock/commands/batch_request.h"

#include <gtest/gtest.h>

#include "lib/common/ids.h"

namespace tock::cli {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::workflowservice::v1::DescribeBatchOperationResponse;

BatchStartFlags Flags() {
  BatchStartFlags f;
  f.query = "WorkflowType = 'order'";
  f.reason = "bad deploy";
  return f;
}

TEST(StartBatchRequest, TerminateCarriesQueryReasonJobAndIdentity) {
  BatchStartFlags f = Flags();
  f.job_id = "cleanup-7";
  f.rps = "20";
  auto req = MakeStartBatchRequest(BatchKind::kTerminate, f, "orders", "tock");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->namespace_(), "orders");
  EXPECT_EQ(req->visibility_query(), "WorkflowType = 'order'");
  EXPECT_EQ(req->reason(), "bad deploy");
  EXPECT_EQ(req->job_id(), "cleanup-7");
  EXPECT_FLOAT_EQ(req->max_operations_per_second(), 20.0f);
  ASSERT_TRUE(req->has_termination_operation());
  EXPECT_EQ(req->termination_operation().identity(), "tock");
  EXPECT_EQ(req->executions_size(), 0);
  EXPECT_EQ(req->target_executions_size(), 0);
}

TEST(StartBatchRequest, EachKindSetsItsOperation) {
  auto cancel = MakeStartBatchRequest(BatchKind::kCancel, Flags(), "default", "me");
  ASSERT_TRUE(cancel.ok());
  ASSERT_TRUE(cancel->has_cancellation_operation());
  EXPECT_EQ(cancel->cancellation_operation().identity(), "me");
  auto del = MakeStartBatchRequest(BatchKind::kDelete, Flags(), "default", "me");
  ASSERT_TRUE(del.ok());
  ASSERT_TRUE(del->has_deletion_operation());
  EXPECT_EQ(del->deletion_operation().identity(), "me");

  BatchStartFlags f = Flags();
  f.signal_name = "approve";
  f.inputs = {R"({"by": "ops"})", "7"};
  auto signal = MakeStartBatchRequest(BatchKind::kSignal, f, "default", "me");
  ASSERT_TRUE(signal.ok()) << signal.status();
  ASSERT_TRUE(signal->has_signal_operation());
  const auto& op = signal->signal_operation();
  EXPECT_EQ(op.signal(), "approve");
  EXPECT_EQ(op.identity(), "me");
  ASSERT_EQ(op.input().payloads_size(), 2);
  EXPECT_EQ(op.input().payloads(0).metadata().at("encoding"), "json/plain");
  EXPECT_EQ(op.input().payloads(0).data(), R"({"by":"ops"})");
  EXPECT_EQ(op.input().payloads(1).data(), "7");

  f.inputs.clear();
  signal = MakeStartBatchRequest(BatchKind::kSignal, f, "default", "me");
  ASSERT_TRUE(signal.ok());
  EXPECT_FALSE(signal->signal_operation().has_input());
}

TEST(StartBatchRequest, WithoutJobIdANewUuidAndWithoutRpsTheServersLimit) {
  auto a = MakeStartBatchRequest(BatchKind::kTerminate, Flags(), "default", "tock");
  auto b = MakeStartBatchRequest(BatchKind::kTerminate, Flags(), "default", "tock");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(IsUuid(a->job_id())) << a->job_id();
  EXPECT_NE(a->job_id(), b->job_id());
  EXPECT_EQ(a->max_operations_per_second(), 0.0f);
}

TEST(StartBatchRequest, RefusesEmptyQueryReasonSignalAndBadInput) {
  for (const std::string blank : {"", "  "}) {
    BatchStartFlags f = Flags();
    f.query = blank;
    auto req = MakeStartBatchRequest(BatchKind::kTerminate, f, "default", "tock");
    EXPECT_EQ(req.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(req.status().message().find("--query is empty"), std::string::npos);
    f = Flags();
    f.reason = blank;
    req = MakeStartBatchRequest(BatchKind::kTerminate, f, "default", "tock");
    EXPECT_EQ(req.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(req.status().message().find("--reason is empty"), std::string::npos);
  }
  BatchStartFlags f = Flags();
  auto req = MakeStartBatchRequest(BatchKind::kSignal, f, "default", "tock");
  EXPECT_EQ(req.status().message(), "--name is empty: give the signal's name");
  f.signal_name = "go";
  f.inputs = {"{oops"};
  req = MakeStartBatchRequest(BatchKind::kSignal, f, "default", "tock");
  EXPECT_EQ(req.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(req.status().message().find("invalid --input \"{oops\""), std::string::npos);
  // A long bad input is quoted only in part (every command's --input goes through JsonPayload).
  f.inputs = {"{" + std::string(5000, 'x')};
  req = MakeStartBatchRequest(BatchKind::kSignal, f, "default", "tock");
  EXPECT_NE(req.status().message().find("invalid --input \"{" + std::string(63, 'x') + "...\" (5001 bytes)"),
            std::string::npos)
      << req.status().message().substr(0, 200);
  EXPECT_LT(req.status().message().size(), 300u);
}

TEST(ParseRps, PositiveFiniteNumbersOnly) {
  EXPECT_EQ(*ParseRps(""), 0.0f);
  EXPECT_EQ(*ParseRps("50"), 50.0f);
  EXPECT_EQ(*ParseRps("0.5"), 0.5f);
  EXPECT_EQ(*ParseRps("1e2"), 100.0f);
  for (const std::string bad : {"0", "-1", "abc", "inf", "nan", "5/s", " "}) {
    auto rps = ParseRps(bad);
    EXPECT_EQ(rps.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(rps.status().message(),
              "invalid --rps \"" + bad +
                  "\": give a positive number of operations per second, e.g. 50 or 0.5 "
                  "(default: the server's limit)");
  }
}

TEST(BatchLabels, OldAndNewTypeNamesReadTheSame) {
  EXPECT_EQ(BatchTypeLabel(enums::BATCH_OPERATION_TYPE_TERMINATE), "Terminate");
  EXPECT_EQ(BatchTypeLabel(enums::BATCH_OPERATION_TYPE_TERMINATE_WORKFLOW), "Terminate");
  EXPECT_EQ(BatchTypeLabel(enums::BATCH_OPERATION_TYPE_SIGNAL_WORKFLOW), "Signal");
  EXPECT_EQ(BatchTypeLabel(enums::BATCH_OPERATION_TYPE_DELETE), "Delete");
  EXPECT_EQ(BatchTypeLabel(enums::BATCH_OPERATION_TYPE_UPDATE_ACTIVITY_OPTIONS),
            "Update Activity Options");
  EXPECT_EQ(BatchStateLabel(enums::BATCH_OPERATION_STATE_RUNNING), "Running");
  EXPECT_EQ(BatchStateLabel(enums::BATCH_OPERATION_STATE_FAILED), "Failed");
  EXPECT_FALSE(BatchFinished(enums::BATCH_OPERATION_STATE_RUNNING));
  EXPECT_FALSE(BatchFinished(enums::BATCH_OPERATION_STATE_UNSPECIFIED));
  EXPECT_TRUE(BatchFinished(enums::BATCH_OPERATION_STATE_COMPLETED));
  EXPECT_TRUE(BatchFinished(enums::BATCH_OPERATION_STATE_FAILED));
}

TEST(BatchCard, EveryFieldInOrder) {
  DescribeBatchOperationResponse d;
  d.set_job_id("j");
  d.set_operation_type(enums::BATCH_OPERATION_TYPE_CANCEL_WORKFLOW);
  d.set_state(enums::BATCH_OPERATION_STATE_RUNNING);
  d.set_reason("why");
  d.set_query("WorkflowType = 'x'");
  d.set_identity("tock");
  d.set_total_operation_count(10);
  d.set_complete_operation_count(4);
  d.set_failure_operation_count(1);
  d.mutable_start_time()->set_seconds(1795000000);
  CardRows card = BatchCard(d);
  std::vector<std::string> keys;
  for (const auto& [key, value] : card) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"Job id", "Type", "State", "Reason", "Query", "Identity",
                                      "Total", "Completed", "Failed", "Start time", "Close time"}));
  EXPECT_EQ(card[1].second, "Cancel");
  EXPECT_EQ(card[2].second, "Running");
  EXPECT_EQ(card[6].second, "10");
  EXPECT_EQ(card[7].second, "4");
  EXPECT_EQ(card[8].second, "1");
  EXPECT_EQ(card[9].second.rfind("2026-", 0), 0u) << card[9].second;
  EXPECT_EQ(card[10].second, "") << "not closed yet";
}

TEST(BatchProgressLine, BarCountsAndUnknownTotal) {
  DescribeBatchOperationResponse d;
  d.set_state(enums::BATCH_OPERATION_STATE_RUNNING);
  EXPECT_EQ(BatchProgressLine(d, 10), "[..........] 0/? (0 completed, 0 failed)");
  d.set_total_operation_count(10);
  d.set_complete_operation_count(4);
  d.set_failure_operation_count(1);
  EXPECT_EQ(BatchProgressLine(d, 10), "[#####.....] 5/10 (4 completed, 1 failed)");
  d.set_complete_operation_count(9);
  d.set_state(enums::BATCH_OPERATION_STATE_COMPLETED);
  EXPECT_EQ(BatchProgressLine(d, 10), "[##########] 10/10 (9 completed, 1 failed)");
  // More done than counted (the set grew): the bar stays full, not wider.
  d.set_complete_operation_count(20);
  EXPECT_EQ(BatchProgressLine(d, 10), "[##########] 21/10 (20 completed, 1 failed)");
  // Nothing matched: finished and full.
  DescribeBatchOperationResponse none;
  none.set_state(enums::BATCH_OPERATION_STATE_COMPLETED);
  EXPECT_EQ(BatchProgressLine(none, 4), "[####] 0/0 (0 completed, 0 failed)");
}

}  // namespace
}  // namespace tock::cli
