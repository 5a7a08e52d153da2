// History replication, event based (reference/replication.md §3): both sides of the pull.
//
// Source: every change of a run of a global namespace queues a replication task in its
// shard's queue, in the change's transaction (HistoryEngine::WriteCommit). Serve answers a
// remote's GetReplicationMessages per shard from that queue, reading the events each task
// names from the history when it is sent, and stores what the remote acknowledged;
// RawHistory answers a remote that missed events (a gap) with the events it asks for.
// Receiver: every kPullInterval, for each connected remote, the host pulls the remote's
// shards that map to the local shards it owns and hands each task to `apply` (the history
// engine's replicated apply), in order per shard. A task that fails stops its shard's
// cursor there: it is tried again at the next pull (the ack sent to the source is the last
// task applied, so a restart resumes from there; applying is idempotent).
//
// Thread safety: safe from many threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/common/log.h"
#include "server-core/history/history_engine.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/namespace_store.h"
#include "server-core/persistence/replication_store.h"
#include "server-core/replication/cluster_registry.h"
#include "server-core/replication/remote_frontends.h"
#include "server-core/worker/periodic_thread.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::server::replication {

// Applies a run's events (HistoryEngine::ApplyReplicated): OK also when they were applied
// before; the events missing before them, if any.
using ApplyEvents = std::function<absl::StatusOr<std::optional<history::HistoryEngine::ReplicationGap>>(
    const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id,
    const std::vector<tock::persistence::v1::VersionHistoryItem>& items,
    const std::vector<persistence::HistoryEvent>& events)>;

// Applies a pending activity's state (HistoryEngine::ApplySyncActivity): OK also when it
// was not newer; the events missing before the activity's, if any.
using ApplySyncActivity =
    std::function<absl::StatusOr<std::optional<history::HistoryEngine::ReplicationGap>>(
        const tock::admin::v1::HistoryReplicationTask& task)>;

class HistoryReplicator {
 public:
  static constexpr int32_t kPageSize = 100;
  static constexpr int32_t kMaxRawHistoryPage = 1000;
  static constexpr absl::Duration kPullInterval = absl::Milliseconds(250);

  struct Shards {
    int32_t count = 0;
    std::function<bool(int32_t)> owns;  // whether this host owns a local shard now
  };

  HistoryReplicator(ClusterRegistry& clusters, persistence::ReplicationStore& replication,
                    persistence::ExecutionStore& executions,
                    persistence::NamespaceStore& namespaces, RemoteFrontends& remotes,
                    Shards shards, Logger& logger);
  ~HistoryReplicator();

  // Source side.
  absl::StatusOr<tock::admin::v1::GetReplicationMessagesResponse> Serve(
      const tock::admin::v1::GetReplicationMessagesRequest& req);
  absl::StatusOr<tock::admin::v1::GetWorkflowExecutionRawHistoryResponse> RawHistory(
      const tock::admin::v1::GetWorkflowExecutionRawHistoryRequest& req);

  // Receiver side.
  // Events after a gap make the missing ones be fetched from the source
  // (GetWorkflowExecutionRawHistory) and applied first, at most kMaxResends times a task.
  void Start(ApplyEvents apply);
  // Where SyncActivity tasks go (set before Start; without it they fail as unimplemented).
  void SetSyncActivityApply(ApplySyncActivity apply) { apply_activity_ = std::move(apply); }
  static constexpr int kMaxResends = 2;
  absl::Status PullOnce();

  struct ShardProgress {
    int64_t last_retrieved = -1;  // cursor in the remote's shard queue (-1: its stored ack)
    int64_t tasks_applied = 0;
    absl::Time last_pull;
    std::string last_error;
  };
  // By (remote cluster, remote shard).
  std::map<std::pair<std::string, int32_t>, ShardProgress> Progress() const;

 private:
  absl::Status Pull(const persistence::RemoteClusterRecord& remote);
  absl::Status ApplyTask(const persistence::RemoteClusterRecord& remote,
                         const tock::admin::v1::HistoryReplicationTask& task);
  // Whether the namespace with this id lists `cluster` (cached for a few seconds).
  absl::StatusOr<bool> NamespaceListsCluster(const std::string& namespace_id,
                                             const std::string& cluster);

  ClusterRegistry& clusters_;
  persistence::ReplicationStore& replication_;
  persistence::ExecutionStore& executions_;
  persistence::NamespaceStore& namespaces_;
  RemoteFrontends& remotes_;
  const Shards shards_;
  Logger& logger_;
  ApplyEvents apply_;
  ApplySyncActivity apply_activity_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int32_t>, ShardProgress> progress_;  // guarded by mu_
  struct CachedClusters {
    std::vector<std::string> clusters;
    absl::Time loaded;
  };
  std::map<std::string, CachedClusters> namespace_clusters_;  // guarded by mu_
  std::unique_ptr<worker::PeriodicThread> thread_;  // last: stopped first
};

}  // namespace tock::server::replication
