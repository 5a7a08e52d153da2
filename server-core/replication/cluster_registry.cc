#include "server-core/replication/cluster_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/common/log.h"

namespace tock::server::replication {
namespace {

constexpr size_t kMaxNameLength = 255;
constexpr size_t kMaxErrorEcho = 200;  // of a remote's error, in our messages
constexpr int32_t kDefaultListPageSize = 100;

absl::Status InvalidConfig(absl::string_view inner) {
  return absl::InvalidArgumentError(
      absl::StrCat("Unable connect to remote cluster with invalid config: ", inner, "."));
}

bool PrintableName(const std::string& name) {
  return !name.empty() && name.size() <= kMaxNameLength &&
         std::none_of(name.begin(), name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

}  // namespace

absl::Status CheckShardCounts(int32_t remote, int32_t local) {
  if (remote == local) return absl::OkStatus();
  const int32_t larger = std::max(remote, local);
  const int32_t smaller = std::min(remote, local);
  if (smaller <= 0 || larger % smaller != 0) {  // Temporal's refusal, word for word
    return absl::InvalidArgumentError(
        "Remote cluster shard number and local cluster shard number are not multiples.");
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "the remote cluster has ", remote, " history shards and this cluster has ", local,
      "; Tock replicates only between clusters with the same number of history shards "
      "(history.shards, fixed when a cluster's database is created)"));
}

ClusterRegistry::ClusterRegistry(admin::ClusterMetadata configured, std::string cluster_id,
                                 int32_t history_shard_count, persistence::ReplicationStore& store,
                                 persistence::NamespaceStore& namespaces,
                                 namespaces::NamespaceEngine& engine, DescribeRemote describe)
    : configured_(std::move(configured)),
      cluster_id_(std::move(cluster_id)),
      history_shard_count_(history_shard_count),
      store_(store),
      namespaces_(namespaces),
      engine_(engine),
      describe_(std::move(describe)) {}

absl::Status ClusterRegistry::Refresh() {
  absl::StatusOr<std::vector<persistence::StoredRemoteCluster>> rows = store_.ListRemoteClusters();
  if (!rows.ok()) return rows.status();
  admin::ClusterMetadata merged;
  {
    std::lock_guard lock(mu_);
    remotes_ = std::move(*rows);
    merged = MergedLocked();
  }
  engine_.SetCluster(std::move(merged));
  return absl::OkStatus();
}

void ClusterRegistry::Start(Logger& logger) {
  worker::PeriodicThread::Observers observers;
  observers.name = "cluster metadata refresh";
  observers.logger = &logger;
  refresher_ = std::make_unique<worker::PeriodicThread>(kRefreshInterval,
                                                        [this] { return Refresh(); }, observers);
}

void ClusterRegistry::SetCurrentClusterAddress(const std::string& address) {
  admin::ClusterMetadata merged;
  {
    std::lock_guard lock(mu_);
    configured_.clusters[configured_.current_cluster_name].rpc_address = address;
    merged = MergedLocked();
  }
  engine_.SetCluster(std::move(merged));
}

std::vector<persistence::StoredRemoteCluster> ClusterRegistry::Remotes() const {
  std::lock_guard lock(mu_);
  return remotes_;
}

absl::Status ClusterRegistry::CheckConnected(const std::string& name) const {
  std::lock_guard lock(mu_);
  if (std::any_of(remotes_.begin(), remotes_.end(),
                  [&](const auto& r) { return r.record.name() == name; })) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "missing cluster info for cluster: ", name.substr(0, kMaxNameLength),
      " (connect it first: tock cluster upsert --frontend-address ITS_ADDRESS)"));
}

admin::ClusterMetadata ClusterRegistry::MergedLocked() const {
  admin::ClusterMetadata merged = configured_;
  for (const persistence::StoredRemoteCluster& r : remotes_) {
    merged.clusters[r.record.name()] = admin::ClusterInformation{
        r.record.connection_enabled(), r.record.initial_failover_version(), r.record.address()};
  }
  return merged;
}

