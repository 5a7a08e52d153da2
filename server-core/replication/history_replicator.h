// History replication, event based (reference/replication.md §3): both sides of the pull.
//
// Source: every change of a run of a global namespace queues a replication task in its
// shard's queue, in the change's transaction (HistoryEngine::WriteCommit). Serve answers a
// remote's GetReplicationMessages per shard from that queue, reading the events each task
// names from the history when it is sent, and stores what the remote acknowledged;
// RawHistory answers a remote that missed events (a gap) with the events it asks for.
// Receiver: every kPullInterval, for each connected remote, the host pulls the remote's
// shards it owns (the counts are equal, CheckShardCounts; a remote stored with another
// count is not pulled, its error says why) and hands each task to `apply` (the history
// engine's replicated apply), in order per shard; while a shard has more (a backlog), the
// next pull follows at once. A task that fails stops its shard's
// cursor there: it is tried again at the next pull (the ack sent to the source is the last
// task applied, so a restart resumes from there; applying is idempotent). After its retry
// budget (kDlqAttempts pulls) it is stored in the replication DLQ instead and the cursor
// moves on (reference/replication.md §3.8): one poison workflow does not hold up the others
// of its shard for more than that. The later tasks of a workflow that has tasks in the DLQ
// go there too, without being tried, so that none is applied before an earlier one; a merge
// (MergeDlq) applies them again in order, their events fetched from the source.
//
// Thread safety: safe from many threads.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/common/log.h"
#include "server-core/history/history_engine.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/namespace_store.h"
#include "server-core/persistence/replication_store.h"
#include "server-core/replication/cluster_registry.h"
#include "server-core/replication/remote_frontends.h"
#include "server-core/replication/replication_faults.h"
#include "server-core/replication/sync_activity_task.h"
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

