#include "server-core/replication/namespace_replicator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"

namespace tock::server::replication {
namespace {

namespace adm = tock::admin::v1;


}  // namespace

NamespaceReplicator::NamespaceReplicator(ClusterRegistry& clusters,
                                         persistence::ReplicationStore& store,
                                         namespaces::NamespaceEngine& namespaces,
                                         RemoteFrontends& remotes, Logger& logger)
    : clusters_(clusters),
      store_(store),
      namespaces_(namespaces),
      remotes_(remotes),
      logger_(logger) {}

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
    absl::Status task_error;
    absl::Status s = Pull(remote.record, task_error);
    {
      std::lock_guard lock(mu_);
      RemoteProgress& p = progress_[remote.record.name()];
      p.last_pull = absl::Now();
      const absl::Status& shown = s.ok() ? task_error : s;
      p.last_error = shown.ok() ? "" : std::string(shown.message().substr(0, 500));
    }
    if (!s.ok() && first_error.ok()) {
      first_error = absl::Status(s.code(), absl::StrCat("from cluster ", remote.record.name(), ": ",
                                                        s.message()));
    }
  }
  return first_error;
}

absl::StatusOr<bool> NamespaceReplicator::Apply(const persistence::NamespaceRecord& record,
                                                const std::string& operation) {
  if (faults_ != nullptr && faults_->FailsNamespace(record.info().name())) {
    return absl::InternalError(absl::StrCat("injected replication fault: every task of namespace ",
                                            record.info().name().substr(0, 255),
                                            " fails (fail_namespaces)"));
  }
  return namespaces_.ApplyReplicated(record, operation);
}

absl::Status NamespaceReplicator::Pull(const persistence::RemoteClusterRecord& remote,
                                       absl::Status& task_error) {
  if (faults_ != nullptr) faults_->Refresh();
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
  std::lock_guard apply(apply_mu_);
  for (const adm::NamespaceReplicationTask& task : got->tasks()) {
    absl::StatusOr<bool> applied = Apply(task.record(), task.operation());
    bool to_dlq = false;
    {
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
      to_dlq = absl::IsInvalidArgument(applied.status()) || ++p.failing_attempts >= kMaxTaskAttempts;
    }
    // A task that fails is not a failed pull: the pulls go on at their pace (the thread
    // would back off), so the task's 30 attempts take about 30 s (Temporal's 30 tries 1 s
    // apart).
    task_error = applied.status();
    if (to_dlq) {
      persistence::NamespaceDlqTask dlq;
      dlq.source_cluster = remote.name();
      dlq.task_id = task.task_id();
      dlq.operation = task.operation();
      dlq.record = task.record();
      dlq.last_error = std::string(applied.status().message().substr(0, 2000));
      dlq.added = absl::Now();
      if (absl::Status put = store_.PutNamespaceDlqTask(dlq); put.ok()) {
        logger_.Error("a namespace replication task was set aside in the namespace DLQ",
                      {{"cluster", remote.name()},
                       {"task_id", absl::StrCat(task.task_id())},
                       {"namespace", task.record().info().name().substr(0, 255)},
                       {"error", applied.status().ToString()}});
        std::lock_guard lock(mu_);
        RemoteProgress& p = progress_[remote.name()];
        p.failing_task_id = 0;
        p.failing_attempts = 0;
        continue;
      } else {
        // Not skipped unless kept: the task is tried (and stored) again at the next pull.
        failed = absl::Status(put.code(), absl::StrCat("storing namespace task ", task.task_id(),
                                                       " in the DLQ failed: ", put.message()));
        task_error = failed;
      }
    }
    applied_through = task.task_id() - 1;
    break;
  }
  std::lock_guard lock(mu_);
  progress_[remote.name()].last_retrieved = applied_through;
  return failed;
}

absl::StatusOr<adm::MergeDLQMessagesResponse> NamespaceReplicator::MergeDlq(
    const persistence::ReplicationDlqSelection& selection) {
  if (faults_ != nullptr) faults_->Refresh();
  std::lock_guard apply(apply_mu_);
  adm::MergeDLQMessagesResponse out;
  std::string after_cluster;
  int64_t after_task_id = 0;
  constexpr int kMaxPages = 1000;  // 100,000 tasks a call; the rest is left for the next one
  for (int page = 0; page < kMaxPages; ++page) {
    absl::StatusOr<std::vector<persistence::NamespaceDlqTask>> tasks =
        store_.ReadNamespaceDlq(selection, after_cluster, after_task_id, kPageSize);
    if (!tasks.ok()) return tasks.status();
    if (tasks->empty()) break;
    after_cluster = tasks->back().source_cluster;
    after_task_id = tasks->back().task_id;
    // Each on its own: a namespace change carries the whole record and applying keeps the
    // newest, so the order of the tasks (and one that fails) does not matter to the others.
    for (persistence::NamespaceDlqTask& task : *tasks) {
      absl::StatusOr<bool> applied = Apply(task.record, task.operation);
      if (applied.ok()) {
        if (absl::Status d = store_.DeleteNamespaceDlqTask(task.source_cluster, task.task_id);
            !d.ok()) {
          return d;
        }
        out.set_merged_tasks(out.merged_tasks() + 1);
        continue;
      }
      out.set_remaining_tasks(out.remaining_tasks() + 1);
      task.last_error = std::string(applied.status().message().substr(0, 2000));
      if (absl::Status put = store_.PutNamespaceDlqTask(task); !put.ok()) return put;
      if (out.failed_size() < 100) *out.add_failed() = NamespaceDlqTaskProto(task);
    }
  }
  if (out.merged_tasks() > 0) {
    logger_.Info("namespace DLQ merged", {{"tasks", absl::StrCat(out.merged_tasks())}});
  }
  return out;
}

adm::DLQReplicationTask NamespaceDlqTaskProto(const persistence::NamespaceDlqTask& t) {
  adm::DLQReplicationTask out;
  out.set_kind(adm::DLQ_TASK_KIND_NAMESPACE);
  out.set_source_cluster(t.source_cluster);
  out.set_task_id(t.task_id);
  out.set_namespace_id(t.record.info().id());
  out.set_namespace_name(t.record.info().name());
  out.set_operation(t.operation);
  out.set_version(t.record.failover_version());
  out.set_config_version(t.record.config_version());
  out.set_last_error(t.last_error);
  *out.mutable_added_time() = ToProtoTime(t.added);
  return out;
}

std::map<std::string, NamespaceReplicator::RemoteProgress> NamespaceReplicator::Progress() const {
  std::lock_guard lock(mu_);
  return progress_;
}

}  // namespace tock::server::replication
