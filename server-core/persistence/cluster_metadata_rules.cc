#include "absl/strings/str_cat.h"
#include "server-core/persistence/cluster_metadata_store.h"

namespace tock::persistence {

absl::StatusOr<int32_t> WriteOnceClusterMetadataStore::InitHistoryShardCount(int32_t shard_count) {
  // Stored once and for ever: refuse to fix a count no server could run with.
  if (shard_count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("history shard count must be at least 1, got ", shard_count));
  }
  auto stored = InitValue("history_shard_count", std::to_string(shard_count));
  if (!stored.ok()) return stored.status();
  if (*stored != std::to_string(shard_count)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "history shard count is ", shard_count, " in the configuration but ", *stored,
        " in the database at ", Location(),
        "; the number of history shards is fixed when the database is created"));
  }
  return shard_count;
}

absl::Status WriteOnceClusterMetadataStore::InitClusterName(const std::string& cluster_name) {
  auto stored = InitValue("current_cluster_name", cluster_name);
  if (!stored.ok()) return stored.status();
  if (*stored != cluster_name) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the configuration names this cluster \"", cluster_name, "\" but the database at ",
        Location(), " was written by cluster \"", *stored,
        "\"; a database belongs to one cluster"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> WriteOnceClusterMetadataStore::InitClusterId(
    const std::string& fresh_id) {
  return InitValue("cluster_id", fresh_id);
}

absl::StatusOr<std::string> WriteOnceClusterMetadataStore::InitHostSecret(const std::string& fresh) {
  return InitValue("host_secret", fresh);
}

}  // namespace tock::persistence
