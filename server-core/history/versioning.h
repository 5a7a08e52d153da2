// Worker Deployments in a run (reference/api_2026.md §3.3.5): what a versioned worker's
// workflow task completion records, the override a start gives, and the run's effective
// version and behaviour, which decide where its tasks go (TransferTask.deployment_version
// and pinned; deployments/deployment_routing.h) and its search attributes
// TemporalWorkerDeployment, TemporalWorkerDeploymentVersion and
// TemporalWorkflowVersioningBehavior.
#pragma once

#include <functional>
#include <optional>
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

// What history asks of the namespace's Worker Deployments (deployments/deployment_routing.h);
// unset members answer "no" and "unversioned".
struct VersionRouting {
  // Whether the workers of `version` poll the workflow task queue `task_queue`.
  std::function<bool(const std::string& namespace_id, const std::string& version,
                     const std::string& task_queue)>
      polls;
  // Where an unpinned workflow task of `workflow_id` on `task_queue` goes ("" unversioned).
  std::function<std::string(const std::string& namespace_id, const std::string& task_queue,
                            const std::string& workflow_id)>
      target;
};

// What a new run inherits of the version of the run it follows (its parent, or the run it
// continues or retries): WorkflowExecutionStartedEventAttributes' inherited_pinned_version
// or inherited_auto_upgrade_info, at most one of them.
struct InheritedVersion {
  std::optional<temporal::api::deployment::v1::WorkerDeploymentVersion> pinned;
  std::optional<temporal::api::deployment::v1::InheritedAutoUpgradeInfo> auto_upgrade;
};
enum class Successor { kChild, kContinueAsNew, kRetry, kCron };
// Temporal's inheritance rules (history/v1 message.proto on inherited_pinned_version): a
// child or a continue-as-new of a run whose own behaviour (not an override) is pinned or
// auto-upgrade inherits that behaviour and version when the version's workers poll the new
// run's task queue (`polls`); a continue-as-new asking for `initial` AUTO_UPGRADE (or
// USE_RAMPING_VERSION) starts auto-upgrade instead of pinned; a retry inherits only what the
// retried run inherited at its start (`from_start`) and still has; a cron run never does.
InheritedVersion InheritVersion(
    const tock::persistence::v1::ExecutionInfo& from,
    const temporal::api::history::v1::WorkflowExecutionStartedEventAttributes* from_start,
    Successor how, const std::string& task_queue,
    const std::function<bool(const std::string& version, const std::string& task_queue)>& polls,
    temporal::api::enums::v1::ContinueAsNewVersioningBehavior initial = {});
// The pinned override a new run inherits (every kind of successor), when the override's
// version polls the new run's task queue.
std::optional<temporal::api::workflow::v1::VersioningOverride> InheritOverride(
    const tock::persistence::v1::ExecutionInfo& from, const std::string& task_queue,
    const std::function<bool(const std::string& version, const std::string& task_queue)>& polls);
// Writes what a new run inherited on its started event.
void RecordInherited(const InheritedVersion& inherited,
                     temporal::api::history::v1::WorkflowExecutionStartedEventAttributes& started);
// A started event's versioning (its override, the version it inherited) applied to its run,
// with the search attributes: by the active side after writing it, by a standby replaying it.
void ApplyStartedVersioning(
    RunTransaction& tx,
    const temporal::api::history::v1::WorkflowExecutionStartedEventAttributes& started);

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
