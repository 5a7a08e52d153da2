#include "server-core/namespaces/namespace_engine.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/admin/retention.h"
#include "lib/archival/archival_uri.h"
#include "lib/common/ids.h"
#include "lib/common/proto_time.h"
#include "lib/common/status.h"
#include "lib/common/time_format.h"
#include "server-core/namespaces/namespace_name.h"
#include "server-core/persistence/read_retry.h"

namespace tock::server::namespaces {
namespace {

using temporal::api::enums::v1::NAMESPACE_STATE_DELETED;
using temporal::api::enums::v1::NAMESPACE_STATE_DEPRECATED;
using temporal::api::enums::v1::NAMESPACE_STATE_REGISTERED;
using temporal::api::enums::v1::NAMESPACE_STATE_UNSPECIFIED;
using temporal::api::enums::v1::NamespaceState;
using temporal::api::enums::v1::REPLICATION_STATE_HANDOVER;
using temporal::api::enums::v1::REPLICATION_STATE_UNSPECIFIED;

constexpr int kMaxFailoverHistory = 10;
constexpr char kNotMasterMessage[] =
    "Cluster is not master cluster, cannot do namespace registration or namespace update.";

absl::Status ValidateStateTransition(NamespaceState from, NamespaceState to) {
  bool allowed = (from == NAMESPACE_STATE_REGISTERED &&
                  (to == NAMESPACE_STATE_DEPRECATED || to == NAMESPACE_STATE_DELETED)) ||
                 (from == NAMESPACE_STATE_DEPRECATED && to == NAMESPACE_STATE_DELETED);
  if (!allowed) return absl::InvalidArgumentError("Invalid namespace state update.");
  return absl::OkStatus();
}

// Temporal's validateReplicationStateUpdate (service/frontend/namespace_handler.go), with its
// messages: a replication state changes only on a REGISTERED namespace; HANDOVER needs a
// global namespace of at least two clusters (those of the request when it names them).
absl::Status ValidateReplicationStateUpdate(
    const persistence::NamespaceRecord& existing,
    const temporal::api::replication::v1::NamespaceReplicationConfig& update) {
  const NamespaceState state = existing.info().state();
  if (state != NAMESPACE_STATE_REGISTERED) {
    return absl::InvalidArgumentError(
        absl::StrCat("update ReplicationState is only supported when namespace is in "
                     "NAMESPACE_STATE_REGISTERED state, current state: ",
                     temporal::api::enums::v1::NamespaceState_Name(state)));
  }
  if (update.state() == REPLICATION_STATE_HANDOVER) {
    if (!existing.is_global_namespace()) {
      return absl::InvalidArgumentError(
          "REPLICATION_STATE_HANDOVER can only be set for global namespace");
    }
    const int clusters = update.clusters_size() > 0 ? update.clusters_size()
                                                    : existing.replication_config().clusters_size();
    if (clusters < 2) {
      return absl::InvalidArgumentError(
          "REPLICATION_STATE_HANDOVER require more than one replication clusters");
    }
  }
  return absl::OkStatus();
}

void AppendFailover(persistence::NamespaceRecord& record, absl::Time now) {
  auto* history = record.mutable_failover_history();
  if (!history->empty() &&
      history->at(history->size() - 1).failover_version() == record.failover_version()) {
    return;
  }
  auto* entry = history->Add();
  *entry->mutable_failover_time() = ToProtoTime(now);
  entry->set_failover_version(record.failover_version());
  if (history->size() > kMaxFailoverHistory) {
    history->DeleteSubrange(0, history->size() - kMaxFailoverHistory);
  }
}

tock::admin::v1::NamespaceVersion ToApiVersion(const persistence::NamespaceVersion& v) {
  tock::admin::v1::NamespaceVersion out;
  out.set_version(v.version);
  *out.mutable_valid_from() = ToProtoTime(v.valid_from);
  if (v.valid_to.has_value()) *out.mutable_valid_to() = ToProtoTime(*v.valid_to);
  out.set_operation(v.operation);
  *out.mutable_record() = v.record;
  return out;
}

}  // namespace

// What every namespace of this server supports (shown by DescribeNamespace, not stored).
// Every field, each true exactly when Tock does what it names: core SDK workers act on them
// (reference/api_2026.md §1.1). Next to each, the test of the behaviour; the whole set is
// pinned by grpc_server_test.cc GrpcServerTest.CapabilitiesSayExactlyWhatTockDoes, and
// what the false ones name is checked absent by FalseCapabilitiesNameWhatTockDoesNotServe.
static void SetCapabilities(temporal::api::namespace_::v1::NamespaceInfo& info,
                            bool eager_workflow_start) {
  info.set_supports_schedules(true);
  auto* caps = info.mutable_capabilities();
  // The first workflow task handed back in the start's answer when asked, unless the
  // namespace is configured not to (history.eager_workflow_start): tests/sdk/eager.test.mjs,
  // grpc_server_test.cc GrpcServerTest.AnEagerStartHandsBackTheFirstWorkflowTask.
  caps->set_eager_workflow_start(eager_workflow_start);
  // UpdateWorkflowExecution waited for until COMPLETED, or until ACCEPTED and then polled:
  // tests/sdk/updates.test.mjs, history_engine_test.cc EngineFixture.*Update*.
  caps->set_sync_update(true);
  caps->set_async_update(true);
  // RecordWorkerHeartbeat is kept and ListWorkers/CountWorkers/DescribeWorker read it
  // (matching/worker_registry.h): grpc_server_test.cc
  // GrpcServerTest.WorkersHeartbeatAndAreListedCountedAndDescribed, tests/sdk/workers.test.mjs.
  caps->set_worker_heartbeats(true);
  caps->set_reported_problems_search_attribute(false);  // no TemporalReportedProblems
  caps->set_workflow_pause(false);         // Pause/UnpauseWorkflowExecution are not served
  caps->set_standalone_activities(false);  // *ActivityExecution are not served
  // ShutdownWorker ends the worker's waiting polls with empty answers, and its later polls
  // get nothing (matching_engine.h ReleaseWorkerPolls); stopping the server ends every poll
  // the same way (ReleasePolls); no task is handed to a poll so ended: grpc_server_test.cc
  // GrpcServerTest.ShutdownWorkerEndsTheWorkersPollsAndLosesNoTask and
  // GrpcServerTest.StoppingTheServerEndsWaitingPollsPromptly.
  caps->set_worker_poll_complete_on_shutdown(true);
  caps->set_poller_autoscaling(false);  // polls carry no poller scaling decision
  caps->set_worker_commands(false);     // no worker-commands task queues
  caps->set_standalone_nexus_operation(false);
  caps->set_workflow_update_callbacks(false);  // updates take no completion callbacks
  caps->set_poller_autoscaling_auto_enroll(false);
  caps->set_workflow_task_completion_pagination(false);  // one RespondWorkflowTaskCompleted
  caps->set_standalone_activity_start_delay(false);
  caps->set_standalone_activity_batch_operations(false);
  caps->set_standalone_activity_operator_commands(false);
}

wf::DescribeNamespaceResponse ToDescribeResponse(const persistence::NamespaceRecord& record,
                                               bool eager_workflow_start) {
  wf::DescribeNamespaceResponse out;
  *out.mutable_namespace_info() = record.info();
  SetCapabilities(*out.mutable_namespace_info(), eager_workflow_start);
  *out.mutable_config() = record.config();
  *out.mutable_replication_config() = record.replication_config();
  out.set_failover_version(record.failover_version());
  out.set_is_global_namespace(record.is_global_namespace());
  *out.mutable_failover_history() = record.failover_history();
  return out;
}

absl::Status NamespaceEngine::ValidateReplication(
    const std::string& active, const google::protobuf::RepeatedPtrField<std::string>& clusters,
    bool is_global) const {
  const std::shared_ptr<const admin::ClusterMetadata> cluster = this->cluster();
  auto known = [&](const std::string& name) {
    auto it = cluster->clusters.find(name);
    return it != cluster->clusters.end() && it->second.enabled;
  };
  if (!known(active))
    return absl::InvalidArgumentError(absl::StrCat("Invalid cluster name: ", active));
  for (const std::string& name : clusters) {
    if (!known(name))
      return absl::InvalidArgumentError(absl::StrCat("Invalid cluster name: ", name));
  }
  if (is_global) {
    if (std::find(clusters.begin(), clusters.end(), active) == clusters.end()) {
      return absl::InvalidArgumentError("Active cluster is not contained in all clusters.");
    }
  } else {
    if (active != cluster->current_cluster_name) {
      return absl::InvalidArgumentError("Invalid local namespace active cluster");
    }
    if (clusters.size() != 1 || clusters[0] != active) {
      return absl::InvalidArgumentError("Invalid local namespace clusters");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<admin::ArchivalSetting> ArchivalPolicy::Next(const admin::ArchivalSetting& current,
                                                            admin::ArchivalStateEnum state,
                                                            const std::string& uri) const {
  absl::StatusOr<admin::ArchivalSetting> next =
      admin::NextArchivalSetting(current, {state, uri, default_uri});
  if (!next.ok() || next->uri.empty() || next->uri == current.uri) return next;
  // NextArchivalSetting has validated the URI.
  const std::string scheme = archival::ParseArchivalUri(next->uri)->scheme;
  if (std::find(schemes.begin(), schemes.end(), scheme) == schemes.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unable to find archiver config for the given scheme \"", scheme, "\" of ",
                     next->uri, "; this cluster archives to: ", absl::StrJoin(schemes, ", ")));
  }
  return next;
}

namespace {

// A namespace config's archival setting of one kind (history or visibility), and back.
admin::ArchivalSetting ArchivalOf(const temporal::api::namespace_::v1::NamespaceConfig& c,
                                  bool history) {
  return history
             ? admin::ArchivalSetting{c.history_archival_state(), c.history_archival_uri()}
             : admin::ArchivalSetting{c.visibility_archival_state(), c.visibility_archival_uri()};
}

void SetArchivalOf(temporal::api::namespace_::v1::NamespaceConfig& c, bool history,
                   const admin::ArchivalSetting& s) {
  if (history) {
    c.set_history_archival_state(s.state);
    c.set_history_archival_uri(s.uri);
  } else {
    c.set_visibility_archival_state(s.state);
    c.set_visibility_archival_uri(s.uri);
  }
}

}  // namespace

absl::StatusOr<wf::RegisterNamespaceResponse> NamespaceEngine::Register(
    const wf::RegisterNamespaceRequest& req) {
  if (absl::Status s = ValidateNamespaceName(req.namespace_()); !s.ok()) return s;
  const std::shared_ptr<const admin::ClusterMetadata> cluster = this->cluster();
  const bool is_global = req.is_global_namespace();
  if (is_global && !cluster->enable_global_namespace) {
    return absl::InvalidArgumentError("Cannot register global namespace when not enabled");
  }
  if (is_global && !cluster->IsMasterCluster())
    return absl::InvalidArgumentError(kNotMasterMessage);

  std::optional<absl::Duration> requested;
  if (req.has_workflow_execution_retention_period()) {
    requested = FromProtoDuration(req.workflow_execution_retention_period());
  }
  absl::StatusOr<absl::Duration> retention = admin::ResolveRetention(requested);
  if (!retention.ok()) return retention.status();

  if (store_.GetNamespaceByName(req.namespace_()).ok()) return tock::NamespaceAlreadyExistsError();

  const std::string active =
      req.active_cluster_name().empty() ? cluster->current_cluster_name : req.active_cluster_name();
  google::protobuf::RepeatedPtrField<std::string> clusters;
  for (const auto& c : req.clusters()) clusters.Add()->assign(c.cluster_name());
  if (clusters.empty()) clusters.Add()->assign(active);
  if (absl::Status s = ValidateReplication(active, clusters, is_global); !s.ok()) return s;

  const absl::Time now = clock_.Now();
  persistence::NamespaceRecord record;
  auto* info = record.mutable_info();
  info->set_name(req.namespace_());
  info->set_id(NewUuid());
  info->set_state(NAMESPACE_STATE_REGISTERED);
  info->set_description(req.description());
  info->set_owner_email(req.owner_email());
  *info->mutable_data() = req.data();
  auto* config = record.mutable_config();
  *config->mutable_workflow_execution_retention_ttl() = ToProtoDuration(*retention);
  // Archival: the cluster's defaults fill what the request leaves unspecified; a cluster
  // not configured for a kind stores it disabled, whatever the request says.
  for (bool history : {true, false}) {
    const ArchivalPolicy& policy = history ? archival_.history : archival_.visibility;
    admin::ArchivalSetting setting;
    if (policy.cluster_enabled) {
      admin::ArchivalStateEnum state =
          history ? req.history_archival_state() : req.visibility_archival_state();
      if (state == temporal::api::enums::v1::ARCHIVAL_STATE_UNSPECIFIED)
        state = policy.default_state;
      absl::StatusOr<admin::ArchivalSetting> next = policy.Next(
          setting, state, history ? req.history_archival_uri() : req.visibility_archival_uri());
      if (!next.ok()) return next.status();
      setting = *next;
    }
    SetArchivalOf(*config, history, setting);
  }
  auto* replication = record.mutable_replication_config();
  replication->set_active_cluster_name(active);
  for (const std::string& c : clusters) replication->add_clusters()->set_cluster_name(c);
  replication->set_state(temporal::api::enums::v1::REPLICATION_STATE_NORMAL);
  record.set_is_global_namespace(is_global);
  record.set_failover_version(is_global ? cluster->NextFailoverVersion(active, 0) : 0);
  if (is_global) AppendFailover(record, now);

  absl::StatusOr<persistence::NamespaceVersion> created = store_.CreateNamespace(record, now);
  ForgetCached();
  if (!created.ok()) return created.status();
  return wf::RegisterNamespaceResponse();
}

absl::StatusOr<wf::DescribeNamespaceResponse> NamespaceEngine::Describe(
    const wf::DescribeNamespaceRequest& req) {
  if (!req.namespace_().empty() && !req.id().empty()) {
    return absl::InvalidArgumentError(
        "GetNamespace operation failed. Both ID and Name specified in request.");
  }
  absl::StatusOr<persistence::NamespaceVersion> current;
  if (!req.id().empty()) {
    current = persistence::ReadWithRetries([&] { return store_.GetNamespaceById(req.id()); });
  } else {
    if (absl::Status s = ValidateNamespaceName(req.namespace_()); !s.ok()) return s;
    current =
        persistence::ReadWithRetries([&] { return store_.GetNamespaceByName(req.namespace_()); });
  }
  if (!current.ok()) return current.status();
  return ToDescribeResponse(current->record, EagerStartIn(current->record));
}

absl::StatusOr<wf::ListNamespacesResponse> NamespaceEngine::List(
    const wf::ListNamespacesRequest& req) {
  absl::StatusOr<persistence::NamespacePage> page = store_.ListNamespaces(
      req.page_size(), req.next_page_token(), req.namespace_filter().include_deleted());
  if (!page.ok()) return page.status();
  wf::ListNamespacesResponse out;
  for (const auto& v : page->namespaces) *out.add_namespaces() = ToDescribeResponse(v.record, EagerStartIn(v.record));
  out.set_next_page_token(page->next_page_token);
  return out;
}

absl::StatusOr<wf::UpdateNamespaceResponse> NamespaceEngine::Update(
    const wf::UpdateNamespaceRequest& req) {
  // An update is a change relative to the current version (data is merged), so one that lost
  // a race with another update is applied again on top of the winner rather than refused.
  absl::StatusOr<wf::UpdateNamespaceResponse> result;
  for (int attempt = 0; attempt < 20; ++attempt) {
    result = UpdateOnce(req);
    if (result.ok() || result.status().code() != absl::StatusCode::kAborted) break;
  }
  return result;
}

namespace {

// What an update has changed so far in its copy of the record: it decides whether a new
// version is stored and what that version is called.
struct UpdateChange {
  bool configuration = false;   // takes the next config version
  bool active_cluster = false;  // a failover: takes the next failover version
  std::string operation = "update";
};

// The info part of an update: description, owner email and data entries are set when given
// and different; a state change must be an allowed transition, and none is allowed during a
// handover.
absl::Status ApplyInfoUpdate(const temporal::api::namespace_::v1::UpdateNamespaceInfo& update,
                             persistence::NamespaceRecord& record, UpdateChange& change) {
  auto* info = record.mutable_info();
  if (!update.description().empty() && update.description() != info->description()) {
    info->set_description(update.description());
    change.configuration = true;
  }
  if (!update.owner_email().empty() && update.owner_email() != info->owner_email()) {
    info->set_owner_email(update.owner_email());
    change.configuration = true;
  }
  for (const auto& [key, value] : update.data()) {
    auto it = info->data().find(key);
    if (it == info->data().end() || it->second != value) {
      (*info->mutable_data())[key] = value;
      change.configuration = true;
    }
  }
  if (update.state() != NAMESPACE_STATE_UNSPECIFIED && update.state() != info->state()) {
    if (record.replication_config().state() == REPLICATION_STATE_HANDOVER) {
      return absl::InvalidArgumentError(
          "cannot update namespace state while its replication state in "
          "REPLICATION_STATE_HANDOVER");
    }
    if (absl::Status s = ValidateStateTransition(info->state(), update.state()); !s.ok()) {
      return s;
    }
    info->set_state(update.state());
    change.operation = update.state() == NAMESPACE_STATE_DELETED ? "delete" : "deprecate";
    change.configuration = true;
  }
  return absl::OkStatus();
}

// The config part of an update: the retention (validated) and, for each kind this cluster
// archives, the archival setting its policy gives.
absl::Status ApplyConfigUpdate(const temporal::api::namespace_::v1::NamespaceConfig& update,
                               const NamespaceArchivalPolicy& archival,
                               persistence::NamespaceRecord& record, UpdateChange& change) {
  if (update.has_workflow_execution_retention_ttl()) {
    absl::Duration retention = FromProtoDuration(update.workflow_execution_retention_ttl());
    if (absl::Status s = admin::ValidateRetention(retention); !s.ok()) return s;
    if (retention != FromProtoDuration(record.config().workflow_execution_retention_ttl())) {
      *record.mutable_config()->mutable_workflow_execution_retention_ttl() =
          ToProtoDuration(retention);
      change.configuration = true;
    }
  }
  for (bool history : {true, false}) {
    const ArchivalPolicy& policy = history ? archival.history : archival.visibility;
    if (!policy.cluster_enabled) continue;  // ignored, as Temporal does
    const admin::ArchivalSetting current = ArchivalOf(record.config(), history);
    const admin::ArchivalSetting asked = ArchivalOf(update, history);
    absl::StatusOr<admin::ArchivalSetting> next = policy.Next(current, asked.state, asked.uri);
    if (!next.ok()) return next.status();
    if (*next == current) continue;
    change.configuration = true;
    SetArchivalOf(*record.mutable_config(), history, *next);
  }
  return absl::OkStatus();
}

// The replication part of an update: the cluster list (when its names differ), the
// replication state (checked against the stored record, not the partly updated copy) and
// the active cluster, whose change is a failover and sets the state back to NORMAL.
absl::Status ApplyReplicationUpdate(
    const temporal::api::replication::v1::NamespaceReplicationConfig& update,
    const persistence::NamespaceRecord& stored, persistence::NamespaceRecord& record,
    UpdateChange& change) {
  auto* replication = record.mutable_replication_config();
  if (!update.clusters().empty()) {
    google::protobuf::RepeatedPtrField<temporal::api::replication::v1::ClusterReplicationConfig>
        clusters = update.clusters();
    auto names = [](const auto& list) {
      std::vector<std::string> out;
      for (const auto& c : list) out.push_back(c.cluster_name());
      return out;
    };
    if (names(clusters) != names(replication->clusters())) {
      *replication->mutable_clusters() = clusters;
      change.configuration = true;
    }
  }
  if (update.state() != REPLICATION_STATE_UNSPECIFIED && update.state() != replication->state()) {
    if (absl::Status s = ValidateReplicationStateUpdate(stored, update); !s.ok()) return s;
    replication->set_state(update.state());
    change.configuration = true;
  }
  if (!update.active_cluster_name().empty() &&
      update.active_cluster_name() != replication->active_cluster_name()) {
    replication->set_active_cluster_name(update.active_cluster_name());
    replication->set_state(temporal::api::enums::v1::REPLICATION_STATE_NORMAL);
    change.active_cluster = true;
  }
  return absl::OkStatus();
}

// Readies the updated record to be stored as the next version and returns the operation
// that names it: a promotion makes the namespace global; a promotion or a failover of a
// global namespace takes the next failover version of its (new) active cluster; a
// configuration change takes the next config version.
std::string PrepareNextVersion(const admin::ClusterMetadata& cluster, bool needs_promotion,
                               bool is_global, const UpdateChange& change,
                               persistence::NamespaceRecord& record) {
  std::string operation = change.operation;
  if (needs_promotion) {
    record.set_is_global_namespace(true);
    operation = "promote";
  }
  if ((needs_promotion || change.active_cluster) && is_global) {
    record.set_failover_version(cluster.NextFailoverVersion(
        record.replication_config().active_cluster_name(), record.failover_version()));
    if (change.active_cluster) operation = "failover";
  }
  if (change.configuration) record.set_config_version(record.config_version() + 1);
  return operation;
}

wf::UpdateNamespaceResponse ToUpdateResponse(const persistence::NamespaceRecord& record,
                                             bool eager_workflow_start) {
  wf::UpdateNamespaceResponse out;
  *out.mutable_namespace_info() = record.info();
  SetCapabilities(*out.mutable_namespace_info(), eager_workflow_start);
  *out.mutable_config() = record.config();
  *out.mutable_replication_config() = record.replication_config();
  out.set_failover_version(record.failover_version());
  out.set_is_global_namespace(record.is_global_namespace());
  return out;
}

}  // namespace

absl::StatusOr<wf::UpdateNamespaceResponse> NamespaceEngine::UpdateOnce(
    const wf::UpdateNamespaceRequest& req) {
  const std::shared_ptr<const admin::ClusterMetadata> cluster = this->cluster();
  if (absl::Status s = ValidateNamespaceName(req.namespace_()); !s.ok()) return s;
  absl::StatusOr<persistence::NamespaceVersion> current =
      store_.GetNamespaceByName(req.namespace_());
  if (!current.ok()) return current.status();

  // Each part of the request is applied to a copy of the stored record; the first invalid
  // part ends the update with nothing written.
  persistence::NamespaceRecord record = current->record;
  const bool needs_promotion = !record.is_global_namespace() && req.promote_namespace();
  const bool is_global = record.is_global_namespace() || req.promote_namespace();
  UpdateChange change;
  if (req.has_update_info()) {
    if (absl::Status s = ApplyInfoUpdate(req.update_info(), record, change); !s.ok()) return s;
  }
  if (req.has_config()) {
    if (absl::Status s = ApplyConfigUpdate(req.config(), archival_, record, change); !s.ok()) {
      return s;
    }
  }
  if (req.has_replication_config()) {
    if (absl::Status s =
            ApplyReplicationUpdate(req.replication_config(), current->record, record, change);
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = ValidateUpdated(req.namespace_(), *cluster, record.replication_config(),
                                       is_global, change.configuration && change.active_cluster);
      !s.ok()) {
    return s;
  }

  // Only a change or a promotion appends a version; otherwise the answer is the stored one.
  const persistence::NamespaceRecord* result = &current->record;
  absl::StatusOr<persistence::NamespaceVersion> appended;
  if (change.configuration || change.active_cluster || needs_promotion) {
    const std::string operation =
        PrepareNextVersion(*cluster, needs_promotion, is_global, change, record);
    appended = Append(*current, std::move(record), operation);
    if (!appended.ok()) return appended.status();
    result = &appended->record;
  }
  return ToUpdateResponse(*result, EagerStartIn(*result));
}

absl::Status NamespaceEngine::ValidateUpdated(
    const std::string& namespace_name, const admin::ClusterMetadata& cluster,
    const temporal::api::replication::v1::NamespaceReplicationConfig& replication, bool is_global,
    bool failover_with_other_changes) const {
  if (is_global && !cluster.enable_global_namespace) {
    return absl::InvalidArgumentError(absl::StrCat(
        "global namespace is not enabled on this cluster, cannot update global namespace or "
        "promote local namespace: ",
        namespace_name));
  }
  google::protobuf::RepeatedPtrField<std::string> cluster_names;
  for (const auto& c : replication.clusters()) cluster_names.Add()->assign(c.cluster_name());
  if (absl::Status s =
          ValidateReplication(replication.active_cluster_name(), cluster_names, is_global);
      !s.ok()) {
    return s;
  }
  if (failover_with_other_changes && is_global) {
    return absl::InvalidArgumentError(
        "Cannot set active cluster to current cluster when other parameters are set.");
  }
  return absl::OkStatus();
}

absl::StatusOr<persistence::NamespaceVersion> NamespaceEngine::Append(
    const persistence::NamespaceVersion& current, persistence::NamespaceRecord record,
    const std::string& operation) {
  const absl::Time now = clock_.Now();
  if (record.is_global_namespace()) AppendFailover(record, now);
  auto appended = store_.AppendNamespaceVersion(record, current.version, operation, now);
  ForgetCached();
  return appended;
}

absl::StatusOr<persistence::NamespaceVersion> NamespaceEngine::SetState(
    const std::string& name, int state, const std::string& operation) {
  if (absl::Status s = ValidateNamespaceName(name); !s.ok()) return s;
  absl::StatusOr<persistence::NamespaceVersion> current = store_.GetNamespaceByName(name);
  if (!current.ok()) return current.status();
  auto target = static_cast<NamespaceState>(state);
  if (absl::Status s = ValidateStateTransition(current->record.info().state(), target); !s.ok()) {
    return s;
  }
  persistence::NamespaceRecord record = current->record;
  record.mutable_info()->set_state(target);
  record.set_config_version(record.config_version() + 1);
  return Append(*current, std::move(record), operation);
}

absl::StatusOr<wf::DeprecateNamespaceResponse> NamespaceEngine::Deprecate(
    const wf::DeprecateNamespaceRequest& req) {
  const std::shared_ptr<const admin::ClusterMetadata> cluster = this->cluster();
  if (cluster->enable_global_namespace && !cluster->IsMasterCluster()) {
    return absl::InvalidArgumentError(kNotMasterMessage);
  }
  absl::StatusOr<persistence::NamespaceVersion> v =
      SetState(req.namespace_(), NAMESPACE_STATE_DEPRECATED, "deprecate");
  if (!v.ok()) return v.status();
  return wf::DeprecateNamespaceResponse();
}

absl::StatusOr<op::DeleteNamespaceResponse> NamespaceEngine::Delete(
    const op::DeleteNamespaceRequest& req) {
  std::string name = req.namespace_();
  if (name.empty() && !req.namespace_id().empty()) {
    absl::StatusOr<persistence::NamespaceVersion> by_id =
        store_.GetNamespaceById(req.namespace_id());
    if (!by_id.ok()) return by_id.status();
    name = by_id->record.info().name();
  }
  // A standby may not delete a global namespace (Temporal's delete-namespace workflow,
  // reference/replication.md §4.1): its runs live on the active cluster.
  if (absl::Status s = ValidateNamespaceName(name); !s.ok()) return s;
  if (absl::StatusOr<persistence::NamespaceVersion> current = store_.GetNamespaceByName(name);
      current.ok() && current->record.is_global_namespace()) {
    const std::shared_ptr<const admin::ClusterMetadata> cluster = this->cluster();
    if (!cluster->IsActiveFor(current->record.failover_version())) {
      const std::string& here = cluster->current_cluster_name;
      return absl::FailedPreconditionError(absl::StrCat(
          "namespace ", name, " is passive in current cluster ", here, ": remove cluster ", here,
          " from cluster list or make namespace active in this cluster and retry"));
    }
  }
  absl::StatusOr<persistence::NamespaceVersion> v =
      SetState(name, NAMESPACE_STATE_DELETED, "delete");
  if (!v.ok()) return v.status();
  op::DeleteNamespaceResponse out;
  out.set_deleted_namespace(name);
  return out;
}

absl::StatusOr<tock::admin::v1::GetNamespaceHistoryResponse> NamespaceEngine::History(
    const tock::admin::v1::GetNamespaceHistoryRequest& req) {
  if (absl::Status s = ValidateNamespaceName(req.namespace_()); !s.ok()) return s;
  absl::StatusOr<std::vector<persistence::NamespaceVersion>> versions =
      store_.GetNamespaceHistory(req.namespace_());
  if (!versions.ok()) return versions.status();
  tock::admin::v1::GetNamespaceHistoryResponse out;
  for (const auto& v : *versions) *out.add_versions() = ToApiVersion(v);
  return out;
}

absl::StatusOr<tock::admin::v1::DescribeNamespaceAsOfResponse> NamespaceEngine::DescribeAsOf(
    const tock::admin::v1::DescribeNamespaceAsOfRequest& req) {
  if (absl::Status s = ValidateNamespaceName(req.namespace_()); !s.ok()) return s;
  absl::StatusOr<persistence::NamespaceVersion> v =
      req.has_as_of() ? store_.GetNamespaceAsOf(req.namespace_(), FromProtoTime(req.as_of()))
                      : store_.GetNamespaceByName(req.namespace_());
  if (!v.ok()) return v.status();
  tock::admin::v1::DescribeNamespaceAsOfResponse out;
  *out.mutable_version() = ToApiVersion(*v);
  *out.mutable_namespace_() = ToDescribeResponse(v->record, EagerStartIn(v->record));
  return out;
}

void NamespaceEngine::ForgetCached() {
  std::lock_guard lock(cache_mu_);
  cache_.clear();
  archives_by_id_.clear();
  schemas_by_id_.clear();
}

bool NamespaceEngine::ArchivesById(const std::string& namespace_id) {
  {
    std::lock_guard lock(cache_mu_);
    auto it = archives_by_id_.find(namespace_id);
    if (it != archives_by_id_.end() && Fresh(it->second.loaded)) return it->second.archives;
  }
  wf::DescribeNamespaceRequest req;
  req.set_id(namespace_id);
  absl::StatusOr<wf::DescribeNamespaceResponse> ns = Describe(req);
  if (!ns.ok()) return false;
  const auto& config = ns->config();
  const bool archives =
      (archival_.history.cluster_enabled &&
       config.history_archival_state() == temporal::api::enums::v1::ARCHIVAL_STATE_ENABLED) ||
      (archival_.visibility.cluster_enabled &&
       config.visibility_archival_state() == temporal::api::enums::v1::ARCHIVAL_STATE_ENABLED);
  std::lock_guard lock(cache_mu_);
  if (archives_by_id_.size() > 10000) archives_by_id_.clear();
  archives_by_id_[namespace_id] = CachedArchives{archives, clock_.Now()};
  return archives;
}

absl::StatusOr<NamespaceEngine::Resolved> NamespaceEngine::Resolve(const std::string& name,
                                                                   bool allow_deprecated,
                                                                   NamespaceAccess access) {
  const std::shared_ptr<const admin::ClusterMetadata> cluster = this->cluster();
  std::optional<CachedVersion> cached;
  {
    std::lock_guard lock(cache_mu_);
    auto it = cache_.find(name);
    if (it != cache_.end() && Fresh(it->second.loaded)) cached = it->second;
  }
  if (!cached.has_value()) {
    if (absl::Status s = ValidateNamespaceName(name); !s.ok()) return s;
    absl::StatusOr<persistence::NamespaceVersion> loaded =
        persistence::ReadWithRetries([&] { return store_.GetNamespaceByName(name); });
    if (!loaded.ok()) return loaded.status();
    auto schema = std::make_shared<const visibility::SearchAttributeSchema>(
        loaded->record.config().custom_search_attribute_aliases());
    std::lock_guard lock(cache_mu_);
    if (cache_.size() > 10000) cache_.clear();
    cache_[name] = CachedVersion{*loaded, clock_.Now(), schema};
    cached = CachedVersion{std::move(*loaded), clock_.Now(), std::move(schema)};
  }
  const persistence::NamespaceVersion* current = &cached->version;
  const auto state = current->record.info().state();
  if (state != NAMESPACE_STATE_REGISTERED &&
      !(allow_deprecated && state == NAMESPACE_STATE_DEPRECATED)) {
    return NamespaceInvalidStateError(name, state,
                                      allow_deprecated ? "Registered, Deprecated" : "Registered");
  }
  const bool is_global = current->record.is_global_namespace();
  const bool active_here = !is_global || cluster->IsActiveFor(current->record.failover_version());
  if (!active_here && access == NamespaceAccess::kWrite) {
    return NamespaceNotActiveError(name, current->record.replication_config().active_cluster_name(),
                                   cluster->current_cluster_name);
  }
  return Resolved{current->record.info().id(),
                  name,
                  current->record.failover_version(),
                  cached->schema,
                  is_global,
                  current->record.replication_config().active_cluster_name(),
                  active_here,
                  current->record.replication_config().state() ==
                      temporal::api::enums::v1::REPLICATION_STATE_HANDOVER};
}

absl::Status NamespaceEngine::EnsureRegistered(const std::string& name) {
  if (store_.GetNamespaceByName(name).ok()) return absl::OkStatus();
  wf::RegisterNamespaceRequest req;
  req.set_namespace_(name);
  absl::StatusOr<wf::RegisterNamespaceResponse> registered = Register(req);
  if (!registered.ok() && registered.status().code() != absl::StatusCode::kAlreadyExists) {
    return registered.status();
  }
  return absl::OkStatus();
}

}  // namespace tock::server::namespaces
