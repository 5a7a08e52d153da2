// Persistence of multi-cluster replication (reference/replication.md): the remote clusters
// this one is connected to, and the namespace replication queue the others pull.
//
// The queue is written by the NamespaceStore itself, in the transaction that appends a
// namespace version (EnqueuesNamespaceReplication says which), so a change that is stored is
// never missed by the clusters pulling it, and one that failed is never sent. Task ids grow
// in commit order: a reader that continues after the last id it saw misses nothing.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/namespace_store.h"
#include "tock/persistence/v1/cluster.pb.h"

namespace tock::persistence {

using RemoteClusterRecord = tock::persistence::v1::RemoteCluster;

struct StoredRemoteCluster {
  int64_t version = 0;  // 1 when saved first, +1 by each save (optimistic concurrency)
  RemoteClusterRecord record;
};

// One entry of the namespace replication queue: the namespace version to send.
struct NamespaceReplicationTask {
  int64_t task_id = 0;
  NamespaceVersion version;
};

// Where a task of the replication DLQ is: the source cluster, the source's shard and the
// task's id in that shard's queue.
struct ReplicationDlqKey {
  std::string source_cluster;
  int32_t source_shard = 0;
  int64_t task_id = 0;
};

// A history replication task set aside by the receiving cluster: what names it at the
// source (Temporal's ReplicationTaskInfo), so that the source can rebuild it at a merge.
struct ReplicationDlqTask {
  ReplicationDlqKey key;
  std::string namespace_id;
  std::string workflow_id;
  std::string run_id;
  // KIND_HISTORY: the events [first_event_id, next_event_id); KIND_SYNC_ACTIVITY: the state
  // of the activity scheduled at scheduled_event_id (first/next 0).
  tock::persistence::v1::ReplicationTask::Kind kind =
      tock::persistence::v1::ReplicationTask::KIND_HISTORY;
  int64_t first_event_id = 0;
  int64_t next_event_id = 0;  // one after its last event
  int64_t version = 0;        // of its first event (of the activity's change)
  int64_t scheduled_event_id = 0;
  std::string last_error;     // why it is here
  absl::Time added;
};

// A namespace replication task set aside by the receiving cluster: the change as the source
// sent it (namespace changes carry the whole record, so a merge applies it as stored).
// Keyed by (source cluster, task id) in the source's namespace queue.
struct NamespaceDlqTask {
  std::string source_cluster;
  int64_t task_id = 0;
  std::string operation;  // the source's
  NamespaceRecord record;
  std::string last_error;
  absl::Time added;
};

// Which tasks of the DLQ: empty cluster, shard 0: any; task ids up to max_task_id.
struct ReplicationDlqSelection {
  std::string source_cluster;
  int32_t source_shard = 0;
  int64_t max_task_id = std::numeric_limits<int64_t>::max();
};

class ReplicationStore {
 public:
  virtual ~ReplicationStore() = default;

  // Every remote cluster, by name.
  virtual absl::StatusOr<std::vector<StoredRemoteCluster>> ListRemoteClusters() = 0;
  // Inserts (expected_version 0) or replaces the record named record.name() whose stored
  // version is `expected_version`. ABORTED, writing nothing, when the stored version is
  // another one (or the name exists, for an insert; or is gone, for a replace).
  virtual absl::Status SaveRemoteCluster(const RemoteClusterRecord& record,
                                         int64_t expected_version) = 0;
  // NOT_FOUND when no remote has this name.
  virtual absl::Status DeleteRemoteCluster(const std::string& name) = 0;

  // The queue's tasks with ids above `after_task_id`, oldest first, at most `limit`, each
  // with the namespace version it names.
  virtual absl::StatusOr<std::vector<NamespaceReplicationTask>> ReadNamespaceReplicationTasks(
      int64_t after_task_id, int32_t limit) = 0;
  // The highest task id of the queue (0 when it never had one).
  virtual absl::StatusOr<int64_t> MaxNamespaceReplicationTaskId() = 0;
  // What `cluster` has applied of the queue: kept as the highest id ever acknowledged (an
  // older acknowledgement arriving late changes nothing). 0 before the first.
  virtual absl::Status AckNamespaceReplication(const std::string& cluster, int64_t task_id) = 0;
  virtual absl::StatusOr<int64_t> NamespaceReplicationAck(const std::string& cluster) = 0;

