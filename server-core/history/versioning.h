// Worker Deployments in a run (reference/api_2026.md §3.3.5): what a versioned worker's
// workflow task completion records, the override a start gives, and the run's effective
// version and behaviour, which decide where its tasks go (TransferTask.deployment_version
// and pinned; deployments/deployment_routing.h) and its search attributes
// TemporalWorkerDeployment, TemporalWorkerDeploymentVersion and
// TemporalWorkflowVersioningBehavior.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "server-core/history/run_transaction.h"
#include "temporal/api/history/v1/message.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::history {

// A run's effective version ("deployment:build"; "" unversioned) and whether it is pinned:
// an override first (pinned to its version, or auto-upgrade from the last completion's
// version), else the last completion's behaviour and version.
struct EffectiveVersion {
  std::string version;
  bool pinned = false;
};
EffectiveVersion EffectiveVersionOf(const tock::persistence::v1::ExecutionInfo& exec);

// Temporal's checks of a VersioningOverride (worker_versioning.ValidateVersioningOverride).
absl::Status CheckVersioningOverride(const temporal::api::workflow::v1::VersioningOverride& o);

// A start's override: kept in the run's versioning info and its search attributes.
void StartWithOverride(RunTransaction& tx,
                       const temporal::api::workflow::v1::VersioningOverride& override_);

// A workflow task completion: a versioned worker's behaviour and version on the completed
// event and in the run's versioning info; an unversioned worker's clears them. The search
// attributes follow (visibility is written only when one changed).
void RecordWorkerVersion(RunTransaction& tx,
                         const temporal::api::workflowservice::v1::RespondWorkflowTaskCompletedRequest& req,
                         temporal::api::history::v1::WorkflowTaskCompletedEventAttributes& completed);
// What a WorkflowTaskCompleted event records of versioning, applied to the run: by the active
// side after writing it (RecordWorkerVersion), by a standby replaying it.
void ApplyCompletedVersioning(
    RunTransaction& tx,
    const temporal::api::history::v1::WorkflowTaskCompletedEventAttributes& completed);

}  // namespace tock::server::history
