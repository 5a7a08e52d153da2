// Applying another cluster's namespace change (Temporal's namespace replication task
// executor, reference/replication.md §2.3). Every rule compares versions, so applying a task
// twice, late or out of order changes nothing: the receiver keeps whichever is newer.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/namespaces/namespace_name.h"
#include "server-core/persistence/replication_store.h"

namespace tock::server::namespaces {
namespace {

using temporal::api::enums::v1::NAMESPACE_STATE_DEPRECATED;
using temporal::api::enums::v1::NAMESPACE_STATE_REGISTERED;

constexpr int kAttempts = 5;  // appends that lost a race with a local change, tried again

absl::Status ValidateIncoming(const persistence::NamespaceRecord& r) {
  if (!r.has_info()) return absl::InvalidArgumentError("invalid namespace info attribute");
  if (r.info().id().empty()) return absl::InvalidArgumentError("invalid namespace ID attribute");
  if (!r.has_config()) return absl::InvalidArgumentError("invalid namespace config attribute");
  if (!r.has_replication_config()) {
    return absl::InvalidArgumentError("invalid namespace replication config attribute");
  }
  return ValidateNamespaceName(r.info().name());
}

absl::Status Collision() {
  return absl::InvalidArgumentError("namespace replication encountered name / UUID collision");
}

}  // namespace

absl::StatusOr<bool> NamespaceEngine::ApplyReplicated(const persistence::NamespaceRecord& incoming,
                                                      const std::string& source_operation) {
  if (absl::Status s = ValidateIncoming(incoming); !s.ok()) return s;
  const std::string operation =
      absl::StrCat(persistence::kReplicatedOperationPrefix, source_operation);
  const std::string& name = incoming.info().name();
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    absl::StatusOr<persistence::NamespaceVersion> local = store_.GetNamespaceByName(name);
    if (absl::IsNotFound(local.status())) {
      // Temporal's default admitter: only namespaces that name this cluster come here.
      if (!persistence::ListsCluster(incoming, cluster()->current_cluster_name)) return false;
      const auto state = incoming.info().state();
      if (state != NAMESPACE_STATE_REGISTERED && state != NAMESPACE_STATE_DEPRECATED) {
        return absl::InvalidArgumentError("invalid namespace state attribute");
      }
      persistence::NamespaceRecord record = incoming;
      record.set_is_global_namespace(true);
      absl::StatusOr<persistence::NamespaceVersion> created =
          store_.CreateNamespace(record, clock_.Now(), operation);
      ForgetCached();
      if (created.ok()) return true;
      if (!absl::IsAlreadyExists(created.status())) return created.status();
      // Created meanwhile (the same task applied by another host), or a clash.
      absl::StatusOr<persistence::NamespaceVersion> by_id =
          store_.GetNamespaceById(incoming.info().id());
      if (!by_id.ok() || by_id->record.info().name() != name) return Collision();
      continue;  // compare versions with what is there
    }
    if (!local.ok()) return local.status();
    if (local->record.info().id() != incoming.info().id()) return Collision();

    persistence::NamespaceRecord record = local->record;
    bool changed = false;
    if (record.config_version() < incoming.config_version()) {
      *record.mutable_info() = incoming.info();
      *record.mutable_config() = incoming.config();
      *record.mutable_replication_config()->mutable_clusters() =
          incoming.replication_config().clusters();
      *record.mutable_used_search_attribute_fields() = incoming.used_search_attribute_fields();
      record.set_config_version(incoming.config_version());
      changed = true;
    }
    if (record.failover_version() < incoming.failover_version()) {
      record.mutable_replication_config()->set_active_cluster_name(
          incoming.replication_config().active_cluster_name());
      // HANDOVER belongs to the cluster that set it (Temporal never replicates it, only
      // NORMAL): a failover that arrives here leaves this cluster NORMAL.
      record.mutable_replication_config()->set_state(
          temporal::api::enums::v1::REPLICATION_STATE_NORMAL);
      record.set_failover_version(incoming.failover_version());
      *record.mutable_failover_history() = incoming.failover_history();
      changed = true;
    }
    if (!changed) return false;
    absl::StatusOr<persistence::NamespaceVersion> appended =
        store_.AppendNamespaceVersion(record, local->version, operation, clock_.Now());
    ForgetCached();
    if (appended.ok()) return true;
    if (!absl::IsAborted(appended.status())) return appended.status();
  }
  return absl::AbortedError(
      absl::StrCat("namespace ", name, " kept changing while a replicated change was applied"));
}

}  // namespace tock::server::namespaces
