// Cluster operations against any Temporal frontend: what the cluster is, which clusters it
// knows, and adding, changing and removing the remote ones. Never prints; errors are
// absl::Status with the server's message verbatim.
// Thread safety: as the Connection.
#pragma once

#include <functional>
#include <optional>
#include <string>

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

// The bounds of what UpsertRemoteCluster and RemoveRemoteCluster send.
inline constexpr size_t kMaxClusterAddressLength = 255;
inline constexpr size_t kMaxClusterNameLength = 255;

// Adds the cluster whose frontend is at `frontend_address` (HOST:PORT) to the server's remote
// clusters, or updates it (OperatorService.AddOrUpdateRemoteCluster). The server connects to
// that frontend and takes the cluster's name, id and failover version from its answer.
// INVALID_ARGUMENT naming --frontend-address, before anything is sent, for an address that is
// empty, longer than kMaxClusterAddressLength bytes or not HOST:PORT (a host name, an IPv4
// address or a bracketed IPv6 address, and a port 1 to 65535). The server's errors come back
// with its words: UNAVAILABLE "Unable connect to remote cluster ..." when it cannot reach the
// frontend (that message is not prefixed with "cannot reach the server": the server was
// reached), INVALID_ARGUMENT "Unable connect to remote cluster with invalid config: ..." for
// the server's own address or a cluster that does not fit (failover versions, global
// namespaces).
absl::Status UpsertRemoteCluster(client::Connection& connection,
                                 const std::string& frontend_address, bool enable_connection,
                                 bool enable_replication);

// Removes the remote cluster `cluster_name` (OperatorService.RemoveRemoteCluster).
// INVALID_ARGUMENT naming --name, before anything is sent, for a name that is empty, longer
// than kMaxClusterNameLength bytes or holds a control character. The server answers NOT_FOUND
// for a cluster it does not know and refuses to remove one a namespace still uses.
absl::Status RemoveRemoteCluster(client::Connection& connection, const std::string& cluster_name);

// The checks of the two calls above, without a server (OK or INVALID_ARGUMENT).
absl::Status CheckClusterAddress(const std::string& frontend_address);
absl::Status CheckClusterName(const std::string& cluster_name);

// The hosts serving the cluster's database and the owners of its shards (Tock's
// AdminService; UNIMPLEMENTED from a Temporal server).
absl::StatusOr<tock::admin::v1::ListClusterMembersResponse> ListClusterMembers(
    client::Connection& connection);
absl::StatusOr<tock::admin::v1::ListShardsResponse> ListShards(client::Connection& connection);

// Replication with the remote clusters (Tock's AdminService.GetReplicationStatus): all of
// them, or the one named `remote` (checked like CheckClusterName; NOT_FOUND from the server
// for a name it does not know).
absl::StatusOr<tock::admin::v1::GetReplicationStatusResponse> GetReplicationStatus(
    client::Connection& connection, const std::string& remote);

}  // namespace tock::admin
