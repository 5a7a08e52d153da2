#include "server-core/replication/namespace_activity.h"

namespace tock::server::replication {

history::HistoryEngine::NamespaceActivity NamespaceActivity::Of(const std::string& namespace_id) {
  const absl::Time now = clock_.Now();
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(namespace_id);
    if (it != cache_.end() && now - it->second.loaded < kLifetime) return it->second.activity;
  }
  history::HistoryEngine::NamespaceActivity activity;
  absl::StatusOr<persistence::NamespaceVersion> ns = store_.GetNamespaceById(namespace_id);
  if (!ns.ok() && !absl::IsNotFound(ns.status())) {
    activity.active = false;  // fail closed, and read again next time (header)
    activity.unknown = true;
    return activity;
  }
  if (ns.ok() && ns->record.is_global_namespace()) {
    const auto cluster = engine_.cluster();
    activity.failover_version = ns->record.failover_version();
    activity.active = cluster->IsActiveFor(activity.failover_version);
    activity.version_increment = cluster->failover_version_increment;
    activity.name = ns->record.info().name();
    activity.active_cluster = ns->record.replication_config().active_cluster_name();
    activity.current_cluster = cluster->current_cluster_name;
    activity.handover = ns->record.replication_config().state() ==
                        temporal::api::enums::v1::REPLICATION_STATE_HANDOVER;
  }
  std::lock_guard lock(mu_);
  if (cache_.size() > 10000) cache_.clear();
  cache_[namespace_id] = Cached{activity, now};
  return activity;
}

}  // namespace tock::server::replication
