#include "cmd/tock/commands/batch_request.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cmd/tock/output/history_format.h"
#include "lib/admin/payloads.h"
#include "lib/common/ids.h"

namespace tock::cli {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace enums = temporal::api::enums::v1;

bool Blank(const std::string& s) { return absl::StripAsciiWhitespace(s).empty(); }

}  // namespace

const char* BatchKindName(BatchKind kind) {
  switch (kind) {
    case BatchKind::kTerminate:
      return "terminate";
    case BatchKind::kCancel:
      return "cancel";
    case BatchKind::kSignal:
      return "signal";
    case BatchKind::kDelete:
      return "delete";
  }
  return "terminate";
}

absl::StatusOr<float> ParseRps(const std::string& text) {
  if (text.empty()) return 0.0f;
  float rps = 0;
  if (!absl::SimpleAtof(text, &rps) || !std::isfinite(rps) || rps <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid --rps \"", text,
                     "\": give a positive number of operations per second, e.g. 50 or 0.5 "
                     "(default: the server's limit)"));
  }
  return rps;
}

absl::StatusOr<wf::StartBatchOperationRequest> MakeStartBatchRequest(
    BatchKind kind, const BatchStartFlags& flags, const std::string& namespace_name,
    const std::string& identity) {
  if (Blank(flags.query)) {
    return absl::InvalidArgumentError(
        "--query is empty: give the visibility query of the workflows to change, e.g. "
        "\"WorkflowType = 'order' AND ExecutionStatus = 'Running'\"");
  }
  if (Blank(flags.reason)) {
    return absl::InvalidArgumentError("--reason is empty: say why (it is recorded with the batch)");
  }
  absl::StatusOr<float> rps = ParseRps(flags.rps);
  if (!rps.ok()) return rps.status();
  wf::StartBatchOperationRequest req;
  req.set_namespace_(namespace_name);
  req.set_visibility_query(flags.query);
  req.set_reason(flags.reason);
  req.set_job_id(flags.job_id.empty() ? NewUuid() : flags.job_id);
  req.set_max_operations_per_second(*rps);
  switch (kind) {
    case BatchKind::kTerminate:
      req.mutable_termination_operation()->set_identity(identity);
      break;
    case BatchKind::kCancel:
      req.mutable_cancellation_operation()->set_identity(identity);
      break;
    case BatchKind::kDelete:
      req.mutable_deletion_operation()->set_identity(identity);
      break;
    case BatchKind::kSignal: {
      if (Blank(flags.signal_name)) {
        return absl::InvalidArgumentError("--name is empty: give the signal's name");
      }
      auto* signal = req.mutable_signal_operation();
      signal->set_signal(flags.signal_name);
      signal->set_identity(identity);
      for (const std::string& input : flags.inputs) {
        absl::StatusOr<temporal::api::common::v1::Payload> payload = admin::JsonPayload(input);
        if (!payload.ok()) return payload.status();
        *signal->mutable_input()->add_payloads() = *std::move(payload);
      }
      break;
    }
  }
  return req;
}

std::string BatchTypeLabel(enums::BatchOperationType type) {
  // The newer names end in _WORKFLOW (TERMINATE_WORKFLOW = 13); both read the same.
  std::string label = EnumLabel(enums::BatchOperationType_Name(type), "BATCH_OPERATION_TYPE_");
  if (absl::EndsWith(label, " Workflow"))
    label.resize(label.size() - std::string(" Workflow").size());
  return label;
}

std::string BatchStateLabel(enums::BatchOperationState state) {
  return EnumLabel(enums::BatchOperationState_Name(state), "BATCH_OPERATION_STATE_");
}

bool BatchFinished(enums::BatchOperationState state) {
  return state == enums::BATCH_OPERATION_STATE_COMPLETED ||
         state == enums::BATCH_OPERATION_STATE_FAILED;
}

CardRows BatchCard(const wf::DescribeBatchOperationResponse& d) {
  CardRows card = {
      {"Job id", d.job_id()},
      {"Type", BatchTypeLabel(d.operation_type())},
      {"State", BatchStateLabel(d.state())},
      {"Reason", d.reason()},
  };
  if (!d.query().empty()) card.emplace_back("Query", d.query());
  if (!d.identity().empty()) card.emplace_back("Identity", d.identity());
  card.emplace_back("Total", std::to_string(d.total_operation_count()));
  card.emplace_back("Completed", std::to_string(d.complete_operation_count()));
  card.emplace_back("Failed", std::to_string(d.failure_operation_count()));
  card.emplace_back("Start time", TimestampText(d.start_time()));
  card.emplace_back("Close time", TimestampText(d.close_time()));
  return card;
}

std::vector<std::string> BatchColumns() { return {"JOB ID", "STATE", "START", "CLOSE"}; }

std::vector<std::string> BatchRow(const temporal::api::batch::v1::BatchOperationInfo& info) {
  return {info.job_id(), BatchStateLabel(info.state()), TimestampText(info.start_time()),
          TimestampText(info.close_time())};
}

std::string BatchProgressLine(const wf::DescribeBatchOperationResponse& d, int width) {
  const int64_t total = d.total_operation_count();
  const int64_t done = d.complete_operation_count() + d.failure_operation_count();
  int filled = 0;
  if (total > 0) {
    filled = static_cast<int>(std::min<int64_t>(width, done * width / total));
  } else if (BatchFinished(d.state())) {
    filled = width;  // nothing matched: nothing left to do
  }
  return absl::StrCat("[", std::string(filled, '#'), std::string(width - filled, '.'), "] ", done,
                      "/", total > 0 || BatchFinished(d.state()) ? std::to_string(total) : "?",
                      " (", d.complete_operation_count(), " completed, ",
                      d.failure_operation_count(), " failed)");
}

}  // namespace tock::cli
