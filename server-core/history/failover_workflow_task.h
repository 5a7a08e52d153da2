// A workflow task in flight at a failover (reference/replication.md §4.5): started by a
// worker of the cluster that was active, it can no longer be completed there (that cluster
// refuses the answer with NamespaceNotActive) nor here (its worker talks to the other
// cluster). The first write of the run on the new active cluster fails it and schedules a
// new one for this cluster's workers (Temporal's startTransactionHandleWorkflowTaskFailover).
#pragma once

#include <cstdint>

#include "server-core/history/run_transaction.h"

namespace tock::server::history {

// Whether the workflow task started in the run was started by another cluster than the
// one that owns the transaction's version: its started event's version is below the
// transaction's and, with `version_increment` known (> 0), of another cluster (a task this
// cluster started before failing over away and back is kept).
bool WorkflowTaskStartedElsewhere(const RunTransaction& tx, int64_t version_increment);

// Fails the started workflow task with WORKFLOW_TASK_FAILED_CAUSE_FAILOVER_CLOSE_COMMAND
// (its timeout timer retired), moves any buffered events into the history and schedules a
// new workflow task (attempt 1: a failover restarts a failing task's attempts, Temporal's
// TestTransientWorkflowTaskFailover). The events carry the transaction's version.
void FailWorkflowTaskForFailover(RunTransaction& tx);

}  // namespace tock::server::history
