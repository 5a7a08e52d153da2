// Namespace replication (reference/replication.md §2): both sides of the pull.
//
// Source: Serve answers a remote's GetNamespaceReplicationMessages from the namespace
// replication queue (written with every change of a global namespace) and stores what the
// remote acknowledged.
// Receiver: every second (± 20 %) the host that runs it pulls every connected remote and
// applies the tasks in order (NamespaceEngine::ApplyReplicated: idempotent, newest wins).
// A task that keeps failing is retried for kMaxTaskAttempts pulls, then skipped with its
// error kept in the status (a later change of the same namespace carries the whole record
// again, so skipping loses at most the intermediate state).
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
#include "server-core/frontend/namespace_engine.h"
#include "server-core/persistence/replication_store.h"
#include "server-core/replication/cluster_registry.h"
#include "server-core/replication/remote_frontends.h"
#include "server-core/worker/periodic_thread.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::server::replication {

class NamespaceReplicator {
 public:
  static constexpr int32_t kPageSize = 100;
  static constexpr int kMaxTaskAttempts = 30;
  static constexpr absl::Duration kPullInterval = absl::Seconds(1);

  NamespaceReplicator(ClusterRegistry& clusters, persistence::ReplicationStore& store,
                      frontend::NamespaceEngine& namespaces, RemoteFrontends& remotes,
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
  absl::Status Pull(const persistence::RemoteClusterRecord& remote);

  ClusterRegistry& clusters_;
  persistence::ReplicationStore& store_;
  frontend::NamespaceEngine& namespaces_;
  RemoteFrontends& remotes_;
  Logger& logger_;
  mutable std::mutex mu_;
  std::map<std::string, RemoteProgress> progress_;  // by remote name; guarded by mu_
  std::function<bool()> runs_here_;
  std::unique_ptr<worker::PeriodicThread> thread_;  // last: stopped first
};

}  // namespace tock::server::replication
