// Namespace domain logic of the frontend (SPEC §1, §2.1–2.2): validation in Temporal's
// order and with its exact messages, failover versioning, and the valid-time history.
// Testable without gRPC: requests and responses are the API messages.
//
// Thread safety: safe from many threads. Concurrent updates of one namespace are resolved
// by the store's expected-version check; Update applies a losing change again on top of
// the winner (its fields are relative to the current version).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/admin/archival_state.h"
#include "lib/admin/cluster_metadata.h"
#include "lib/common/clock.h"
#include "server-core/history/eager_dispatch.h"
#include "server-core/persistence/namespace_store.h"
#include "server-core/visibility/search_attributes.h"
#include "temporal/api/operatorservice/v1/request_response.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::server::namespaces {

namespace wf = temporal::api::workflowservice::v1;
namespace op = temporal::api::operatorservice::v1;

// What the cluster's archival configuration means for namespaces, per kind (SPEC §3).
struct ArchivalPolicy {
  bool cluster_enabled = false;  // when false, requests' archival fields are ignored
  admin::ArchivalStateEnum default_state = temporal::api::enums::v1::ARCHIVAL_STATE_DISABLED;
  std::string default_uri;
  // URI schemes with a configured provider ("file", "s3"); another scheme is refused.
  std::vector<std::string> schemes;

  // admin::NextArchivalSetting with this kind's default URI, then a new URI's scheme must
  // be one of `schemes`.
  absl::StatusOr<admin::ArchivalSetting> Next(const admin::ArchivalSetting& current,
                                              admin::ArchivalStateEnum state,
                                              const std::string& uri) const;
};
struct NamespaceArchivalPolicy {
  ArchivalPolicy history;
  ArchivalPolicy visibility;
};

// What a namespaced call does to the namespace's runs, schedules or batches: on a standby
// cluster (a global namespace active elsewhere) kWrite calls are refused, kRead calls are
// served. Every call that resolves a namespace says which it is (no default).
enum class NamespaceAccess { kRead, kWrite };

class NamespaceEngine : public visibility::SearchAttributeSchemas {
 public:
  NamespaceEngine(persistence::NamespaceStore& store, admin::ClusterMetadata cluster, Clock& clock)
      : store_(store),
        cluster_(std::make_shared<const admin::ClusterMetadata>(std::move(cluster))),
        clock_(clock) {}

  absl::StatusOr<wf::RegisterNamespaceResponse> Register(const wf::RegisterNamespaceRequest& req);
  absl::StatusOr<wf::DescribeNamespaceResponse> Describe(const wf::DescribeNamespaceRequest& req);
  absl::StatusOr<wf::ListNamespacesResponse> List(const wf::ListNamespacesRequest& req);
  absl::StatusOr<wf::UpdateNamespaceResponse> Update(const wf::UpdateNamespaceRequest& req);
  absl::StatusOr<wf::DeprecateNamespaceResponse> Deprecate(
      const wf::DeprecateNamespaceRequest& req);
  // Soft delete: the namespace becomes DELETED; nothing is removed.
  absl::StatusOr<op::DeleteNamespaceResponse> Delete(const op::DeleteNamespaceRequest& req);

  // Custom search attributes (namespace_search_attributes.cc): Temporal's OperatorService
  // calls over the namespace config's custom_search_attribute_aliases, with its messages.
  absl::StatusOr<op::AddSearchAttributesResponse> AddSearchAttributes(
      const op::AddSearchAttributesRequest& req);
  absl::StatusOr<op::RemoveSearchAttributesResponse> RemoveSearchAttributes(
      const op::RemoveSearchAttributesRequest& req);
  absl::StatusOr<op::ListSearchAttributesResponse> ListSearchAttributes(
      const op::ListSearchAttributesRequest& req);
  // visibility::SearchAttributeSchemas, for the history engine (an empty schema when the
  // namespace cannot be read).
  std::shared_ptr<const visibility::SearchAttributeSchema> ForNamespaceId(
      const std::string& namespace_id) override;
  // The same, with the store's error when the namespace cannot be read (after the store's
  // read retries): for a caller that must not take an empty schema for the namespace's
  // (a batch compiling its query).
  absl::StatusOr<std::shared_ptr<const visibility::SearchAttributeSchema>> SchemaForNamespaceId(
      const std::string& namespace_id);