// A DLQ task as AdminService shows it.
tock::admin::v1::DLQReplicationTask DlqTaskProto(const persistence::ReplicationDlqTask& task);

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
  // A remote merging its DLQ: the tasks it names, rebuilt as Serve would send them now.
  absl::StatusOr<tock::admin::v1::GetDLQReplicationMessagesResponse> ServeDlq(
      const tock::admin::v1::GetDLQReplicationMessagesRequest& req);
  // The branch of `run` that holds event `event_id` written at `version` (the current one
  // when it does): its index in the run's version histories, or -1.
  static int BranchHolding(const persistence::MutableStateRecord& run, int64_t event_id,
                           int64_t version);

  // Receiver side.
  // Events after a gap make the missing ones be fetched from the source
  // (GetWorkflowExecutionRawHistory) and applied first, at most kMaxResends times a task.
  void Start(ApplyEvents apply);
  // Where SyncActivity tasks go (set before Start; without it they fail as unimplemented).
  void SetSyncActivityApply(ApplySyncActivity apply) { apply_activity_ = std::move(apply); }
  static constexpr int kMaxResends = 2;
  absl::Status PullOnce();
  // Test-only faults (replication_faults.h), set before Start; none when never set.
  void SetFaults(ReplicationFaults* faults) { faults_ = faults; }

  // Retry budget of a task before the DLQ: attempts, one per pull (the shard's cursor waits
  // on the task meanwhile: about kDlqAttempts * kPullInterval, under a second).
  static constexpr int kDlqAttempts = 3;
  // The budget for errors that say this cluster cannot apply anything now (UNAVAILABLE,
  // DEADLINE_EXCEEDED, ABORTED, RESOURCE_EXHAUSTED, a shard owned by another host, a
  // namespace not replicated here yet): about 30 s, so that a short outage of the local
  // database or a namespace that arrives late does not fill the DLQ with healthy tasks.
  static constexpr int kDlqAttemptsTransient = 120;

  // Applies the selected tasks of the DLQ again, oldest first per source shard, each rebuilt
  // by the source as it is now (GetDLQReplicationMessages: a history task's events, a
  // SyncActivity task's activity state; a task the source has nothing for, its run or
  // activity gone, is merged as nothing to apply): each applied leaves the DLQ, each that
  // fails again stays with its new error, and so do the later tasks of its workflow.
  absl::StatusOr<tock::admin::v1::MergeDLQMessagesResponse> MergeDlq(
      const persistence::ReplicationDlqSelection& selection);

  struct ShardProgress {
    int64_t last_retrieved = -1;  // cursor in the remote's shard queue (-1: its stored ack)
    int64_t tasks_applied = 0;
    absl::Time last_pull;
    std::string last_error;
    int64_t tasks_dlqd = 0;       // stored in the DLQ since this server started
    int64_t failing_task_id = 0;  // the task the cursor waits on, if any,
    int failed_attempts = 0;      // and how many times it failed
  };
  // By (remote cluster, remote shard).
  std::map<std::pair<std::string, int32_t>, ShardProgress> Progress() const;

 private:
  // Events [first, next) of the run's branch `branch` (BranchHolding).
  absl::StatusOr<std::vector<persistence::HistoryEvent>> ReadOnBranch(
      const persistence::MutableStateRecord& run, int branch, int64_t first, int64_t next,
      int32_t limit);
  // Adds the task `t` (id `task_id` of a shard queue) to `out` as it is sent to `caller`
  // now, unless there is nothing to send (Serve's rules).
  absl::Status AddTask(const std::string& caller, int64_t task_id,
                       const tock::persistence::v1::ReplicationTask& t,
                       SentActivities& sent_activities, tock::admin::v1::ReplicationMessages& out);
  absl::Status Pull(const persistence::RemoteClusterRecord& remote);
  absl::Status ApplyTask(const persistence::RemoteClusterRecord& remote,
                         const tock::admin::v1::HistoryReplicationTask& task);
  // Applies one pulled shard's tasks; updates its progress.
  absl::Status ApplyShard(const persistence::RemoteClusterRecord& remote,
                          const tock::admin::v1::ReplicationMessages& shard);
  // ApplyShard's steps, in order. They share what the shard's pass has done so far.
  struct ShardPass;
  // The retry state of the task the shard's cursor waits on, from its progress.
  void LoadRetryState(ShardPass& pass);
  // The workflows with tasks in the shard's DLQ; when they cannot be read, nothing is tried.
  void ListWorkflowsInDlq(ShardPass& pass);
  // The order the shard's tasks are tried in.
  std::vector<const tock::admin::v1::HistoryReplicationTask*> TaskOrder(
      const tock::admin::v1::ReplicationMessages& shard);
  // Tries the tasks in order until one stops the cursor (or the test-only limit is reached).
  void ApplyInOrder(ShardPass& pass);
  // Applies task order[i], or stores it in the DLQ (its workflow has a task there, or its
  // retry budget is spent). False when the cursor stops before it (pass.failed says why).
  bool ApplyOrSetAside(ShardPass& pass, size_t i);
  // The test-only replay fault: the tasks applied are applied a second time.
  void ApplyAgain(ShardPass& pass);
  // Stores the cursor, the counts and the error in the shard's progress.
  void RecordProgress(const ShardPass& pass);
  // How many attempts a task that failed with `error` gets before the DLQ.
  int DlqBudget(const absl::Status& error, const std::string& namespace_id);
  // What a merge has done so far.
  struct MergeState {
    tock::admin::v1::MergeDLQMessagesResponse out;
    // (cluster, shard, namespace id, workflow id) of the tasks that failed again: their
    // later tasks stay in the DLQ, untried.
    std::set<std::tuple<std::string, int32_t, std::string, std::string>> stuck;
    std::map<std::pair<std::string, int32_t>, int64_t> merged_per_shard;
  };
  // Merges `tasks`, of one source shard in task id order, with one call to the source.
  // Fails only when the DLQ cannot be written.
  absl::Status MergeDlqSource(std::vector<persistence::ReplicationDlqTask>& tasks,
                              MergeState& state);
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
  ReplicationFaults* faults_ = nullptr;
  // Held while pulled tasks or DLQ tasks are applied: a merge and a pull never interleave
  // (the pull's view of the workflows in the DLQ stays true while it applies).
  std::mutex apply_mu_;
  ApplySyncActivity apply_activity_;
  // Set by a pull that left tasks behind in a remote's shard (has_more): the next pull
  // follows at once.
  std::atomic<bool> more_pending_{false};
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
