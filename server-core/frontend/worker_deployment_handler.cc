// Worker Deployments (reference/api_2026.md §3.3.7): the WorkflowService calls over
// deployments::DeploymentRegistry, which holds their rules. Reads resolve the namespace as
// reads; changes as writes (a standby namespace's are sent to its active cluster first).
#include "absl/strings/str_cat.h"
#include "server-core/deployments/deployment_registry.h"
#include "server-core/deployments/read_limiter.h"
#include "server-core/frontend/handlers.h"

namespace tock::server::frontend {
namespace {

constexpr char kService[] = "temporal.api.workflowservice.v1.WorkflowService/";

// Registers `name`: resolves the request's namespace for `access`, then `call(id, req)`.
template <typename Request, typename Response, typename Call>
void Add(rpc::Dispatcher& dispatcher, namespaces::NamespaceEngine& namespaces, const char* name,
         namespaces::NamespaceAccess access, Call call) {
  dispatcher.AddUnary<Request, Response>(
      absl::StrCat(kService, name),
      [&namespaces, access, call](const Request& req,
                                  const rpc::CallContext&) -> absl::StatusOr<Response> {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), true, access);
        if (!ns.ok()) return ns.status();
        if constexpr (std::is_same_v<decltype(call(ns->id, req)), absl::Status>) {
          if (absl::Status s = call(ns->id, req); !s.ok()) return s;
          return Response();
        } else {
          return call(ns->id, req);
        }
      });
}

}  // namespace

void RegisterWorkerDeploymentHandlers(rpc::Dispatcher& dispatcher,
                                      namespaces::NamespaceEngine& namespaces,
                                      deployments::DeploymentRegistry& registry, Clock& clock) {
  using A = namespaces::NamespaceAccess;
  auto& r = registry;
  // The two Describe reads are rate-limited per namespace (deployments/read_limiter.h).
  auto reads = std::make_shared<deployments::ReadLimiter>(clock);
  Add<wf::DescribeWorkerDeploymentRequest, wf::DescribeWorkerDeploymentResponse>(
      dispatcher, namespaces, "DescribeWorkerDeployment", A::kRead,
      [&r, reads](const std::string& ns, const auto& req)
          -> absl::StatusOr<wf::DescribeWorkerDeploymentResponse> {
        if (absl::Status s = reads->Admit(ns, req.namespace_()); !s.ok()) return s;
        return r.Describe(ns, req);
      });
  Add<wf::ListWorkerDeploymentsRequest, wf::ListWorkerDeploymentsResponse>(
      dispatcher, namespaces, "ListWorkerDeployments", A::kRead,
      [&r](const std::string& ns, const auto& req) { return r.List(ns, req); });
  Add<wf::DescribeWorkerDeploymentVersionRequest, wf::DescribeWorkerDeploymentVersionResponse>(
      dispatcher, namespaces, "DescribeWorkerDeploymentVersion", A::kRead,
      [&r, reads](const std::string& ns, const auto& req)
          -> absl::StatusOr<wf::DescribeWorkerDeploymentVersionResponse> {
        if (absl::Status s = reads->Admit(ns, req.namespace_()); !s.ok()) return s;
        return r.DescribeVersion(ns, req);
      });
  Add<wf::SetWorkerDeploymentCurrentVersionRequest, wf::SetWorkerDeploymentCurrentVersionResponse>(
      dispatcher, namespaces, "SetWorkerDeploymentCurrentVersion", A::kWrite,
      [&r](const std::string& ns, const auto& req) { return r.SetCurrent(ns, req); });
  Add<wf::SetWorkerDeploymentRampingVersionRequest, wf::SetWorkerDeploymentRampingVersionResponse>(
      dispatcher, namespaces, "SetWorkerDeploymentRampingVersion", A::kWrite,
      [&r](const std::string& ns, const auto& req) { return r.SetRamping(ns, req); });
  Add<wf::DeleteWorkerDeploymentVersionRequest, wf::DeleteWorkerDeploymentVersionResponse>(
      dispatcher, namespaces, "DeleteWorkerDeploymentVersion", A::kWrite,
      [&r](const std::string& ns, const auto& req) { return r.DeleteVersion(ns, req); });
  Add<wf::DeleteWorkerDeploymentRequest, wf::DeleteWorkerDeploymentResponse>(
      dispatcher, namespaces, "DeleteWorkerDeployment", A::kWrite,
      [&r](const std::string& ns, const auto& req) { return r.DeleteDeployment(ns, req); });
  Add<wf::UpdateWorkerDeploymentVersionMetadataRequest,
      wf::UpdateWorkerDeploymentVersionMetadataResponse>(
      dispatcher, namespaces, "UpdateWorkerDeploymentVersionMetadata", A::kWrite,
      [&r](const std::string& ns, const auto& req) { return r.UpdateMetadata(ns, req); });
  Add<wf::SetWorkerDeploymentManagerRequest, wf::SetWorkerDeploymentManagerResponse>(
      dispatcher, namespaces, "SetWorkerDeploymentManager", A::kWrite,
      [&r](const std::string& ns, const auto& req) { return r.SetManager(ns, req); });
  Add<wf::CreateWorkerDeploymentRequest, wf::CreateWorkerDeploymentResponse>(
      dispatcher, namespaces, "CreateWorkerDeployment", A::kWrite,
      [&r](const std::string& ns, const auto& req) { return r.CreateDeployment(ns, req); });
  Add<wf::CreateWorkerDeploymentVersionRequest, wf::CreateWorkerDeploymentVersionResponse>(
      dispatcher, namespaces, "CreateWorkerDeploymentVersion", A::kWrite,
      [&r](const std::string& ns, const auto& req) { return r.CreateVersion(ns, req); });
}

}  // namespace tock::server::frontend