  absl::StatusOr<tock::admin::v1::GetNamespaceHistoryResponse> History(
      const tock::admin::v1::GetNamespaceHistoryRequest& req);
  absl::StatusOr<tock::admin::v1::DescribeNamespaceAsOfResponse> DescribeAsOf(
      const tock::admin::v1::DescribeNamespaceAsOfRequest& req);

  // The namespace a workflow call addresses. NOT_FOUND for an unknown name;
  // FAILED_PRECONDITION (namespace invalid state) unless it is REGISTERED, or also
  // DEPRECATED when `allow_deprecated` (SPEC §1.2). A kWrite call on a global namespace
  // active in another cluster is refused with NamespaceNotActive (FAILED_PRECONDITION
  // `Namespace: NS is active in cluster: X, while current cluster Y is a standby cluster.`,
  // reference/replication.md §4.1); a kRead call is served on the standby (possibly
  // stale) and learns from `active_here` that it is one.
  struct Resolved {
    std::string id;
    std::string name;
    int64_t failover_version = 0;
    // The namespace's custom search attributes (never null).
    std::shared_ptr<const visibility::SearchAttributeSchema> search_attributes;
    bool is_global = false;
    std::string active_cluster;  // the replication config's active cluster
    // False for a global namespace active in another cluster (this one is a standby).
    bool active_here = true;
    // Replication state HANDOVER (set on this cluster, never replicated): a graceful
    // failover waits for the other cluster to catch up, and calls wait (HandoverGate).
    bool handover = false;
  };
  absl::StatusOr<Resolved> Resolve(const std::string& name, bool allow_deprecated,
                                   NamespaceAccess access);
  // How long a resolved namespace is used before it is read again: forever by default (this
  // engine sees every write), a few seconds when other hosts write to the same database.
  // Set once at start.
  void SetCacheLifetime(absl::Duration lifetime) { cache_lifetime_ = lifetime; }

  // Registers `name` with the defaults unless it exists (server start: "default" and the
  // configured namespaces).
  absl::Status EnsureRegistered(const std::string& name);

  // The clusters this one knows now: the configured ones and the connected remotes. A
  // snapshot: it stays valid while the set changes.
  std::shared_ptr<const admin::ClusterMetadata> cluster() const {
    std::lock_guard lock(cluster_mu_);
    return cluster_;
  }
  // Replaces the set (ClusterRegistry, when remotes are added, changed or removed).
  void SetCluster(admin::ClusterMetadata cluster) {
    auto next = std::make_shared<const admin::ClusterMetadata>(std::move(cluster));
    std::lock_guard lock(cluster_mu_);
    cluster_ = std::move(next);
  }

  // Applies a namespace change of another cluster (namespace_replication.cc, Temporal's
  // namespace replication task executor, reference/replication.md §2.3): creates the
  // namespace when this cluster is one of its clusters; otherwise replaces its configuration
  // when `incoming` has a higher config version and its active cluster when it has a higher
  // failover version; anything else changes nothing (so a duplicate or late task is
  // harmless). Writes straight to the store with a replicated operation, which other
  // clusters do not pull again. INVALID_ARGUMENT for a malformed record or a name bound to
  // another id here. Returns whether anything was written.
  absl::StatusOr<bool> ApplyReplicated(const persistence::NamespaceRecord& incoming,
                                       const std::string& source_operation);

  // Whether runs of the namespace with this id that close now are queued for archival: the
  // cluster and the namespace archive histories or visibility records. False for an unknown
  // id. Cached until the next namespace change.
  bool ArchivesById(const std::string& namespace_id);

