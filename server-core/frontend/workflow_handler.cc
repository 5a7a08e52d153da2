#include "lib/common/version.h"
#include "server-core/frontend/handlers.h"

namespace tock::server::frontend {
namespace {

constexpr char kService[] = "temporal.api.workflowservice.v1.WorkflowService/";

std::string Method(const char* name) { return std::string(kService) + name; }

wf::GetSystemInfoResponse SystemInfo() {
  wf::GetSystemInfoResponse out;
  out.set_server_version(kTockVersion);
  auto* caps = out.mutable_capabilities();
  // What the SDK worker needs (reference/sdk_protocol.md §2.1): sdk_metadata is required for
  // determinism; the others say the server passes headers and failures through unchanged.
  caps->set_sdk_metadata(true);
  caps->set_signal_and_query_header(true);
  caps->set_encoded_failure_attributes(true);
  caps->set_activity_failure_include_heartbeat(true);
  caps->set_internal_error_differentiation(true);
  caps->set_build_id_based_versioning(false);
  caps->set_supports_schedules(true);
  return out;
}

}  // namespace

void RegisterWorkflowServiceHandlers(rpc::Dispatcher& dispatcher, NamespaceEngine& namespaces,
                                     const ServerFacts& facts) {
  dispatcher.AddUnary<wf::GetSystemInfoRequest, wf::GetSystemInfoResponse>(
      Method("GetSystemInfo"),
      [](const wf::GetSystemInfoRequest&, const rpc::CallContext&) { return SystemInfo(); });

  dispatcher.AddUnary<wf::GetClusterInfoRequest, wf::GetClusterInfoResponse>(
      Method("GetClusterInfo"),
      [&namespaces, &facts](const wf::GetClusterInfoRequest&, const rpc::CallContext&) {
        const std::shared_ptr<const admin::ClusterMetadata> snapshot = namespaces.cluster();
        const admin::ClusterMetadata& cluster = *snapshot;
        wf::GetClusterInfoResponse out;
        out.set_server_version(kTockVersion);
        out.set_cluster_id(facts.cluster_id);
        out.set_cluster_name(cluster.current_cluster_name);
        out.set_history_shard_count(facts.history_shard_count);
        out.set_persistence_store(facts.persistence_engine);
        out.set_visibility_store(facts.persistence_engine);
        out.set_initial_failover_version(
            cluster.clusters.at(cluster.current_cluster_name).initial_failover_version);
        out.set_failover_version_increment(cluster.failover_version_increment);
        (*out.mutable_supported_clients())["temporal-typescript"] = ">=1.0.0";
        (*out.mutable_supported_clients())["tock"] = ">=0.1.0";
        return absl::StatusOr<wf::GetClusterInfoResponse>(out);
      });

  dispatcher.AddUnary<wf::RegisterNamespaceRequest, wf::RegisterNamespaceResponse>(
      Method("RegisterNamespace"),
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Register(req); });
  dispatcher.AddUnary<wf::DescribeNamespaceRequest, wf::DescribeNamespaceResponse>(
      Method("DescribeNamespace"),
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Describe(req); });
  dispatcher.AddUnary<wf::ListNamespacesRequest, wf::ListNamespacesResponse>(
      Method("ListNamespaces"),
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.List(req); });
  dispatcher.AddUnary<wf::UpdateNamespaceRequest, wf::UpdateNamespaceResponse>(
      Method("UpdateNamespace"),
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Update(req); });
  dispatcher.AddUnary<wf::DeprecateNamespaceRequest, wf::DeprecateNamespaceResponse>(
      Method("DeprecateNamespace"),
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Deprecate(req); });
}

}  // namespace tock::server::frontend
