// The StartWorkflowExecutionRequest of `tock workflow start|execute`: admin's
// StartWorkflowOptions plus the --search-attribute words.
//
// admin::StartWorkflow builds the same request without search attributes; until
// StartWorkflowOptions carries them (lib/admin), the CLI builds the request here, with the
// same checks and messages, and sends it itself.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/admin/workflow_ops.h"
#include "lib/client/connection.h"

namespace tock::cli {

struct StartFlags {
  admin::StartWorkflowOptions options;
  std::vector<std::string> search_attributes;  // NAME=VALUE words (ParseSearchAttributeFlags)
};

// The request, or INVALID_ARGUMENT naming the flag at fault (a bad duration, input or
// search attribute). Pure: no server; a new workflow id (when none is given) and request id.
absl::StatusOr<temporal::api::workflowservice::v1::StartWorkflowExecutionRequest>
MakeStartWorkflowRequest(const StartFlags& flags);

// Sends the request; the ids of the started workflow.
absl::StatusOr<admin::StartedWorkflow> StartWorkflow(
    client::Connection& connection,
    const temporal::api::workflowservice::v1::StartWorkflowExecutionRequest& request);

}  // namespace tock::cli
