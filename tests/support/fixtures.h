// Configurations several test suites share.
#pragma once

#include "lib/admin/cluster_metadata.h"

namespace tock::testing {

// Seed 002's example: clusters a (initial version 1) and b (2), increment 10, current a.
inline constexpr char kTwoClusterConfigYaml[] = R"(
cluster_metadata:
  enable_global_namespace: true
  failover_version_increment: 10
  master_cluster_name: a
  current_cluster_name: a
  clusters:
    a: {enabled: true, initial_failover_version: 1, rpc_address: "127.0.0.1:7233"}
    b: {enabled: true, initial_failover_version: 2, rpc_address: "127.0.0.1:7234"}
)";

// The same metadata as a struct, with `current` as the current cluster.
inline admin::ClusterMetadata SeedClusterMetadata(const std::string& current = "a") {
  admin::ClusterMetadata m;
  m.current_cluster_name = current;
  m.master_cluster_name = "a";
  m.enable_global_namespace = true;
  m.failover_version_increment = 10;
  m.clusters["a"] = {true, 1, "127.0.0.1:7233"};
  m.clusters["b"] = {true, 2, "127.0.0.1:7234"};
  return m;
}

}  // namespace tock::testing
