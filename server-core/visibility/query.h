// The visibility query language of ListWorkflowExecutions / CountWorkflowExecutions:
//
//   WorkflowType = 'order' AND (ExecutionStatus = 'Running' OR StartTime > '2026-11-01T00:00:00Z')
//   WorkflowId STARTS_WITH 'order-' ORDER BY StartTime DESC
//   ExecutionStatus IN ('Failed', 'TimedOut') AND CloseTime BETWEEN '2026-11-01' AND '2026-11-02'
//
// Fields: WorkflowId, WorkflowType, RunId, ExecutionStatus, TaskQueue, StartTime, CloseTime,
// ExecutionTime. Operators: = != < <= > >= IN BETWEEN..AND STARTS_WITH, joined by AND / OR
// with parentheses; ORDER BY field [ASC|DESC], ... Keywords are case-insensitive.
// Compiled to a parameterised SQL filter over the visibility table (never string-pasted).
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::server::visibility {

using SqlFilter = persistence::VisibilityFilter;

// INVALID_ARGUMENT naming the offending token and its position on a malformed query.
absl::StatusOr<SqlFilter> CompileQuery(const std::string& query);

}  // namespace tock::server::visibility
