#include "lib/common/time_format.h"
#include "lib/common/version.h"
#include "server-core/frontend/handlers.h"

namespace tock::server::frontend {
namespace {

namespace adm = tock::admin::v1;
constexpr char kService[] = "tock.admin.v1.AdminService/";

}  // namespace

void RegisterAdminServiceHandlers(rpc::Dispatcher& dispatcher,
                                  namespaces::NamespaceEngine& namespaces,
                                  const ServerFacts& facts) {
  dispatcher.AddUnary<adm::DescribeClusterRequest, adm::DescribeClusterResponse>(
      std::string(kService) + "DescribeCluster",
      [&namespaces, &facts](const adm::DescribeClusterRequest&, const rpc::CallContext&) {
        const std::shared_ptr<const admin::ClusterMetadata> snapshot = namespaces.cluster();
        const admin::ClusterMetadata& cluster = *snapshot;
        adm::DescribeClusterResponse out;
        out.set_current_cluster_name(cluster.current_cluster_name);
        out.set_master_cluster_name(cluster.master_cluster_name);
        out.set_enable_global_namespace(cluster.enable_global_namespace);
        out.set_failover_version_increment(cluster.failover_version_increment);
        for (const auto& [name, info] : cluster.clusters) {
          auto* member = out.add_clusters();
          member->set_cluster_name(name);
          member->set_enabled(info.enabled);
          member->set_initial_failover_version(info.initial_failover_version);
          member->set_rpc_address(info.rpc_address);
        }
        out.set_history_shard_count(facts.history_shard_count);
        out.set_persistence_engine(facts.persistence_engine);
        out.set_persistence_location(facts.persistence_location);
        out.set_server_version(kTockVersion);
        out.set_cluster_id(facts.cluster_id);
        out.set_console_url(facts.console_url);
        *out.mutable_server_start_time() = ToProtoTime(facts.start_time);
        return absl::StatusOr<adm::DescribeClusterResponse>(out);
      });
  dispatcher.AddUnary<adm::GetNamespaceHistoryRequest, adm::GetNamespaceHistoryResponse>(
      std::string(kService) + "GetNamespaceHistory",
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.History(req); });
  dispatcher.AddUnary<adm::DescribeNamespaceAsOfRequest, adm::DescribeNamespaceAsOfResponse>(
      std::string(kService) + "DescribeNamespaceAsOf",
      [&namespaces](const auto& req, const rpc::CallContext&) {
        return namespaces.DescribeAsOf(req);
      });
}

}  // namespace tock::server::frontend
