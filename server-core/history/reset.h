// ResetWorkflowExecution, with Temporal's rules (service/history/api/resetworkflow,
// ndc/workflow_resetter): a new run whose history is the base run's up to the workflow task
// the reset point ends (the point is the event after its WorkflowTaskScheduled or
// WorkflowTaskStarted), that task failed with cause RESET_WORKFLOW, the base run's signals
// and accepted updates after the point reapplied (unless the reapply type says not; updates
// as WorkflowExecutionUpdateAdmitted events), and a new workflow task. The new run becomes
// the workflow's current run.
//
// Everything is checked and the new run built before anything is written, and then one
// commit writes it all (Temporal's workflow_resetter persistToDB): the workflow's current
// run terminated if it runs (the base run itself, or, when an older run is reset, the run
// that is current now), the base run's record of the reset, and the new run. So a refused
// reset, or a commit that fails, leaves the current run as it was.
//
// A reset is answered once per request id (Temporal's "dedup by requestID"): the new run is
// started with the reset's request id, and a reset whose request id started the workflow's
// current run answers that run and changes nothing (a retry of a reset that committed).
//
// The new run's state is rebuilt from the copied events: activities scheduled and not closed
// by the point are scheduled again (attempt 1, from now), timers started and not fired or
// cancelled fire when they would have (at once if that has passed), upserted search
// attributes and memo are those of the point. A point with a child workflow, or a signal or
// cancel request to another workflow, still pending is refused (as Temporal's resetter long
// did): resetting to a later workflow task avoids them.
//
// The reset needs of the engine only RunAccess (the current run, a run's state, a change
// under the run's lock) and the store for the base run's history.
//
// Thread safety: safe from any thread.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "server-core/history/mutation.h"
#include "server-core/history/request_limits.h"
#include "server-core/history/shard_controller.h"
#include "server-core/persistence/execution_store.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::history {

class WorkflowReset {
 public:
  // `limits` is read on every reset (the engine sets it after construction).
  WorkflowReset(RunAccess& runs, persistence::ExecutionStore& store, ShardController& shards,
                const Limits& limits)
      : runs_(runs), store_(store), shards_(shards), limits_(limits) {}

  // A new run from the base run's history up to a workflow task, checked and built first,
  // then written in one commit with the workflow's current run terminated if it runs. A retry
  // with the request id of the reset that made the current run answers that run.
  absl::StatusOr<wf::ResetWorkflowExecutionResponse> Reset(
      const NamespaceRef& ns, const wf::ResetWorkflowExecutionRequest& req);

 private:
  // The base run when it is older than the current one (none when it is the current run):
  // it must have closed.
  absl::StatusOr<std::optional<MutableStateRecord>> ReadOlderBase(const NamespaceRef& ns,
                                                                  const std::string& workflow_id,
                                                                  const std::string& base_run_id,
                                                                  const std::string& current_run_id);
  // The one commit: the current run's change (terminated if it runs), carrying the new run
  // and, for an older base, its record of the reset. Returns the new run's id.
  absl::StatusOr<std::string> Commit(const NamespaceRef& ns,
                                     const wf::ResetWorkflowExecutionRequest& req,
                                     const std::string& current_run_id,
                                     const std::optional<MutableStateRecord>& older_base,
                                     const std::string& request_id);

  RunAccess& runs_;
  persistence::ExecutionStore& store_;
  ShardController& shards_;
  const Limits& limits_;
};

}  // namespace tock::server::history
