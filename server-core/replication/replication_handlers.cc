#include "server-core/replication/replication_handlers.h"

namespace tock::server::replication {
namespace {

namespace adm = tock::admin::v1;
constexpr char kOperator[] = "temporal.api.operatorservice.v1.OperatorService/";
constexpr char kAdmin[] = "tock.admin.v1.AdminService/";

}  // namespace

void RegisterReplicationHandlers(rpc::Dispatcher& dispatcher, ClusterRegistry& clusters,
                                 NamespaceReplicator& namespaces) {
  dispatcher.AddUnary<op::AddOrUpdateRemoteClusterRequest, op::AddOrUpdateRemoteClusterResponse>(
      std::string(kOperator) + "AddOrUpdateRemoteCluster",
      [&clusters](const auto& req, const rpc::CallContext&)
          -> absl::StatusOr<op::AddOrUpdateRemoteClusterResponse> {
        if (absl::Status s = clusters.Upsert(req); !s.ok()) return s;
        return op::AddOrUpdateRemoteClusterResponse();
      });
  dispatcher.AddUnary<op::RemoveRemoteClusterRequest, op::RemoveRemoteClusterResponse>(
      std::string(kOperator) + "RemoveRemoteCluster",
      [&clusters](const auto& req, const rpc::CallContext&)
          -> absl::StatusOr<op::RemoveRemoteClusterResponse> {
        if (absl::Status s = clusters.Remove(req); !s.ok()) return s;
        return op::RemoveRemoteClusterResponse();
      });
  dispatcher.AddUnary<op::ListClustersRequest, op::ListClustersResponse>(
      std::string(kOperator) + "ListClusters",
      [&clusters](const auto& req, const rpc::CallContext&) { return clusters.List(req); });
  dispatcher.AddUnary<adm::GetNamespaceReplicationMessagesRequest,
                      adm::GetNamespaceReplicationMessagesResponse>(
      std::string(kAdmin) + "GetNamespaceReplicationMessages",
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Serve(req); });
}

}  // namespace tock::server::replication
