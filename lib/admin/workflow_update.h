// Workflow updates from outside the workflow, as the SDK clients send them: an update sent
// and waited for up to a stage (UpdateWorkflowExecution), and an update looked up or waited
// for by its id (PollWorkflowExecutionUpdate). Works against any Temporal frontend.
//
// Never prints. Errors are absl::Status with the server's message and details; an update that
// the workflow rejected or failed is not an error here (its outcome holds the failure).
// Thread-compatible: the functions share nothing but the connection, which is thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/admin/payloads.h"
#include "lib/client/connection.h"
#include "temporal/api/update/v1/message.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::admin {

using UpdateStage = temporal::api::enums::v1::UpdateWorkflowExecutionLifecycleStage;

struct UpdateWorkflowOptions {
  std::string namespace_name;
  std::string workflow_id;
  std::string run_id;                  // empty: the current run
  std::string first_execution_run_id;  // empty: any chain of runs of the workflow id
  std::string name;                    // the update handler's name
  std::string update_id;               // empty: a new UUID
  std::vector<std::string> inputs;     // JSON values, one payload each
  std::string identity = "tock";
};

// Where an update stands: the run it is in, the stage it reached, and once completed (or
// rejected: a rejection is completed with a failure) its outcome.
struct UpdateStatus {
  std::string workflow_id;
  std::string run_id;
  std::string update_id;
  UpdateStage stage = temporal::api::enums::v1::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_UNSPECIFIED;
  std::optional<temporal::api::update::v1::Outcome> outcome;
};

// The request for `options` waiting for `wait` (ACCEPTED or COMPLETED). Pure but for the new
// update id and request id. INVALID_ARGUMENT naming the flag at fault: no workflow id, a blank
// name, an --input that is not JSON (the input quoted up to kEchoLimit characters).
absl::StatusOr<temporal::api::workflowservice::v1::UpdateWorkflowExecutionRequest>
MakeUpdateRequest(const UpdateWorkflowOptions& options, UpdateStage wait);

// Sends the update and waits until it reached the request's wait stage, as the SDKs do: while
// the server answers ADMITTED (its long poll ended before a worker took the update) the same
// request (same update id: the server deduplicates) is sent again; when waiting for COMPLETED
// and the server answers ACCEPTED without an outcome, PollWorkflowExecutionUpdate waits for
// it. Each call is a long poll of at most 30 s (the server answers after 20 s); the waiting
// itself has no limit but Connection::Interrupt (CANCELLED).
absl::StatusOr<UpdateStatus> UpdateWorkflow(
    client::Connection& connection,
    const temporal::api::workflowservice::v1::UpdateWorkflowExecutionRequest& request);

// PollWorkflowExecutionUpdate for update `update_id` of the workflow (`run_id` empty: the
// current run). With `wait` UNSPECIFIED one call that answers at once with the stage reached;
// with COMPLETED (or ACCEPTED), long polls until the update got there. NOT_FOUND (the server's
// message) for an update or workflow the server does not know.
absl::StatusOr<UpdateStatus> PollUpdate(client::Connection& connection,
                                        const std::string& namespace_name,
                                        const std::string& workflow_id, const std::string& run_id,
                                        const std::string& update_id, UpdateStage wait);

}  // namespace tock::admin
