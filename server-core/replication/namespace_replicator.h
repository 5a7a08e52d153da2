// Namespace replication (reference/replication.md §2): both sides of the pull.
//
// Source: Serve answers a remote's GetNamespaceReplicationMessages from the namespace
// replication queue (written with every change of a global namespace) and stores what the
// remote acknowledged.
// Receiver: every second (± 20 %) the host that runs it pulls every connected remote and
// applies the tasks in order (NamespaceEngine::ApplyReplicated: idempotent, newest wins).
// A task that keeps failing is retried for kMaxTaskAttempts pulls in a row (about 30 s;
// a malformed one, INVALID_ARGUMENT, not at all), then stored in the namespace DLQ and
// skipped, so the queue goes on (reference/replication.md §2.2); when even that store fails,
// the pull stops there and the task is tried again. MergeDlq applies DLQ tasks again as
// stored (namespace changes carry the whole record, and applying is newest-wins).
//
// Thread safety: safe from many threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/persistence/replication_store.h"
#include "server-core/replication/cluster_registry.h"
#include "server-core/replication/remote_frontends.h"
#include "server-core/replication/replication_faults.h"
#include "server-core/worker/periodic_thread.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::server::replication {

// A namespace DLQ task as AdminService shows it.
tock::admin::v1::DLQReplicationTask NamespaceDlqTaskProto(const persistence::NamespaceDlqTask& task);

class NamespaceReplicator {
 public:
  static constexpr int32_t kPageSize = 100;
  static constexpr int kMaxTaskAttempts = 30;
  static constexpr absl::Duration kPullInterval = absl::Seconds(1);

  NamespaceReplicator(ClusterRegistry& clusters, persistence::ReplicationStore& store,
                      namespaces::NamespaceEngine& namespaces, RemoteFrontends& remotes,
                      Logger& logger);
  ~NamespaceReplicator();

  // Source side.
  absl::StatusOr<tock::admin::v1::GetNamespaceReplicationMessagesResponse> Serve(
      const tock::admin::v1::GetNamespaceReplicationMessagesRequest& req);

  // Receiver side: starts pulling; `runs_here` says whether this host is the one that
  // pulls now (the owner of shard 1 when hosts share a database).
  void Start(std::function<bool()> runs_here);
  // Pulls every connected remote once, now (also what the thread does).
  absl::Status PullOnce();
  // Test-only faults (replication_faults.h), set before Start; none when never set.
  void SetFaults(ReplicationFaults* faults) { faults_ = faults; }

  // Applies the selected tasks of the namespace DLQ again (source_shard of the selection
  // ignored): each applied (or found older than what is here) leaves it, each that fails
  // again stays with its new error.
  absl::StatusOr<tock::admin::v1::MergeDLQMessagesResponse> MergeDlq(
      const persistence::ReplicationDlqSelection& selection);

  struct RemoteProgress {
    int64_t last_retrieved = -1;  // the cursor in the remote's queue (-1: its stored ack)
    int64_t tasks_applied = 0;
    absl::Time last_pull;
    std::string last_error;
    // The task that failed last and how many pulls it failed in a row.
    int64_t failing_task_id = 0;
    int failing_attempts = 0;
  };
  std::map<std::string, RemoteProgress> Progress() const;

 private:
  // Fails when the remote could not be pulled or the DLQ not written; a task that failed
  // to apply (and was left for the next pull, or set aside) is reported in `task_error`.
  absl::Status Pull(const persistence::RemoteClusterRecord& remote, absl::Status& task_error);
  // Applies one task (the injected faults first).
  absl::StatusOr<bool> Apply(const persistence::NamespaceRecord& record,
                             const std::string& operation);

  ClusterRegistry& clusters_;
  persistence::ReplicationStore& store_;
  namespaces::NamespaceEngine& namespaces_;
  RemoteFrontends& remotes_;
  Logger& logger_;
  mutable std::mutex mu_;
  std::map<std::string, RemoteProgress> progress_;  // by remote name; guarded by mu_
  std::function<bool()> runs_here_;
  ReplicationFaults* faults_ = nullptr;
  // Held while tasks are applied: a merge and a pull never interleave.
  std::mutex apply_mu_;
  std::unique_ptr<worker::PeriodicThread> thread_;  // last: stopped first
};

}  // namespace tock::server::replication