absl::Status ClusterRegistry::ValidateRemote(const RemoteDescription& remote,
                                             const std::string& address, bool enabled) const {
  std::lock_guard lock(mu_);
  const admin::ClusterMetadata merged = MergedLocked();
  if (!PrintableName(remote.cluster_name)) {
    return InvalidConfig("cluster name must not be empty");
  }
  if (remote.cluster_name == merged.current_cluster_name) {
    return InvalidConfig("Cannot update current cluster metadata from rpc calls");
  }
  if (remote.failover_version_increment != merged.failover_version_increment) {
    return InvalidConfig("Cannot add remote cluster due to failover version increment mismatch");
  }
  if (remote.history_shard_count <= 0) {
    return InvalidConfig("Remote cluster HistoryShardCount must be positive");
  }
  if (absl::Status s = CheckShardCounts(remote.history_shard_count, history_shard_count_);
      !s.ok()) {
    return InvalidConfig(s.message());
  }
  if (!remote.global_namespace_enabled) {
    return InvalidConfig("Cannot add remote cluster as global namespace is not supported");
  }
  for (const auto& [name, info] : merged.clusters) {
    if (name != remote.cluster_name &&
        info.initial_failover_version == remote.initial_failover_version) {
      return InvalidConfig("Cannot add remote cluster due to initial failover version conflict");
    }
  }
  // Temporal's ValidateClusterInformation of the new entry.
  if (remote.initial_failover_version <= 0) {
    return InvalidConfig(absl::StrFormat("cluster \"%s\": InitialFailoverVersion must be > 0, got %d",
                                         remote.cluster_name, remote.initial_failover_version));
  }
  if (remote.initial_failover_version >= merged.failover_version_increment) {
    return InvalidConfig(absl::StrFormat(
        "cluster \"%s\": InitialFailoverVersion (%d) must be < FailoverVersionIncrement (%d)",
        remote.cluster_name, remote.initial_failover_version,
        merged.failover_version_increment));
  }
  if (enabled && address.empty()) {
    return InvalidConfig(absl::StrFormat("cluster \"%s\": RPCAddress must not be empty when Enabled=true",
                                         remote.cluster_name));
  }
  return absl::OkStatus();
}

absl::Status ClusterRegistry::Upsert(const op::AddOrUpdateRemoteClusterRequest& req) {
  const std::string& address = req.frontend_address();
  if (address.empty() || address.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "frontend_address must be HOST:PORT of the remote cluster's frontend, at most ",
        kMaxNameLength, " characters"));
  }
  absl::StatusOr<RemoteDescription> remote = describe_(address);
  if (!remote.ok()) {
    std::string why(remote.status().message().substr(0, kMaxErrorEcho));
    return absl::UnavailableError(
        absl::StrCat("Unable connect to remote cluster ", address, " with error: ", why, "."));
  }
  std::lock_guard upsert(upsert_mu_);
  if (absl::Status s = Refresh(); !s.ok()) return s;
  if (absl::Status s = ValidateRemote(*remote, address, req.enable_remote_cluster_connection());
      !s.ok()) {
    return s;
  }
  persistence::RemoteClusterRecord record;
  record.set_name(remote->cluster_name);
  record.set_cluster_id(remote->cluster_id);
  record.set_address(address);
  record.set_http_address(req.frontend_http_address().empty()
                              ? remote->http_address
                              : req.frontend_http_address().substr(0, kMaxNameLength));
  record.set_history_shard_count(remote->history_shard_count);
  record.set_initial_failover_version(remote->initial_failover_version);
  record.set_failover_version_increment(remote->failover_version_increment);
  record.set_global_namespace_enabled(remote->global_namespace_enabled);
  record.set_connection_enabled(req.enable_remote_cluster_connection());
  record.set_replication_enabled(req.enable_replication());
  int64_t expected_version = 0;
  for (const persistence::StoredRemoteCluster& existing : Remotes()) {
    if (existing.record.name() != record.name()) continue;
    const auto& old = existing.record;
    // Temporal's immutable fields: the name now answers as another cluster.
    if (old.cluster_id() != record.cluster_id() ||
        old.history_shard_count() != record.history_shard_count() ||
        (old.global_namespace_enabled() && !record.global_namespace_enabled()) ||
        old.initial_failover_version() != record.initial_failover_version() ||
        old.failover_version_increment() != record.failover_version_increment()) {
      return absl::InvalidArgumentError("Unable to persist cluster info with error: <nil>.");
    }
    expected_version = existing.version;
  }
  if (absl::Status s = store_.SaveRemoteCluster(record, expected_version); !s.ok()) return s;
  return Refresh();
}

