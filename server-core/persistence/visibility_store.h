// Visibility records: one summary per run, listed and counted with a filter compiled from
// the visibility query language (server-core/visibility/query.h).
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "temporal/api/workflow/v1/message.pb.h"

namespace tock::persistence {

// A parameterised condition over the visibility columns (workflow_id, workflow_type, run_id,
// task_queue, status, start_ms, close_ms, execution_ms).
struct VisibilityFilter {
  std::string where;  // "" for every record
  std::vector<std::variant<int64_t, std::string>> params;
  std::string order_by;  // "" for newest first
};

struct VisibilityPage {
  std::vector<temporal::api::workflow::v1::WorkflowExecutionInfo> executions;
  std::string next_page_token;  // empty on the last page
};

class VisibilityStore {
 public:
  virtual ~VisibilityStore() = default;
  // INVALID_ARGUMENT for a token this store did not issue.
  virtual absl::StatusOr<VisibilityPage> List(const std::string& namespace_id,
                                              const VisibilityFilter& filter, int32_t page_size,
                                              const std::string& page_token) = 0;
  virtual absl::StatusOr<int64_t> Count(const std::string& namespace_id,
                                        const VisibilityFilter& filter) = 0;
};

}  // namespace tock::persistence
