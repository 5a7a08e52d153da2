#include "server-core/replication/namespace_replicator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tock::server::replication {
namespace {

namespace adm = tock::admin::v1;


}  // namespace

NamespaceReplicator::NamespaceReplicator(ClusterRegistry& clusters,
                                         persistence::ReplicationStore& store,
                                         frontend::NamespaceEngine& namespaces,
                                         RemoteFrontends& remotes, Logger& logger)
    : clusters_(clusters), store_(store), namespaces_(namespaces), remotes_(remotes), logger_(logger) {}

NamespaceReplicator::~NamespaceReplicator() { thread_.reset(); }

absl::StatusOr<adm::GetNamespaceReplicationMessagesResponse> NamespaceReplicator::Serve(
    const adm::GetNamespaceReplicationMessagesRequest& req) {
  const std::string& caller = req.cluster_name();
  if (absl::Status s = clusters_.CheckConnected(caller); !s.ok()) return s;
  if (req.last_processed_message_id() >= 0) {
    if (absl::Status s = store_.AckNamespaceReplication(caller, req.last_processed_message_id());
        !s.ok()) {
      logger_.Warn("storing a cluster's namespace replication ack failed",
                   {{"cluster", caller}, {"error", s.ToString()}});
    }
  }
  int64_t after = req.last_retrieved_message_id();
  if (after < 0) {
    absl::StatusOr<int64_t> ack = store_.NamespaceReplicationAck(caller);
    if (!ack.ok()) return ack.status();
    after = *ack;
  }
  absl::StatusOr<std::vector<persistence::NamespaceReplicationTask>> tasks =
      store_.ReadNamespaceReplicationTasks(after, kPageSize);
  if (!tasks.ok()) return tasks.status();
  adm::GetNamespaceReplicationMessagesResponse out;
  out.set_last_retrieved_message_id(after);
  for (persistence::NamespaceReplicationTask& t : *tasks) {
    out.set_last_retrieved_message_id(t.task_id);
    if (!persistence::ListsCluster(t.version.record, caller)) continue;
    adm::NamespaceReplicationTask* task = out.add_tasks();
    task->set_task_id(t.task_id);
    task->set_operation(t.version.operation);
    *task->mutable_record() = std::move(t.version.record);
  }
  return out;
}

void NamespaceReplicator::Start(std::function<bool()> runs_here) {
  runs_here_ = std::move(runs_here);
  worker::PeriodicThread::Observers observers;
  observers.name = "namespace replication";
  observers.logger = &logger_;
  thread_ = std::make_unique<worker::PeriodicThread>(
      kPullInterval, [this] { return runs_here_() ? PullOnce() : absl::OkStatus(); }, observers);
}

absl::Status NamespaceReplicator::PullOnce() {
  absl::Status first_error;
  for (const persistence::StoredRemoteCluster& remote : clusters_.Remotes()) {
    if (!remote.record.connection_enabled()) continue;
    absl::Status s = Pull(remote.record);
    {
      std::lock_guard lock(mu_);
      RemoteProgress& p = progress_[remote.record.name()];
      p.last_pull = absl::Now();
      p.last_error = s.ok() ? "" : std::string(s.message().substr(0, 500));
    }
    if (!s.ok() && first_error.ok()) {
      first_error = absl::Status(s.code(), absl::StrCat("from cluster ", remote.record.name(), ": ",
                                                        s.message()));
    }
  }
  return first_error;
}

absl::Status NamespaceReplicator::Pull(const persistence::RemoteClusterRecord& remote) {
  int64_t cursor;
  {
    std::lock_guard lock(mu_);
    cursor = progress_[remote.name()].last_retrieved;
  }
  adm::GetNamespaceReplicationMessagesRequest req;
  req.set_cluster_name(clusters_.current_cluster_name());
  req.set_last_retrieved_message_id(cursor);
  req.set_last_processed_message_id(cursor);
  absl::StatusOr<adm::GetNamespaceReplicationMessagesResponse> got =
      remotes_.GetNamespaceReplicationMessages(remote.address(), req);
  if (!got.ok()) return got.status();
  int64_t applied_through = got->last_retrieved_message_id();
  absl::Status failed;
  for (const adm::NamespaceReplicationTask& task : got->tasks()) {
    absl::StatusOr<bool> applied = namespaces_.ApplyReplicated(task.record(), task.operation());
    std::lock_guard lock(mu_);
    RemoteProgress& p = progress_[remote.name()];
    if (applied.ok()) {
      if (*applied) ++p.tasks_applied;
      p.failing_task_id = 0;
      p.failing_attempts = 0;
      continue;
    }
    if (p.failing_task_id != task.task_id()) {
      p.failing_task_id = task.task_id();
      p.failing_attempts = 0;
    }
    // Malformed tasks never get better; others are tried again at the next pulls.
    if (absl::IsInvalidArgument(applied.status()) || ++p.failing_attempts >= kMaxTaskAttempts) {
      logger_.Error("a namespace replication task was skipped",
                    {{"cluster", remote.name()},
                     {"task_id", absl::StrCat(task.task_id())},
                     {"namespace", task.record().info().name().substr(0, 255)},
                     {"error", applied.status().ToString()}});
      failed = applied.status();
      p.failing_task_id = 0;
      p.failing_attempts = 0;
      continue;
    }
    applied_through = task.task_id() - 1;
    failed = applied.status();
    break;
  }
  std::lock_guard lock(mu_);
  progress_[remote.name()].last_retrieved = applied_through;
  return failed;
}

std::map<std::string, NamespaceReplicator::RemoteProgress> NamespaceReplicator::Progress() const {
  std::lock_guard lock(mu_);
  return progress_;
}

}  // namespace tock::server::replication
