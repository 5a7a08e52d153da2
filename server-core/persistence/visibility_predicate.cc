#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::persistence {

const char* VisibilityColumn(VisibilityField field) {
  switch (field) {
    case VisibilityField::kWorkflowId:
      return "workflow_id";
    case VisibilityField::kWorkflowType:
      return "workflow_type";
    case VisibilityField::kRunId:
      return "run_id";
    case VisibilityField::kTaskQueue:
      return "task_queue";
    case VisibilityField::kExecutionStatus:
      return "status";
    case VisibilityField::kStartTime:
      return "start_ms";
    case VisibilityField::kCloseTime:
      return "close_ms";
    case VisibilityField::kExecutionTime:
      return "execution_ms";
  }
  return "run_id";
}

const char* VisibilityFieldName(VisibilityField field) {
  switch (field) {
    case VisibilityField::kWorkflowId:
      return "WorkflowId";
    case VisibilityField::kWorkflowType:
      return "WorkflowType";
    case VisibilityField::kRunId:
      return "RunId";
    case VisibilityField::kTaskQueue:
      return "TaskQueue";
    case VisibilityField::kExecutionStatus:
      return "ExecutionStatus";
    case VisibilityField::kStartTime:
      return "StartTime";
    case VisibilityField::kCloseTime:
      return "CloseTime";
    case VisibilityField::kExecutionTime:
      return "ExecutionTime";
  }
  return "RunId";
}

absl::Status CheckVisibilityCondition(const VisibilityCondition& c) {
  const bool text = IsTextField(c.field);
  for (const VisibilityValue& v : c.values) {
    if (std::holds_alternative<std::string>(v) != text) {
      return absl::InvalidArgumentError(absl::StrCat("visibility filter: ",
                                                     VisibilityFieldName(c.field),
                                                     text ? " takes text" : " takes numbers"));
    }
  }
  const size_t want = c.op == VisibilityOp::kBetween ? 2 : 1;
  if (c.op == VisibilityOp::kIn ? c.values.empty() : c.values.size() != want) {
    return absl::InvalidArgumentError("visibility filter: wrong number of values");
  }
  if (c.op == VisibilityOp::kStartsWith && !text) {
    return absl::InvalidArgumentError("visibility filter: STARTS_WITH needs a text field");
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> VisibilityPageOffset(const std::string& page_token) {
  int64_t offset = 0;
  if (!page_token.empty() && (!absl::SimpleAtoi(page_token, &offset) || offset < 0)) {
    return absl::InvalidArgumentError("the next_page_token is not one this server issued");
  }
  return offset;
}

std::string VisibilityPageToken(int64_t offset) { return std::to_string(offset); }

}  // namespace tock::persistence
