// Cluster metadata (SPEC §2.1) and failover versioning (SPEC §2.2, seed 002
// "Multi-Cluster Replication"). Static configuration, validated once at start.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"

namespace tock::admin {

struct ClusterInformation {
  bool enabled = true;
  int64_t initial_failover_version = 0;
  std::string rpc_address;
};

struct ClusterMetadata {
  std::string current_cluster_name;
  std::string master_cluster_name;
  bool enable_global_namespace = false;
  int64_t failover_version_increment = 0;
  std::map<std::string, ClusterInformation> clusters;

  // A single-cluster metadata named `name` (initial version 1, increment 10, global
  // namespaces off), what the dev server uses when no cluster is configured.
  static ClusterMetadata SingleCluster(const std::string& name, const std::string& rpc_address);

  // Checks every rule of SPEC §2.1; the INVALID_ARGUMENT message names the offending field,
  // for example "cluster_metadata.clusters.b.initial_failover_version: ...".
  absl::Status Validate() const;

  bool IsMasterCluster() const { return current_cluster_name == master_cluster_name; }

  // `v = current / inc * inc + initial(cluster)`, plus one increment if that went backwards.
  // The cluster must exist (Validate the metadata and the name first).
  int64_t NextFailoverVersion(const std::string& cluster, int64_t current_version) const;

  // The cluster that owns `version` (version % increment == its initial version); for
  // version 0 (a local namespace) the current cluster; "unknown-cluster-<n>" otherwise.
  std::string ClusterForFailoverVersion(int64_t version) const;

  // True when this cluster may mutate a namespace at `namespace_version`.
  bool IsActiveFor(int64_t namespace_version) const;
};

}  // namespace tock::admin