  // Set once at start, before requests arrive.
  void SetArchivalPolicy(NamespaceArchivalPolicy policy) { archival_ = std::move(policy); }
  // Where starts get their first workflow task eagerly (the namespaces' capability).
  void SetEagerWorkflowStart(history::EagerSwitch eager) { eager_workflow_start_ = std::move(eager); }
  const NamespaceArchivalPolicy& archival_policy() const { return archival_; }

  // The address of the current cluster once the server is bound (a server configured without
  // cluster metadata on port 0 learns it only then). Call before any request can arrive:
  // nobody can know a port 0 address before the banner prints it.
  void SetCurrentClusterAddress(const std::string& address) {
    admin::ClusterMetadata next = *cluster();
    next.clusters[next.current_cluster_name].rpc_address = address;
    SetCluster(std::move(next));
  }

 private:
  absl::Status ValidateReplication(const std::string& active,
                                   const google::protobuf::RepeatedPtrField<std::string>& clusters,
                                   bool is_global) const;
  // Appends `record` as the next version after `current`; the operation names the change.
  absl::StatusOr<persistence::NamespaceVersion> Append(const persistence::NamespaceVersion& current,
                                                       persistence::NamespaceRecord record,
                                                       const std::string& operation);
  // One attempt of Update: ABORTED when another change was stored in between.
  absl::StatusOr<wf::UpdateNamespaceResponse> UpdateOnce(const wf::UpdateNamespaceRequest& req);
  // Checks an updated record as a whole, after its parts: a global (or promoted) namespace
  // needs global namespaces enabled here, its clusters must be valid for its kind, and a
  // failover of a global namespace may not come with other changes.
  absl::Status ValidateUpdated(
      const std::string& namespace_name, const admin::ClusterMetadata& cluster,
      const temporal::api::replication::v1::NamespaceReplicationConfig& replication, bool is_global,
      bool failover_with_other_changes) const;
  absl::StatusOr<persistence::NamespaceVersion> SetState(const std::string& name, int state,
                                                         const std::string& operation);

  persistence::NamespaceStore& store_;
  mutable std::mutex cluster_mu_;
  std::shared_ptr<const admin::ClusterMetadata> cluster_;  // guarded by cluster_mu_
  NamespaceArchivalPolicy archival_;
  history::EagerSwitch eager_workflow_start_;
  bool EagerStartIn(const persistence::NamespaceRecord& record) const {
    return eager_workflow_start_.On(record.info().name());
  }
  Clock& clock_;

  // Current versions of recently used namespaces, for Resolve on every workflow call. Every
  // write through this engine clears the cache; with one host that is every write, so it is
  // never stale. Hosts sharing a database also write: entries then live cache_lifetime_.
  struct CachedVersion {
    persistence::NamespaceVersion version;
    absl::Time loaded;
    std::shared_ptr<const visibility::SearchAttributeSchema> schema;
  };
  struct CachedSchema {
    std::shared_ptr<const visibility::SearchAttributeSchema> schema;
    absl::Time loaded;
  };
  struct CachedArchives {
    bool archives = false;
    absl::Time loaded;
  };
  bool Fresh(absl::Time loaded) const { return clock_.Now() - loaded < cache_lifetime_; }
  absl::Duration cache_lifetime_ = absl::InfiniteDuration();
  std::mutex cache_mu_;
  std::unordered_map<std::string, CachedVersion> cache_;
  std::unordered_map<std::string, CachedArchives> archives_by_id_;
  std::unordered_map<std::string, CachedSchema> schemas_by_id_;
  // Applies `change` to the current config's aliases of `namespace_name` and appends the
  // result as a new version (retried when another change won the race); nothing is written
  // when `change` leaves the aliases as they were.
  absl::Status ChangeSearchAttributes(
      const std::string& namespace_name, const std::string& operation,
      const std::function<absl::Status(persistence::NamespaceRecord&)>& change);
  void ForgetCached();
};

// The API view of a stored namespace version; `eager_workflow_start` is its capability.
wf::DescribeNamespaceResponse ToDescribeResponse(const persistence::NamespaceRecord& record,
                                               bool eager_workflow_start);

}  // namespace tock::server::namespaces
