#include "server-core/frontend/handlers.h"

namespace tock::server::frontend {
namespace {

constexpr char kService[] = "temporal.api.operatorservice.v1.OperatorService/";

}  // namespace

void RegisterOperatorServiceHandlers(rpc::Dispatcher& dispatcher, NamespaceEngine& namespaces,
                                     const ServerFacts& facts) {
  dispatcher.AddUnary<op::ListClustersRequest, op::ListClustersResponse>(
      std::string(kService) + "ListClusters",
      [&namespaces, &facts](const op::ListClustersRequest&, const rpc::CallContext&) {
        const admin::ClusterMetadata& cluster = namespaces.cluster();
        op::ListClustersResponse out;
        for (const auto& [name, info] : cluster.clusters) {
          auto* c = out.add_clusters();
          c->set_cluster_name(name);
          if (name == cluster.current_cluster_name) {
            c->set_cluster_id(facts.cluster_id);
            c->set_history_shard_count(facts.history_shard_count);
          }
          c->set_address(info.rpc_address);
          c->set_initial_failover_version(info.initial_failover_version);
          c->set_is_connection_enabled(info.enabled);
          c->set_is_replication_enabled(info.enabled && cluster.enable_global_namespace);
        }
        return absl::StatusOr<op::ListClustersResponse>(out);
      });
  dispatcher.AddUnary<op::AddSearchAttributesRequest, op::AddSearchAttributesResponse>(
      std::string(kService) + "AddSearchAttributes",
      [&namespaces](const auto& req, const rpc::CallContext&) {
        return namespaces.AddSearchAttributes(req);
      });
  dispatcher.AddUnary<op::RemoveSearchAttributesRequest, op::RemoveSearchAttributesResponse>(
      std::string(kService) + "RemoveSearchAttributes",
      [&namespaces](const auto& req, const rpc::CallContext&) {
        return namespaces.RemoveSearchAttributes(req);
      });
  dispatcher.AddUnary<op::ListSearchAttributesRequest, op::ListSearchAttributesResponse>(
      std::string(kService) + "ListSearchAttributes",
      [&namespaces](const auto& req, const rpc::CallContext&) {
        return namespaces.ListSearchAttributes(req);
      });
  dispatcher.AddUnary<op::DeleteNamespaceRequest, op::DeleteNamespaceResponse>(
      std::string(kService) + "DeleteNamespace",
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Delete(req); });
}

}  // namespace tock::server::frontend
