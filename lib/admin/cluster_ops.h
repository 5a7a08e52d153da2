// Cluster operations against any Temporal frontend: what the cluster is, and which clusters
// it knows. Never prints; errors are absl::Status with the server's message verbatim.
// Thread safety: as the Connection.
#pragma once

#include <functional>
#include <optional>

#include "absl/status/statusor.h"
#include "lib/client/connection.h"
#include "temporal/api/operatorservice/v1/request_response.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::admin {

struct ClusterDescription {
  // What every Temporal frontend answers (WorkflowService.GetClusterInfo).
  temporal::api::workflowservice::v1::GetClusterInfoResponse info;
  // Tock's own view (AdminService.DescribeCluster): master cluster, global namespaces,
  // members, database. Absent when the server does not implement Tock's AdminService
  // (a Temporal server), so the command still works there.
  std::optional<tock::admin::v1::DescribeClusterResponse> tock;
};

// GetClusterInfo, then Tock's DescribeCluster. An error of the second other than
// UNIMPLEMENTED fails the whole call.
absl::StatusOr<ClusterDescription> DescribeCluster(client::Connection& connection);

// Calls `each` for every cluster the server knows (OperatorService.ListClusters), page by
// page; stops at the first error of `each` and returns it.
inline constexpr int kListClustersPageSize = 100;
absl::Status ListClusters(
    client::Connection& connection,
    const std::function<absl::Status(const temporal::api::operatorservice::v1::ClusterMetadata&)>&
        each,
    int page_size = kListClustersPageSize);

// The hosts serving the cluster's database and the owners of its shards (Tock's
// AdminService; UNIMPLEMENTED from a Temporal server).
absl::StatusOr<tock::admin::v1::ListClusterMembersResponse> ListClusterMembers(
    client::Connection& connection);
absl::StatusOr<tock::admin::v1::ListShardsResponse> ListShards(client::Connection& connection);

}  // namespace tock::admin
