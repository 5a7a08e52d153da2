#include "server-core/replication/replication_handlers.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"
#include "server-core/replication/dlq_handlers.h"

namespace tock::server::replication {
namespace {

namespace adm = tock::admin::v1;
constexpr char kOperator[] = "temporal.api.operatorservice.v1.OperatorService/";
constexpr char kAdmin[] = "tock.admin.v1.AdminService/";

absl::StatusOr<adm::GetReplicationStatusResponse> Status(
    const adm::GetReplicationStatusRequest& req, ClusterRegistry& clusters,
    NamespaceReplicator& namespaces, HistoryReplicator& histories,
    persistence::ReplicationStore& store, int32_t shard_count) {
  adm::GetReplicationStatusResponse out;
  out.set_current_cluster(clusters.current_cluster_name());
  const auto namespace_progress = namespaces.Progress();
  const auto history_progress = histories.Progress();
  absl::StatusOr<int64_t> namespace_max = store.MaxNamespaceReplicationTaskId();
  if (!namespace_max.ok()) return namespace_max.status();
  bool found = req.remote_cluster().empty();
  for (const persistence::StoredRemoteCluster& stored : clusters.Remotes()) {
    const persistence::RemoteClusterRecord& remote = stored.record;
    if (!req.remote_cluster().empty() && remote.name() != req.remote_cluster()) continue;
    found = true;
    adm::RemoteReplicationStatus* r = out.add_remotes();
    r->set_cluster_name(remote.name());
    r->set_address(remote.address());
    r->set_connection_enabled(remote.connection_enabled());
    if (auto it = namespace_progress.find(remote.name()); it != namespace_progress.end()) {
      r->set_namespace_last_retrieved_task_id(it->second.last_retrieved);
      r->set_namespace_last_error(it->second.last_error);
    } else {
      r->set_namespace_last_retrieved_task_id(-1);
    }
    r->set_namespace_max_task_id(*namespace_max);
    absl::StatusOr<int64_t> namespace_ack = store.NamespaceReplicationAck(remote.name());
    if (!namespace_ack.ok()) return namespace_ack.status();
    r->set_namespace_acked_task_id(*namespace_ack);
    absl::StatusOr<std::map<int32_t, int64_t>> dlq = store.CountReplicationDlq(remote.name());
    if (!dlq.ok()) return dlq.status();
    absl::StatusOr<int64_t> namespace_dlq = store.CountNamespaceDlq(remote.name());
    if (!namespace_dlq.ok()) return namespace_dlq.status();
    r->set_namespace_dlq_tasks(*namespace_dlq);
    for (const auto& [key, p] : history_progress) {
      if (key.first != remote.name()) continue;
      adm::InboundShardStatus* in = r->add_inbound();
      in->set_shard_id(key.second);
      in->set_last_retrieved_task_id(p.last_retrieved);
      in->set_tasks_applied(p.tasks_applied);
      if (p.last_pull != absl::Time()) *in->mutable_last_pull_time() = ToProtoTime(p.last_pull);
      in->set_last_error(p.last_error);
      if (auto it = dlq->find(key.second); it != dlq->end()) in->set_dlq_tasks(it->second);
    }
    for (int32_t shard = 1; shard <= shard_count; ++shard) {
      absl::StatusOr<int64_t> max = store.MaxReplicationTaskId(shard);
      if (!max.ok()) return max.status();
      absl::StatusOr<int64_t> ack = store.ReplicationAck(remote.name(), shard);
      if (!ack.ok()) return ack.status();
      adm::OutboundShardStatus* o = r->add_outbound();
      o->set_shard_id(shard);
      o->set_max_task_id(*max);
      o->set_acked_task_id(*ack);
      o->set_lag_tasks(std::max<int64_t>(0, *max - *ack));
    }
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat("no remote cluster is named \"",
                                            req.remote_cluster().substr(0, 255),
                                            "\" (tock cluster list shows them)"));
  }
  return out;
}

}  // namespace

void RegisterReplicationHandlers(rpc::Dispatcher& dispatcher, ClusterRegistry& clusters,
                                 NamespaceReplicator& namespaces, HistoryReplicator& histories,
                                 persistence::ReplicationStore& store, int32_t shard_count) {
  dispatcher.AddUnary<op::AddOrUpdateRemoteClusterRequest, op::AddOrUpdateRemoteClusterResponse>(
      std::string(kOperator) + "AddOrUpdateRemoteCluster",
      [&clusters](const auto& req, const rpc::CallContext&)
          -> absl::StatusOr<op::AddOrUpdateRemoteClusterResponse> {
        if (absl::Status s = clusters.Upsert(req); !s.ok()) return s;
        return op::AddOrUpdateRemoteClusterResponse();
      });
  dispatcher.AddUnary<op::RemoveRemoteClusterRequest, op::RemoveRemoteClusterResponse>(
      std::string(kOperator) + "RemoveRemoteCluster",
      [&clusters](const auto& req, const rpc::CallContext&)
          -> absl::StatusOr<op::RemoveRemoteClusterResponse> {
        if (absl::Status s = clusters.Remove(req); !s.ok()) return s;
        return op::RemoveRemoteClusterResponse();
      });
  dispatcher.AddUnary<op::ListClustersRequest, op::ListClustersResponse>(
      std::string(kOperator) + "ListClusters",
      [&clusters](const auto& req, const rpc::CallContext&) { return clusters.List(req); });
  dispatcher.AddUnary<adm::GetNamespaceReplicationMessagesRequest,
                      adm::GetNamespaceReplicationMessagesResponse>(
      std::string(kAdmin) + "GetNamespaceReplicationMessages",
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Serve(req); });
  dispatcher.AddUnary<adm::GetReplicationMessagesRequest, adm::GetReplicationMessagesResponse>(
      std::string(kAdmin) + "GetReplicationMessages",
      [&histories](const auto& req, const rpc::CallContext&) { return histories.Serve(req); });
  dispatcher.AddUnary<adm::GetWorkflowExecutionRawHistoryRequest,
                      adm::GetWorkflowExecutionRawHistoryResponse>(
      std::string(kAdmin) + "GetWorkflowExecutionRawHistory",
      [&histories](const auto& req, const rpc::CallContext&) { return histories.RawHistory(req); });
  dispatcher.AddUnary<adm::GetReplicationStatusRequest, adm::GetReplicationStatusResponse>(
      std::string(kAdmin) + "GetReplicationStatus",
      [&, shard_count](const adm::GetReplicationStatusRequest& req, const rpc::CallContext&) {
        return Status(req, clusters, namespaces, histories, store, shard_count);
      });
  RegisterDlqHandlers(dispatcher, clusters, namespaces, histories, store);
}

}  // namespace tock::server::replication
