// `tock workflow reset`: a run reset to one of its workflow tasks (ResetWorkflowExecution),
// the point given as an event id or found in the run's history from --type, as the Temporal
// CLI and tctl do; with --query, a reset batch job (StartBatchOperation with reset_operation)
// over every workflow the visibility query matches.
//
// The pure half (the flag checks, the scan of a history for a reset point, the requests) is
// declared here so that it is testable without a server; AddWorkflowResetCommand adds the
// command to the `workflow` group.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cmd/tock/context.h"
#include "temporal/api/history/v1/message.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::cli {

// The values of --type, as the Temporal CLI spells them.
inline constexpr char kResetFirstWorkflowTask[] = "FirstWorkflowTask";
inline constexpr char kResetLastWorkflowTask[] = "LastWorkflowTask";
inline constexpr char kResetLastContinuedAsNew[] = "LastContinuedAsNew";

// The flags of `tock workflow reset`, as typed.
struct ResetFlags {
  std::string workflow_id;
  std::string run_id;    // empty: the current run
  std::string query;     // a batch over the workflows it matches, instead of --workflow-id
  std::string event_id;  // empty: not given
  std::string type;      // empty: not given; else one of the kReset* values
  std::string reason;
  std::string reapply_type = "Signal";  // Signal or None
  bool yes = false;
};

// Checks the flags together before anything is sent: exactly one of --workflow-id and
// --query; exactly one of --event-id and --type; with --query neither --run-id, --event-id
// nor --type LastContinuedAsNew; a --reason that is not blank; an --event-id that is a whole
// number. INVALID_ARGUMENT naming the flags otherwise. (Required-ness of --reason and the
// sets of --type and --reapply-type are the parser's.)
absl::Status CheckResetFlags(const ResetFlags& flags);

// A run's history read event by event (constant memory) for the points --type names: the
// first and the last WorkflowTaskCompleted event, and the run this one was continued from.
class ResetPointScan {
 public:
  void Add(const temporal::api::history::v1::HistoryEvent& event);

  // Ids of the first and the last WorkflowTaskCompleted event seen; 0 when none.
  int64_t first_completed() const { return first_completed_; }
  int64_t last_completed() const { return last_completed_; }
  // The WorkflowExecutionStarted event's continued_execution_run_id: the run that continued
  // as new into this one; empty when the run was not started by a continue-as-new (or its
  // first event has not been seen).
  const std::string& continued_from() const { return continued_from_; }

 private:
  int64_t first_completed_ = 0;
  int64_t last_completed_ = 0;
  std::string continued_from_;
};

// The ResetWorkflowExecutionRequest for one run (`run_id` empty: the current run) to
// `event_id`, with a new request id. `reapply_type` is "Signal" or "None".
temporal::api::workflowservice::v1::ResetWorkflowExecutionRequest MakeResetRequest(
    const std::string& namespace_name, const std::string& workflow_id, const std::string& run_id,
    int64_t event_id, const ResetFlags& flags, const std::string& identity);

// The StartBatchOperationRequest of `flags` (checked by CheckResetFlags, with --query):
// the query, the reason, a new job id, and reset_operation {identity, options {
// first_workflow_task or last_workflow_task, reset_reapply_type}}.
temporal::api::workflowservice::v1::StartBatchOperationRequest MakeResetBatchRequest(
    const ResetFlags& flags, const std::string& namespace_name, const std::string& identity);

// Adds `reset` to the `workflow` group.
void AddWorkflowResetCommand(CLI::App& group, CommandContext& ctx);

}  // namespace tock::cli
