// The visibility query language of ListWorkflowExecutions / CountWorkflowExecutions:
//
//   WorkflowType = 'order' AND (ExecutionStatus = 'Running' OR StartTime > '2026-11-01T00:00:00Z')
//   WorkflowId STARTS_WITH 'order-' ORDER BY StartTime DESC
//   ExecutionStatus IN ('Failed', 'TimedOut') AND CloseTime BETWEEN '2026-11-01' AND '2026-11-02'
//
//   CustomerId = 'c-42' AND Amount >= 10.5 AND Notes = 'late delivery' AND Paid IS NULL
//   ExecutionStatus = 'Running' GROUP BY ExecutionStatus            (count only)
//
// Fields: WorkflowId, WorkflowType, RunId, ExecutionStatus, TaskQueue, StartTime, CloseTime,
// ExecutionTime, and the namespace's custom search attributes (by their exact name, typed:
// search_attributes.h). Operators: = != < <= > >= IN BETWEEN..AND STARTS_WITH IS [NOT] NULL,
// joined by AND / OR with parentheses (a custom type takes the operators
// persistence::VisibilityCondition lists); GROUP BY ExecutionStatus; ORDER BY field
// [ASC|DESC], ... (a field ordered twice: the first one counts; not with GROUP BY). Keywords are case-insensitive. Times are RFC 3339 text or nanoseconds since the
// epoch. Parsed into the typed persistence::VisibilityFilter, which each store compiles;
// this file knows no SQL.
//
// Limits, so that one request can neither exhaust the server nor its store (each refused
// with INVALID_ARGUMENT naming the limit, the token and its position):
//   - kMaxQueryBytes, refused before anything is read (generous: 2,000 conditions on run ids
//     take about 80 KB; it bounds memory and time, which are linear in the length);
//   - kMaxParenthesisDepth nested parentheses; parentheses that group nothing new cost
//     nothing downstream ("((a))" is "a", "(a AND b) AND c" is "a AND b AND c");
//   - persistence::kMaxVisibilityConditions conditions (an IN of n values counts n);
//   - persistence::kMaxVisibilityNesting levels of AND and OR alternating, after the
//     redundant parentheses are dropped.
// Parsing takes time linear in the query's length and stack bounded by the depth limit.
// Messages quote at most kMaxQuotedBytes of a token.
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server-core/persistence/visibility_store.h"
#include "server-core/visibility/search_attributes.h"

namespace tock::server::visibility {

inline constexpr size_t kMaxQueryBytes = 256 * 1024;
inline constexpr int kMaxParenthesisDepth = 100;
inline constexpr size_t kMaxQuotedBytes = 64;
// Words of one match on a Text attribute (each is one LIKE in the store's SQL).
inline constexpr int kMaxTextWords = 32;

// INVALID_ARGUMENT naming the offending token and its 1-based byte position on a malformed
// query or one over a limit; never echoes more than kMaxQuotedBytes of the input.
absl::StatusOr<persistence::VisibilityFilter> CompileQuery(
    absl::string_view query, const SearchAttributeSchema& schema = SearchAttributeSchema());

}  // namespace tock::server::visibility
