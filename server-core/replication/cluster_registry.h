// The clusters this one knows (reference/replication.md §1): the configured ones
// (cluster_metadata in the config file: this cluster, and remotes named for failover
// versions) and the remotes connected at run time through OperatorService
// AddOrUpdateRemoteCluster, stored in the database. The merged set is what the namespace
// engine validates against (a global namespace may list any of them) and what the
// replicators pull from (the stored remotes whose connection is enabled).
//
// A change made here is applied at once on this host; other hosts of the same database see
// it at their next refresh (every kRefreshInterval), like Temporal's metadata refresh.
//
// Thread safety: safe from many threads.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/admin/cluster_metadata.h"
#include "lib/common/log.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/persistence/namespace_store.h"
#include "server-core/persistence/replication_store.h"
#include "server-core/worker/periodic_thread.h"
#include "temporal/api/operatorservice/v1/request_response.pb.h"

namespace tock::server::replication {

namespace op = temporal::api::operatorservice::v1;

// What a remote frontend says about its cluster (GetClusterInfo and Tock's DescribeCluster).
struct RemoteDescription {
  std::string cluster_name;
  std::string cluster_id;
  std::string http_address;
  int32_t history_shard_count = 0;
  int64_t initial_failover_version = 0;
  int64_t failover_version_increment = 0;
  bool global_namespace_enabled = false;
};

// OK when a remote cluster's history shard count equals this cluster's; otherwise
// INVALID_ARGUMENT saying why. Temporal accepts counts that are multiples and folds one
// cluster's shards onto the other's, but with fewer remote shards each remote shard holds
// the workflows of several local shards, which hosts sharing a database own apart: the
// tasks of all but one would wait on a host that does not own them and end in the DLQ.
// So Tock replicates 1:1 only (reference/replication.md §6.1), and says so: counts that are
// not multiples get Temporal's message, multiples a Tock one naming both counts.
absl::Status CheckShardCounts(int32_t remote, int32_t local);

// Asks the frontend at `address` about its cluster; the error says why it could not.
using DescribeRemote = std::function<absl::StatusOr<RemoteDescription>(const std::string& address)>;

class ClusterRegistry {
 public:
  static constexpr absl::Duration kRefreshInterval = absl::Seconds(5);

  // `configured` is validated (ClusterMetadata::Validate); `cluster_id` is this cluster's.
  ClusterRegistry(admin::ClusterMetadata configured, std::string cluster_id,
                  int32_t history_shard_count, persistence::ReplicationStore& store,
                  persistence::NamespaceStore& namespaces, namespaces::NamespaceEngine& engine,
                  DescribeRemote describe);

  // Reads the stored remotes and hands the merged set to the namespace engine. At start,
  // then every kRefreshInterval (Refresh keeps the last good set when the read fails).
  absl::Status Refresh();
  // Refreshes every kRefreshInterval from now on (failures logged, the last set kept).
  void Start(Logger& logger);

  // The configured address of this cluster once the server is bound (port 0).
  void SetCurrentClusterAddress(const std::string& address);

  // The stored remotes, by name.
  std::vector<persistence::StoredRemoteCluster> Remotes() const;
  // OK when `name` is a stored remote; else FAILED_PRECONDITION (Temporal's "missing cluster
  // info for cluster"): what a cluster pulling from this one must be.
  absl::Status CheckConnected(const std::string& name) const;
  std::string current_cluster_name() const { return configured_.current_cluster_name; }
  const std::string& cluster_id() const { return cluster_id_; }

  // OperatorService, with Temporal's checks and messages (reference §1.3, §1.4).
  absl::Status Upsert(const op::AddOrUpdateRemoteClusterRequest& req);
  absl::Status Remove(const op::RemoveRemoteClusterRequest& req);
  absl::StatusOr<op::ListClustersResponse> List(const op::ListClustersRequest& req) const;

 private:
  // Requires mu_. The configured set with the stored remotes over it.
  admin::ClusterMetadata MergedLocked() const;
  absl::Status ValidateRemote(const RemoteDescription& remote, const std::string& address,
                              bool enabled) const;
  // FAILED_PRECONDITION when a namespace of several clusters lists this one and `name`.
  absl::Status CheckUnreferenced(const std::string& name) const;

  admin::ClusterMetadata configured_;  // guarded by mu_ (the current address changes once)
  const std::string cluster_id_;
  const int32_t history_shard_count_;
  persistence::ReplicationStore& store_;
  persistence::NamespaceStore& namespaces_;
  namespaces::NamespaceEngine& engine_;
  const DescribeRemote describe_;
  mutable std::mutex mu_;
  std::vector<persistence::StoredRemoteCluster> remotes_;  // guarded by mu_
  std::mutex upsert_mu_;  // one upsert or removal at a time on this host
  std::unique_ptr<worker::PeriodicThread> refresher_;  // last: stopped first
};

}  // namespace tock::server::replication
