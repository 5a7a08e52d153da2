// The calls Temporal's server keeps switched off by default, answered as it answers them
// (reference/api_2026.md §1, §3.1, §3.2, §3.3.9, §4.7, §7.3, §8.2), so that a client or SDK
// that tries them learns what Temporal would tell it instead of "unimplemented" with no
// reason: the legacy build-id versioning calls (PERMISSION_DENIED: off on the namespace),
// the removed pre-release Deployment calls, worker config and commands, standalone Nexus
// operations, workflow rules and server-scaled deployments' compute config (UNIMPLEMENTED
// with Temporal's message). None of them reads or writes anything.
#include "server-core/frontend/handlers.h"

namespace tock::server::frontend {
namespace {

constexpr char kService[] = "temporal.api.workflowservice.v1.WorkflowService/";

// `Method` always answers `status`.
template <typename Req, typename Resp>
void Refuse(rpc::Dispatcher& dispatcher, const std::string& method, absl::Status status) {
  dispatcher.AddUnary<Req, Resp>(
      std::string(kService) + method,
      [status](const Req&, const rpc::CallContext&) -> absl::StatusOr<Resp> { return status; });
}

// Temporal's messages, quoted (service/frontend/errors.go, workflow_handler.go,
// chasm/lib/nexusoperation/frontend.go).
const char kVersioningV1Off[] =
    "Worker versioning v0.1 (Version Set-based, deprecated) is disabled on this namespace.";
const char kVersioningV2Off[] =
    "Worker versioning v0.2 (Rules-based, deprecated) is disabled on this namespace.";
const char kDeploymentsRemoved[] =
    "Deployments are deprecated and no longer supported, use Worker Deployments instead";
const char kStandaloneNexusOff[] = "Standalone Nexus operation is disabled";
const char kComputeConfigOff[] = "server-scaled deployments are not supported";

}  // namespace

void RegisterGatedOffHandlers(rpc::Dispatcher& d) {
  // Legacy build-id versioning (v0.1 version sets, v0.2 rules): off, as Temporal's defaults
  // (frontend.workerVersioningDataAPIs/RuleAPIs) have it; GetWorkerTaskReachability checks
  // the v0.1 switch but answers the v0.2 message, as Temporal's does.
  const absl::Status v1 = absl::PermissionDeniedError(kVersioningV1Off);
  const absl::Status v2 = absl::PermissionDeniedError(kVersioningV2Off);
  Refuse<wf::UpdateWorkerBuildIdCompatibilityRequest, wf::UpdateWorkerBuildIdCompatibilityResponse>(
      d, "UpdateWorkerBuildIdCompatibility", v1);
  Refuse<wf::GetWorkerBuildIdCompatibilityRequest, wf::GetWorkerBuildIdCompatibilityResponse>(
      d, "GetWorkerBuildIdCompatibility", v1);
  Refuse<wf::UpdateWorkerVersioningRulesRequest, wf::UpdateWorkerVersioningRulesResponse>(
      d, "UpdateWorkerVersioningRules", v2);
  Refuse<wf::GetWorkerVersioningRulesRequest, wf::GetWorkerVersioningRulesResponse>(
      d, "GetWorkerVersioningRules", v2);
  Refuse<wf::GetWorkerTaskReachabilityRequest, wf::GetWorkerTaskReachabilityResponse>(
      d, "GetWorkerTaskReachability", v2);

  // The pre-release "Deployments" (versioning v3.0): removed.
  const absl::Status removed = absl::UnimplementedError(kDeploymentsRemoved);
  Refuse<wf::DescribeDeploymentRequest, wf::DescribeDeploymentResponse>(d, "DescribeDeployment", removed);
  Refuse<wf::ListDeploymentsRequest, wf::ListDeploymentsResponse>(d, "ListDeployments", removed);
  Refuse<wf::GetDeploymentReachabilityRequest, wf::GetDeploymentReachabilityResponse>(
      d, "GetDeploymentReachability", removed);
  Refuse<wf::GetCurrentDeploymentRequest, wf::GetCurrentDeploymentResponse>(d, "GetCurrentDeployment", removed);
  Refuse<wf::SetCurrentDeploymentRequest, wf::SetCurrentDeploymentResponse>(d, "SetCurrentDeployment", removed);

  // Server-scaled deployments (AWS Lambda, Cloud Run): a cloud feature; the capabilities
  // server_scaled_deployments and server_scaled_provider_cloud_run stay false.
  const absl::Status compute = absl::UnimplementedError(kComputeConfigOff);
  Refuse<wf::UpdateWorkerDeploymentVersionComputeConfigRequest,
         wf::UpdateWorkerDeploymentVersionComputeConfigResponse>(
      d, "UpdateWorkerDeploymentVersionComputeConfig", compute);
  Refuse<wf::ValidateWorkerDeploymentVersionComputeConfigRequest,
         wf::ValidateWorkerDeploymentVersionComputeConfigResponse>(
      d, "ValidateWorkerDeploymentVersionComputeConfig", compute);

  // Worker commands and config: never on in Temporal's open-source server.
  Refuse<wf::FetchWorkerConfigRequest, wf::FetchWorkerConfigResponse>(
      d, "FetchWorkerConfig", absl::UnimplementedError("FetchWorkerConfig command is not enabled."));
  Refuse<wf::UpdateWorkerConfigRequest, wf::UpdateWorkerConfigResponse>(
      d, "UpdateWorkerConfig", absl::UnimplementedError("UpdateWorkerConfig command is not enabled."));

  // Standalone Nexus operations (pre-release, nexusoperation.enableStandalone off); the
  // namespace capability standalone_nexus_operation stays false.
  const absl::Status nexus = absl::UnimplementedError(kStandaloneNexusOff);
  Refuse<wf::StartNexusOperationExecutionRequest, wf::StartNexusOperationExecutionResponse>(
      d, "StartNexusOperationExecution", nexus);
  Refuse<wf::DescribeNexusOperationExecutionRequest, wf::DescribeNexusOperationExecutionResponse>(
      d, "DescribeNexusOperationExecution", nexus);
  Refuse<wf::PollNexusOperationExecutionRequest, wf::PollNexusOperationExecutionResponse>(
      d, "PollNexusOperationExecution", nexus);
  Refuse<wf::ListNexusOperationExecutionsRequest, wf::ListNexusOperationExecutionsResponse>(
      d, "ListNexusOperationExecutions", nexus);
  Refuse<wf::CountNexusOperationExecutionsRequest, wf::CountNexusOperationExecutionsResponse>(
      d, "CountNexusOperationExecutions", nexus);
  Refuse<wf::RequestCancelNexusOperationExecutionRequest, wf::RequestCancelNexusOperationExecutionResponse>(
      d, "RequestCancelNexusOperationExecution", nexus);
  Refuse<wf::TerminateNexusOperationExecutionRequest, wf::TerminateNexusOperationExecutionResponse>(
      d, "TerminateNexusOperationExecution", nexus);
  Refuse<wf::DeleteNexusOperationExecutionRequest, wf::DeleteNexusOperationExecutionResponse>(
      d, "DeleteNexusOperationExecution", nexus);

  // Workflow rules (pre-release, frontend.workflowRulesAPIsEnabled off); TriggerWorkflowRule
  // is never served.
  auto rules = [](const char* method) {
    return absl::UnimplementedError(std::string("method ") + method + " not supported");
  };
  Refuse<wf::CreateWorkflowRuleRequest, wf::CreateWorkflowRuleResponse>(d, "CreateWorkflowRule",
                                                                        rules("CreateWorkflowRule"));
  Refuse<wf::DescribeWorkflowRuleRequest, wf::DescribeWorkflowRuleResponse>(
      d, "DescribeWorkflowRule", rules("DescribeWorkflowRule"));
  Refuse<wf::DeleteWorkflowRuleRequest, wf::DeleteWorkflowRuleResponse>(d, "DeleteWorkflowRule",
                                                                        rules("DeleteWorkflowRule"));
  Refuse<wf::ListWorkflowRulesRequest, wf::ListWorkflowRulesResponse>(d, "ListWorkflowRules",
                                                                      rules("ListWorkflowRules"));
  Refuse<wf::TriggerWorkflowRuleRequest, wf::TriggerWorkflowRuleResponse>(
      d, "TriggerWorkflowRule", rules("TriggerWorkflowRule"));
}

}  // namespace tock::server::frontend
