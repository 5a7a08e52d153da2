#include "lib/admin/cluster_metadata.h"

#include <limits>
#include <set>

#include "absl/strings/str_cat.h"

namespace tock::admin {
namespace {

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("cluster_metadata.", field, ": ", problem));
}

}  // namespace

ClusterMetadata ClusterMetadata::SingleCluster(const std::string& name,
                                               const std::string& rpc_address) {
  ClusterMetadata m;
  m.current_cluster_name = name;
  m.master_cluster_name = name;
  m.enable_global_namespace = false;
  m.failover_version_increment = 10;
  m.clusters[name] = ClusterInformation{true, 1, rpc_address};
  return m;
}

absl::Status ClusterMetadata::Validate() const {
  if (current_cluster_name.empty()) {
    return FieldError("current_cluster_name", "is required");
  }
  if (master_cluster_name.empty()) {
    return FieldError("master_cluster_name", "is required");
  }
  if (failover_version_increment <= 0 ||
      failover_version_increment > std::numeric_limits<int32_t>::max()) {
    return FieldError("failover_version_increment",
                      absl::StrCat("must be between 1 and 2147483647; got ",
                                   failover_version_increment));
  }
  if (clusters.empty()) {
    return FieldError("clusters", "at least one cluster is required");
  }
  std::set<int64_t> seen_versions;
  for (const auto& [name, info] : clusters) {
    std::string field = absl::StrCat("clusters.", name);
    if (name.empty()) return FieldError("clusters", "a cluster name is empty");
    if (info.initial_failover_version <= 0 ||
        info.initial_failover_version >= failover_version_increment) {
      return FieldError(absl::StrCat(field, ".initial_failover_version"),
                        absl::StrCat("must be greater than 0 and less than "
                                     "failover_version_increment (",
                                     failover_version_increment, "); got ",
                                     info.initial_failover_version));
    }
    if (!seen_versions.insert(info.initial_failover_version).second) {
      return FieldError(absl::StrCat(field, ".initial_failover_version"),
                        absl::StrCat(info.initial_failover_version,
                                     " is already used by another cluster; each cluster needs "
                                     "its own initial failover version"));
    }
    if (info.enabled && info.rpc_address.empty()) {
      return FieldError(absl::StrCat(field, ".rpc_address"), "is required for an enabled cluster");
    }
  }
  if (!clusters.contains(current_cluster_name)) {
    return FieldError("current_cluster_name",
                      absl::StrCat("\"", current_cluster_name, "\" is not listed in clusters"));
  }
  if (!clusters.contains(master_cluster_name)) {
    return FieldError("master_cluster_name",
                      absl::StrCat("\"", master_cluster_name, "\" is not listed in clusters"));
  }
  if (!clusters.at(current_cluster_name).enabled) {
    return FieldError("current_cluster_name",
                      absl::StrCat("\"", current_cluster_name, "\" is not enabled"));
  }
  return absl::OkStatus();
}

int64_t ClusterMetadata::NextFailoverVersion(const std::string& cluster,
                                             int64_t current_version) const {
  const int64_t initial = clusters.at(cluster).initial_failover_version;
  int64_t v = current_version / failover_version_increment * failover_version_increment + initial;
  if (v < current_version) v += failover_version_increment;
  return v;
}

std::string ClusterMetadata::ClusterForFailoverVersion(int64_t version) const {
  if (version == 0) return current_cluster_name;
  int64_t initial = version % failover_version_increment;
  for (const auto& [name, info] : clusters) {
    if (info.initial_failover_version == initial) return name;
  }
  return absl::StrCat("unknown-cluster-", initial);
}

bool ClusterMetadata::IsActiveFor(int64_t namespace_version) const {
  return ClusterForFailoverVersion(namespace_version) == current_cluster_name;
}

}  // namespace tock::admin