absl::Status ClusterRegistry::CheckUnreferenced(const std::string& name) const {
  const std::string current = current_cluster_name();
  std::string token;
  do {
    absl::StatusOr<persistence::NamespacePage> page =
        namespaces_.ListNamespaces(0, token, /*include_deleted=*/false);
    if (!page.ok()) return page.status();
    for (const persistence::NamespaceVersion& v : page->namespaces) {
      if (v.record.replication_config().clusters_size() < 2) continue;
      if (persistence::ListsCluster(v.record, current) &&
          persistence::ListsCluster(v.record, name)) {
        return absl::FailedPreconditionError(
            absl::StrCat("cannot remove cluster \"", name, "\": still referenced by namespace \"",
                         v.record.info().name(), "\""));
      }
    }
    token = page->next_page_token;
  } while (!token.empty());
  return absl::OkStatus();
}

absl::Status ClusterRegistry::Remove(const op::RemoveRemoteClusterRequest& req) {
  const std::string& name = req.cluster_name();
  std::lock_guard upsert(upsert_mu_);
  if (absl::Status s = Refresh(); !s.ok()) return s;
  const std::vector<persistence::StoredRemoteCluster> remotes = Remotes();
  const bool stored = std::any_of(remotes.begin(), remotes.end(),
                                  [&](const auto& r) { return r.record.name() == name; });
  if (!stored) {
    std::lock_guard lock(mu_);
    if (name == configured_.current_cluster_name) {
      return absl::InvalidArgumentError("Cannot delete current cluster metadata");
    }
    if (configured_.clusters.contains(name)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cluster \"", name,
          "\" is set in the server's configuration file (cluster_metadata.clusters); remove it "
          "there"));
    }
    return absl::NotFoundError("The cluster to be deleted cannot be found in clusters cache.");
  }
  if (absl::Status s = CheckUnreferenced(name); !s.ok()) return s;
  if (absl::Status s = store_.DeleteRemoteCluster(name); !s.ok() && !absl::IsNotFound(s)) return s;
  return Refresh();
}

absl::StatusOr<op::ListClustersResponse> ClusterRegistry::List(
    const op::ListClustersRequest& req) const {
  const int32_t page_size = req.page_size() > 0 ? req.page_size() : kDefaultListPageSize;
  const std::string& after = req.next_page_token();
  if (after.size() > kMaxNameLength) {
    return absl::InvalidArgumentError("next_page_token is not one this server gave out");
  }
  std::lock_guard lock(mu_);
  const admin::ClusterMetadata merged = MergedLocked();
  op::ListClustersResponse out;
  for (const auto& [name, info] : merged.clusters) {
    if (!after.empty() && name <= after) continue;
    if (out.clusters_size() == page_size) {
      out.set_next_page_token(out.clusters(page_size - 1).cluster_name());
      break;
    }
    op::ClusterMetadata* c = out.add_clusters();
    c->set_cluster_name(name);
    c->set_address(info.rpc_address);
    c->set_initial_failover_version(info.initial_failover_version);
    c->set_is_connection_enabled(info.enabled);
    c->set_is_replication_enabled(info.enabled && merged.enable_global_namespace);
    if (name == merged.current_cluster_name) {
      c->set_cluster_id(cluster_id_);
      c->set_history_shard_count(history_shard_count_);
      c->set_is_replication_enabled(merged.enable_global_namespace);
      continue;
    }
    for (const persistence::StoredRemoteCluster& r : remotes_) {
      if (r.record.name() != name) continue;
      c->set_cluster_id(r.record.cluster_id());
      c->set_http_address(r.record.http_address());
      c->set_history_shard_count(r.record.history_shard_count());
      c->set_is_replication_enabled(r.record.replication_enabled());
    }
  }
  return out;
}

}  // namespace tock::server::replication