  // History replication: a shard's replication queue (Commit::new_replication_tasks fills
  // it), read after `after_task_id`, oldest first, at most `limit`.
  virtual absl::StatusOr<std::vector<ReplicationTaskRow>> LoadReplicationTasks(
      int32_t shard_id, int64_t after_task_id, int32_t limit) = 0;
  // The highest task id of the shard's queue (0 when none).
  virtual absl::StatusOr<int64_t> MaxReplicationTaskId(int32_t shard_id) = 0;
  // What `cluster` applied of a shard's queue: only moves forward; 0 before the first.
  virtual absl::Status AckReplication(const std::string& cluster, int32_t shard_id,
                                      int64_t task_id) = 0;
  virtual absl::StatusOr<int64_t> ReplicationAck(const std::string& cluster, int32_t shard_id) = 0;

  // The replication DLQ of this (receiving) cluster: tasks pulled from a remote's shard
  // that kept failing, by (source cluster, source shard, task id). Each task is stored by
  // what names it at the source, not its events (reference/replication.md §3.8).
  // Storing a task already there replaces it (a pull after a restart stores it again).
  virtual absl::Status PutReplicationDlqTask(const ReplicationDlqTask& task) = 0;
  // The selected tasks after `after` in (source cluster, source shard, task id) order, at
  // most `limit`.
  virtual absl::StatusOr<std::vector<ReplicationDlqTask>> ReadReplicationDlq(
      const ReplicationDlqSelection& selection, const ReplicationDlqKey& after,
      int32_t limit) = 0;
  // Deletes the selected tasks; how many there were.
  virtual absl::StatusOr<int64_t> PurgeReplicationDlq(const ReplicationDlqSelection& selection) = 0;
  // Deletes one task (merged); OK when it is gone already.
  virtual absl::Status DeleteReplicationDlqTask(const ReplicationDlqKey& key) = 0;
  // The workflows (namespace id, workflow id) with tasks in the DLQ of a source shard: their
  // later tasks are set aside too, so that none is applied before an earlier one.
  virtual absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReplicationDlqWorkflows(
      const std::string& source_cluster, int32_t source_shard) = 0;
  // How many tasks of `source_cluster` are in the DLQ, by source shard (shards with none
  // are left out).
  virtual absl::StatusOr<std::map<int32_t, int64_t>> CountReplicationDlq(
      const std::string& source_cluster) = 0;
  // The (source cluster, source shard) pairs with selected tasks, in that order (where a
  // merge must run when hosts share the database).
  virtual absl::StatusOr<std::vector<std::pair<std::string, int32_t>>> ReplicationDlqShards(
      const ReplicationDlqSelection& selection) = 0;

  // The namespace DLQ (reference/replication.md §2.2): namespace tasks of a remote's queue
  // that kept failing here. Storing a task already there replaces it.
  virtual absl::Status PutNamespaceDlqTask(const NamespaceDlqTask& task) = 0;
  // The selected tasks (source_shard of the selection ignored) after (after_cluster,
  // after_task_id), in (source cluster, task id) order, at most `limit`.
  virtual absl::StatusOr<std::vector<NamespaceDlqTask>> ReadNamespaceDlq(
      const ReplicationDlqSelection& selection, const std::string& after_cluster,
      int64_t after_task_id, int32_t limit) = 0;
  // Deletes the selected tasks; how many there were.
  virtual absl::StatusOr<int64_t> PurgeNamespaceDlq(const ReplicationDlqSelection& selection) = 0;
  // Deletes one task (merged); OK when it is gone already.
  virtual absl::Status DeleteNamespaceDlqTask(const std::string& source_cluster,
                                              int64_t task_id) = 0;
  // How many tasks of `source_cluster` are in the namespace DLQ.
  virtual absl::StatusOr<int64_t> CountNamespaceDlq(const std::string& source_cluster) = 0;
};

// The operation of namespace versions written by applying another cluster's change: such a
// version is not queued again (no echo between clusters). Followed by the source's own
// operation ("replicate-failover").
inline constexpr char kReplicatedOperationPrefix[] = "replicate-";

// Whether appending `record` by `operation` queues it for the other clusters: a global
// namespace that lists more than one cluster, changed here (Temporal's rule, reference
// replication.md §2.1; it also skips deleted ones).
bool EnqueuesNamespaceReplication(const NamespaceRecord& record, const std::string& operation);

}  // namespace tock::persistence
