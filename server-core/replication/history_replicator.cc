#include "server-core/replication/history_replicator.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server-core/history/version_histories.h"
#include "lib/common/retryable.h"
#include "lib/common/time_format.h"
#include "server-core/replication/sync_activity_task.h"

namespace tock::server::replication {
namespace {

namespace adm = tock::admin::v1;

constexpr absl::Duration kNamespaceCacheLifetime = absl::Seconds(5);

}  // namespace

HistoryReplicator::HistoryReplicator(ClusterRegistry& clusters,
                                     persistence::ReplicationStore& replication,
                                     persistence::ExecutionStore& executions,
                                     persistence::NamespaceStore& namespaces,
                                     RemoteFrontends& remotes, Shards shards, Logger& logger)
    : clusters_(clusters),
      replication_(replication),
      executions_(executions),
      namespaces_(namespaces),
      remotes_(remotes),
      shards_(std::move(shards)),
      logger_(logger) {}

HistoryReplicator::~HistoryReplicator() { thread_.reset(); }

absl::StatusOr<bool> HistoryReplicator::NamespaceListsCluster(const std::string& namespace_id,
                                                              const std::string& cluster) {
  const absl::Time now = absl::Now();
  std::vector<std::string> listed;
  bool cached = false;
  {
    std::lock_guard lock(mu_);
    auto it = namespace_clusters_.find(namespace_id);
    if (it != namespace_clusters_.end() && now - it->second.loaded < kNamespaceCacheLifetime) {
      listed = it->second.clusters;
      cached = true;
    }
  }
  if (!cached) {
    absl::StatusOr<persistence::NamespaceVersion> ns = namespaces_.GetNamespaceById(namespace_id);
    if (absl::IsNotFound(ns.status())) return false;
    if (!ns.ok()) return ns.status();
    for (const auto& c : ns->record.replication_config().clusters()) {
      listed.push_back(c.cluster_name());
    }
    std::lock_guard lock(mu_);
    if (namespace_clusters_.size() > 10000) namespace_clusters_.clear();
    namespace_clusters_[namespace_id] = CachedClusters{listed, now};
  }
  return std::find(listed.begin(), listed.end(), cluster) != listed.end();
}

int HistoryReplicator::BranchHolding(const persistence::MutableStateRecord& run,
                                     int64_t event_id, int64_t version) {
  const auto& histories = run.version_histories();
  auto holds = [&](int i) {
    const history::VersionItems items = history::ToItems(histories.histories(i).items());
    return history::LastEventId(items) >= event_id &&
           history::VersionAt(items, event_id) == version;
  };
  const int current = histories.current_version_history_index();
  if (current < histories.histories_size() && holds(current)) return current;
  for (int i = 0; i < histories.histories_size(); ++i) {
    if (holds(i)) return i;
  }
  return -1;
}

absl::StatusOr<std::vector<persistence::HistoryEvent>> HistoryReplicator::ReadOnBranch(
    const persistence::MutableStateRecord& run, int branch, int64_t first, int64_t next,
    int32_t limit) {
  const auto& histories = run.version_histories();
  const std::string& run_id = run.execution().run_id();
  if (histories.histories_size() == 0 || branch == histories.current_version_history_index()) {
    return executions_.ReadEvents(run_id, first, next, limit);
  }
  return executions_.ReadBranchEvents(run_id, histories.histories(branch).branch_token(), first,
                                      next, limit);
}

absl::StatusOr<adm::GetReplicationMessagesResponse> HistoryReplicator::Serve(
    const adm::GetReplicationMessagesRequest& req) {
  const std::string& caller = req.cluster_name();
  if (caller.empty()) return absl::InvalidArgumentError("Cluster name is not set.");
  if (absl::Status s = clusters_.CheckConnected(caller); !s.ok()) return s;
  if (req.tokens_size() > shards_.count) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most one token per shard (", shards_.count, " shards)"));
  }
  adm::GetReplicationMessagesResponse out;
  for (const adm::ReplicationToken& token : req.tokens()) {
    SentActivities sent_activities;  // a SyncActivity sends an activity's state once an answer
    const int32_t shard = token.shard_id();
    if (shard < 1 || shard > shards_.count) {
      return absl::InvalidArgumentError(
          absl::StrCat("shard_id ", shard, " is not a shard of this cluster (1..", shards_.count, ")"));
    }
    if (token.last_processed_message_id() >= 0) {
      if (absl::Status s = replication_.AckReplication(caller, shard, token.last_processed_message_id());
          !s.ok()) {
        logger_.Warn("storing a cluster's replication ack failed",
                     {{"cluster", caller}, {"shard", absl::StrCat(shard)}, {"error", s.ToString()}});
      }
    }
    int64_t after = token.last_retrieved_message_id();
    if (after < 0) {
      absl::StatusOr<int64_t> ack = replication_.ReplicationAck(caller, shard);
      if (!ack.ok()) return ack.status();
      after = *ack;
    }
    absl::StatusOr<std::vector<persistence::ReplicationTaskRow>> rows =
        replication_.LoadReplicationTasks(shard, after, kPageSize);
    if (!rows.ok()) return rows.status();
    adm::ReplicationMessages* messages = out.add_shard_messages();
    messages->set_shard_id(shard);
    messages->set_last_retrieved_message_id(after);
    messages->set_has_more(static_cast<int32_t>(rows->size()) == kPageSize);
    for (const persistence::ReplicationTaskRow& row : *rows) {
      messages->set_last_retrieved_message_id(row.task_id);
      if (absl::Status s = AddTask(caller, row.task_id, row.task, sent_activities, *messages);
          !s.ok()) {
        return s;
      }
    }
  }
  return out;
}

absl::Status HistoryReplicator::AddTask(const std::string& caller, int64_t task_id,
                                        const tock::persistence::v1::ReplicationTask& t,
                                        SentActivities& sent_activities,
                                        adm::ReplicationMessages& out) {
  absl::StatusOr<bool> listed = NamespaceListsCluster(t.namespace_id(), caller);
  if (!listed.ok()) return listed.status();
  if (!*listed) return absl::OkStatus();
  // The run and its events as they are now; a run deleted since is skipped (Temporal
  // skips tasks whose run is gone, so one missing run never blocks the queue).
  absl::StatusOr<persistence::MutableStateRecord> run =
      executions_.GetRun(t.namespace_id(), t.workflow_id(), t.run_id());
  if (absl::IsNotFound(run.status())) return absl::OkStatus();
  if (!run.ok()) return run.status();
  if (t.kind() == tock::persistence::v1::ReplicationTask::KIND_SYNC_ACTIVITY) {
    AddSyncActivityTask(*run, task_id, t, sent_activities, out);
    return absl::OkStatus();
  }
  if (t.first_event_id() < 1 || t.next_event_id() <= t.first_event_id()) return absl::OkStatus();
  // The events are read from the branch that holds them: after a conflict they may be
  // on a branch that is no longer the current one, and the other clusters need them
  // there (to keep that branch, and apply its signals again).
  const int branch = BranchHolding(*run, t.next_event_id() - 1, t.version());
  if (branch < 0) return absl::OkStatus();
  absl::StatusOr<std::vector<persistence::HistoryEvent>> events =
      ReadOnBranch(*run, branch, t.first_event_id(), t.next_event_id(),
                   static_cast<int32_t>(t.next_event_id() - t.first_event_id()));
  if (!events.ok()) return events.status();
  if (events->empty()) return absl::OkStatus();
  adm::HistoryReplicationTask* task = out.add_tasks();
  task->set_task_id(task_id);
  task->set_namespace_id(t.namespace_id());
  task->set_workflow_id(t.workflow_id());
  task->set_run_id(t.run_id());
  const history::VersionItems items = history::TruncatedTo(
      history::ToItems(run->version_histories().histories(branch).items()),
      t.next_event_id() - 1);
  task->mutable_version_history_items()->Assign(items.begin(), items.end());
  for (persistence::HistoryEvent& e : *events) *task->add_events() = std::move(e);
  return absl::OkStatus();
}

absl::StatusOr<adm::GetDLQReplicationMessagesResponse> HistoryReplicator::ServeDlq(
    const adm::GetDLQReplicationMessagesRequest& req) {
  const std::string& caller = req.cluster_name();
  if (caller.empty()) return absl::InvalidArgumentError("Cluster name is not set.");
  if (absl::Status s = clusters_.CheckConnected(caller); !s.ok()) return s;
  if (req.task_infos_size() > kPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", kPageSize, " task_infos a call (", req.task_infos_size(), " given)"));
  }
  // Rebuilt like a pull sends them (Temporal's raw task conversion): what the run holds now.
  adm::ReplicationMessages rebuilt;
  SentActivities sent_activities;
  for (const adm::ReplicationTaskInfo& info : req.task_infos()) {
    const auto& t = info.task();
    if (t.namespace_id().empty() || t.namespace_id().size() > 255 || t.workflow_id().empty() ||
        t.workflow_id().size() > 1000 || t.run_id().empty() || t.run_id().size() > 64) {
      return absl::InvalidArgumentError(absl::StrCat(
          "task info ", info.task_id(),
          ": namespace_id (at most 255 bytes), workflow_id (at most 1000) and run_id (at most "
          "64) must be set"));
    }
    if (absl::Status s = AddTask(caller, info.task_id(), t, sent_activities, rebuilt); !s.ok()) {
      return s;
    }
  }
  adm::GetDLQReplicationMessagesResponse out;
  *out.mutable_replication_tasks() = std::move(*rebuilt.mutable_tasks());
  return out;
}

absl::StatusOr<adm::GetWorkflowExecutionRawHistoryResponse> HistoryReplicator::RawHistory(
    const adm::GetWorkflowExecutionRawHistoryRequest& req) {
  if (req.workflow_id().empty()) return absl::InvalidArgumentError("WorkflowId is not set on request.");
  if (req.run_id().empty() || req.run_id().size() > 64) {
    return absl::InvalidArgumentError("RunId is not valid.");
  }
  if (req.maximum_page_size() < 0) {
    return absl::InvalidArgumentError("Invalid PageSize.");
  }
  absl::StatusOr<persistence::MutableStateRecord> run =
      executions_.GetRun(req.namespace_id(), req.workflow_id(), req.run_id());
  if (!run.ok()) return run.status();
  int64_t first = req.start_event_id() + 1;
  if (!req.next_page_token().empty()) {
    if (!absl::SimpleAtoi(req.next_page_token(), &first) || first < 1) {
      return absl::InvalidArgumentError("next_page_token is not one this server gave out");
    }
  }
  // The branch is chosen by the range's end (Temporal's rule), else the current one.
  const auto& histories = run->version_histories();
  int branch = histories.current_version_history_index();
  if (req.end_event_id() != 0) {
    const int holding = BranchHolding(*run, req.end_event_id(), req.end_event_version());
    if (holding >= 0) branch = holding;
  }
  const history::VersionItems items =
      histories.histories_size() > branch ? history::ToItems(histories.histories(branch).items())
                                          : history::VersionItems{};
  const int64_t end =
      req.end_event_id() == 0 ? history::LastEventId(items) + 1 : req.end_event_id();
  const int32_t page = req.maximum_page_size() == 0
                           ? kMaxRawHistoryPage
                           : std::min(req.maximum_page_size(), kMaxRawHistoryPage);
  adm::GetWorkflowExecutionRawHistoryResponse out;
  out.mutable_version_history_items()->Assign(items.begin(), items.end());
  if (first >= end) return out;
  absl::StatusOr<std::vector<persistence::HistoryEvent>> events =
      ReadOnBranch(*run, branch, first, end, page);
  if (!events.ok()) return events.status();
  for (persistence::HistoryEvent& e : *events) *out.add_events() = std::move(e);
  if (!out.events().empty() && out.events().rbegin()->event_id() + 1 < end) {
    out.set_next_page_token(absl::StrCat(out.events().rbegin()->event_id() + 1));
  }
  return out;
}

absl::Status HistoryReplicator::ApplyTask(const persistence::RemoteClusterRecord& remote,
                                          const adm::HistoryReplicationTask& task) {
  if (faults_ != nullptr && faults_->Fails(task.workflow_id())) {
    return absl::InternalError(absl::StrCat("injected replication fault: every task of workflow ",
                                            task.workflow_id(), " fails (fail_workflow_ids)"));
  }
  const std::vector<persistence::HistoryEvent> events(task.events().begin(), task.events().end());
  const std::vector<tock::persistence::v1::VersionHistoryItem> items(
      task.version_history_items().begin(), task.version_history_items().end());
  for (int resends = 0;; ++resends) {
    absl::StatusOr<std::optional<history::HistoryEngine::ReplicationGap>> applied =
        !task.has_sync_activity() ? apply_(task.namespace_id(), task.workflow_id(), task.run_id(), items, events)
        : apply_activity_         ? apply_activity_(task)
                                  : absl::UnimplementedError("SyncActivity tasks are not applied here");
    if (!applied.ok()) return applied.status();
    if (!applied->has_value()) return absl::OkStatus();
    if (resends == kMaxResends) return absl::InternalError("resend history attempts exceeded");
    // Temporal's resend: the events strictly between the gap's ends, page by page.
    const history::HistoryEngine::ReplicationGap& gap = **applied;
    adm::GetWorkflowExecutionRawHistoryRequest req;
    req.set_namespace_id(task.namespace_id());
    req.set_workflow_id(task.workflow_id());
    req.set_run_id(task.run_id());
    req.set_start_event_id(gap.after_event_id);
    req.set_start_event_version(gap.after_version);
    req.set_end_event_id(gap.before_event_id);
    req.set_end_event_version(gap.before_version);
    for (int page = 0; page < 1000; ++page) {
      absl::StatusOr<adm::GetWorkflowExecutionRawHistoryResponse> raw =
          remotes_.GetRawHistory(remote.address(), req);
      if (!raw.ok()) return raw.status();
      if (raw->events().empty()) break;
      const std::vector<persistence::HistoryEvent> missing(raw->events().begin(),
                                                           raw->events().end());
      const std::vector<tock::persistence::v1::VersionHistoryItem> raw_items(
          raw->version_history_items().begin(), raw->version_history_items().end());
      absl::StatusOr<std::optional<history::HistoryEngine::ReplicationGap>> filled =
          apply_(task.namespace_id(), task.workflow_id(), task.run_id(), raw_items, missing);
      if (!filled.ok()) return filled.status();
      if (filled->has_value()) return absl::InternalError("resent history left a gap");
      if (raw->next_page_token().empty()) break;
      req.set_next_page_token(raw->next_page_token());
    }
  }
}

void HistoryReplicator::Start(ApplyEvents apply) {
  apply_ = std::move(apply);
  worker::PeriodicThread::Observers observers;
  observers.name = "history replication";
  observers.logger = &logger_;
  thread_ = std::make_unique<worker::PeriodicThread>(kPullInterval, [this] { return PullOnce(); },
                                                     observers);
}

absl::Status HistoryReplicator::PullOnce() {
  more_pending_ = false;
  absl::Status first_error;
  for (const persistence::StoredRemoteCluster& remote : clusters_.Remotes()) {
    if (!remote.record.connection_enabled()) continue;
    absl::Status s = Pull(remote.record);
    if (!s.ok() && first_error.ok()) {
      first_error = absl::Status(
          s.code(), absl::StrCat("from cluster ", remote.record.name(), ": ", s.message()));
    }
  }
  // A backlog (catch-up after a partition) is pulled page after page, not a page a tick.
  if (more_pending_ && thread_ != nullptr) thread_->Wake();
  return first_error;
}

absl::Status HistoryReplicator::Pull(const persistence::RemoteClusterRecord& remote) {
  if (faults_ != nullptr) {
    faults_->Refresh();
    if (faults_->paused()) return absl::OkStatus();
  }
  // A remote stored with another shard count (by a version that accepted multiples) is not
  // pulled: its shards would hold workflows of local shards other hosts own, whose tasks
  // would end in the DLQ (CheckShardCounts).
  if (absl::Status counts = CheckShardCounts(remote.history_shard_count(), shards_.count);
      !counts.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(counts.message(), "; nothing is pulled from it (tock cluster remove it)"));
  }
  adm::GetReplicationMessagesRequest req;
  req.set_cluster_name(clusters_.current_cluster_name());
  {
    std::lock_guard lock(mu_);
    for (int32_t s = 1; s <= remote.history_shard_count(); ++s) {
      // The remote's shard s holds the workflows of local shard s (the same hash of the same
      // namespace id and workflow id over the same count).
      if (!shards_.owns(s)) continue;
      const int64_t cursor = progress_[{remote.name(), s}].last_retrieved;
      adm::ReplicationToken* token = req.add_tokens();
      token->set_shard_id(s);
      token->set_last_retrieved_message_id(cursor);
      token->set_last_processed_message_id(cursor);
    }
  }
  if (req.tokens().empty()) return absl::OkStatus();
  absl::StatusOr<adm::GetReplicationMessagesResponse> got =
      remotes_.GetReplicationMessages(remote.address(), req);
  if (!got.ok()) return got.status();
  std::lock_guard apply(apply_mu_);
  absl::Status failed;
  // A slow receiver (the test-only tasks_per_pull) keeps its pace.
  const bool slowed = faults_ != nullptr && faults_->tasks_per_pull() > 0;
  for (const adm::ReplicationMessages& shard : got->shard_messages()) {
    absl::Status s = ApplyShard(remote, shard);
    if (!s.ok() && failed.ok()) failed = s;
    if (s.ok() && shard.has_more() && !slowed) more_pending_ = true;
  }
  // A task that fails is not a failed pull: the pulls go on at their pace (the thread would
  // back off, doubling up to a minute), so a task's retry budget is counted in pulls about
  // kPullInterval apart. Its error stays in replication-status.
  if (!failed.ok()) {
    logger_.Warn("replication: a pulled task failed; it is tried again at the next pull",
                 {{"cluster", remote.name()}, {"error", std::string(failed.message().substr(0, 500))}});
  }
  return absl::OkStatus();
}

int HistoryReplicator::DlqBudget(const absl::Status& error, const std::string& namespace_id) {
  // CANCELLED too: a pull or an apply cut short by a shard moving or a shutdown says
  // nothing about the task, which the next pull carries again.
  if (IsRetryable(error) || error.code() == absl::StatusCode::kCancelled) {
    return kDlqAttemptsTransient;
  }
  if (absl::IsNotFound(namespaces_.GetNamespaceById(namespace_id).status())) {
    return kDlqAttemptsTransient;  // namespace replication is behind history replication
  }
  return kDlqAttempts;
}

// What one pulled shard's tasks have done so far: ApplyShard's steps share it, and the last
// one stores it in the shard's progress.
struct HistoryReplicator::ShardPass {
  ShardPass(const persistence::RemoteClusterRecord& remote, const adm::ReplicationMessages& shard)
      : remote(remote),
        shard(shard),
        key(remote.name(), shard.shard_id()),
        through(shard.last_retrieved_message_id()) {}

  // Where the cursor may go when the tasks from order[i] on are left for the next pull: just
  // before the lowest of them (in the source's order, order[i] itself).
  int64_t BeforeRest(size_t i) const {
    int64_t lowest = order[i]->task_id();
    for (size_t j = i + 1; j < order.size(); ++j) lowest = std::min(lowest, order[j]->task_id());
    return lowest - 1;
  }
  // The task the cursor waited on is done (applied or stored in the DLQ).
  void Done(int64_t task_id) {
    if (failing_task_id == task_id) failing_task_id = 0, failed_attempts = 0;
  }

  const persistence::RemoteClusterRecord& remote;
  const adm::ReplicationMessages& shard;
  const std::pair<std::string, int32_t> key;
  // The task the cursor waits on, if any, and how many times it failed (ShardProgress).
  int64_t failing_task_id = 0;
  int failed_attempts = 0;
  // Where the cursor goes: past every task applied or stored in the DLQ.
  std::optional<int64_t> through;
  int64_t applied = 0;
  int64_t dlqd = 0;
  std::string error;
  absl::Status failed;
  // The workflows with tasks in this shard's DLQ (read once a pull: almost always none).
  std::set<std::pair<std::string, std::string>> in_dlq;
  // The order the tasks are tried in (TaskOrder), and those applied, for the replay fault.
  std::vector<const adm::HistoryReplicationTask*> order;
  std::vector<const adm::HistoryReplicationTask*> replayed;
};

namespace {

// The DLQ record of `task`, pulled from `source_cluster`'s shard `source_shard`, set aside
// because of `why`.
persistence::ReplicationDlqTask DlqRecord(const std::string& source_cluster, int32_t source_shard,
                                          const adm::HistoryReplicationTask& task,
                                          const std::string& why) {
  persistence::ReplicationDlqTask dlq;
  dlq.key = {source_cluster, source_shard, task.task_id()};
  dlq.namespace_id = task.namespace_id();
  dlq.workflow_id = task.workflow_id();
  dlq.run_id = task.run_id();
  if (task.has_sync_activity()) {
    // What the source rebuilds the task from at a merge (Temporal's ReplicationTaskInfo).
    dlq.kind = tock::persistence::v1::ReplicationTask::KIND_SYNC_ACTIVITY;
    dlq.scheduled_event_id = task.sync_activity().activity().scheduled_event_id();
    dlq.version = task.sync_activity().version();
  } else if (!task.events().empty()) {
    dlq.first_event_id = task.events(0).event_id();
    dlq.next_event_id = task.events(task.events_size() - 1).event_id() + 1;
    dlq.version = task.events(0).version();
  }
  dlq.last_error = why;
  dlq.added = absl::Now();
  return dlq;
}

}  // namespace

absl::Status HistoryReplicator::ApplyShard(const persistence::RemoteClusterRecord& remote,
                                           const adm::ReplicationMessages& shard) {
  ShardPass pass(remote, shard);
  LoadRetryState(pass);
  ListWorkflowsInDlq(pass);
  pass.order = TaskOrder(shard);
  ApplyInOrder(pass);
  if (faults_ != nullptr && faults_->replay()) ApplyAgain(pass);
  RecordProgress(pass);
  return pass.failed;
}

void HistoryReplicator::LoadRetryState(ShardPass& pass) {
  std::lock_guard lock(mu_);
  const ShardProgress& p = progress_[pass.key];
  pass.failing_task_id = p.failing_task_id;
  pass.failed_attempts = p.failed_attempts;
}

void HistoryReplicator::ListWorkflowsInDlq(ShardPass& pass) {
  if (pass.shard.tasks().empty()) return;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> listed =
      replication_.ReplicationDlqWorkflows(pass.remote.name(), pass.shard.shard_id());
  if (!listed.ok()) {
    pass.failed = listed.status();
    pass.error = absl::StrCat("reading the DLQ failed: ", listed.status().message());
    pass.through = std::nullopt;  // nothing was tried: the cursor stays
    return;
  }
  pass.in_dlq.insert(listed->begin(), listed->end());
}

std::vector<const adm::HistoryReplicationTask*> HistoryReplicator::TaskOrder(
    const adm::ReplicationMessages& shard) {
  // The source's order (task ids rising), unless the test-only reorder fault reverses it.
  std::vector<const adm::HistoryReplicationTask*> order;
  order.reserve(shard.tasks_size());
  for (const adm::HistoryReplicationTask& task : shard.tasks()) order.push_back(&task);
  if (faults_ != nullptr && faults_->reorder() && order.size() > 1) {
    std::reverse(order.begin(), order.end());
    faults_->CountReorder();
  }
  return order;
}

void HistoryReplicator::ApplyInOrder(ShardPass& pass) {
  const int limit = faults_ != nullptr ? faults_->tasks_per_pull() : 0;
  for (size_t i = 0; i < pass.order.size(); ++i) {
    if (!pass.failed.ok()) break;
    if (limit > 0 && pass.applied + pass.dlqd >= limit) {
      pass.through = pass.BeforeRest(i);  // the rest comes again with the next pull
      break;
    }
    if (faults_ != nullptr && faults_->TakeDrop(pass.order[i]->workflow_id())) continue;
    if (!ApplyOrSetAside(pass, i)) break;
  }
}

bool HistoryReplicator::ApplyOrSetAside(ShardPass& pass, size_t i) {
  const adm::HistoryReplicationTask& task = *pass.order[i];
  const std::pair<std::string, std::string> workflow{task.namespace_id(), task.workflow_id()};
  std::string why;
  if (pass.in_dlq.contains(workflow)) {
    why = "an earlier task of this workflow is in the DLQ";
  } else {
    absl::Status s = ApplyTask(pass.remote, task);
    if (s.ok()) {
      ++pass.applied;
      pass.replayed.push_back(&task);
      pass.Done(task.task_id());
      return true;
    }
    const int attempts = (pass.failing_task_id == task.task_id() ? pass.failed_attempts : 0) + 1;
    if (attempts < DlqBudget(s, task.namespace_id())) {
      pass.failing_task_id = task.task_id();
      pass.failed_attempts = attempts;
      pass.through = pass.BeforeRest(i);
      pass.error = absl::StrCat("task ", task.task_id(), " of workflow ", task.workflow_id(),
                                " (attempt ", attempts, "): ", s.message().substr(0, 500));
      pass.failed = s;
      return false;
    }
    why = std::string(s.message().substr(0, 2000));
  }
  // Set aside: the cursor moves past the task only once it is stored.
  if (absl::Status put = replication_.PutReplicationDlqTask(
          DlqRecord(pass.remote.name(), pass.shard.shard_id(), task, why));
      !put.ok()) {
    pass.through = pass.BeforeRest(i);
    pass.error =
        absl::StrCat("storing task ", task.task_id(), " in the DLQ failed: ", put.message());
    pass.failed = put;
    return false;
  }
  logger_.Warn("replication task set aside in the DLQ",
               {{"cluster", pass.remote.name()},
                {"shard", absl::StrCat(pass.shard.shard_id())},
                {"task_id", absl::StrCat(task.task_id())},
                {"workflow_id", task.workflow_id()},
                {"run_id", task.run_id()},
                {"error", why}});
  pass.in_dlq.insert(workflow);
  ++pass.dlqd;
  pass.Done(task.task_id());
  return true;
}

void HistoryReplicator::ApplyAgain(ShardPass& pass) {
  // Delivered twice: the second time must change nothing.
  for (const adm::HistoryReplicationTask* task : pass.replayed) {
    faults_->CountReplay();
    if (absl::Status s = ApplyTask(pass.remote, *task); !s.ok()) {
      pass.error = absl::StrCat("replayed task ", task->task_id(), ": ", s.message());
      if (pass.failed.ok()) pass.failed = s;
    }
  }
}

void HistoryReplicator::RecordProgress(const ShardPass& pass) {
  std::lock_guard lock(mu_);
  ShardProgress& p = progress_[pass.key];
  // A task that failed before any was retrieved keeps the cursor where it was.
  if (pass.through.has_value() && (*pass.through >= p.last_retrieved || p.last_retrieved < 0)) {
    p.last_retrieved = *pass.through;
  }
  p.tasks_applied += pass.applied;
  p.tasks_dlqd += pass.dlqd;
  p.failing_task_id = pass.failing_task_id;
  p.failed_attempts = pass.failed_attempts;
  p.last_pull = absl::Now();
  p.last_error = pass.error;
}

adm::DLQReplicationTask DlqTaskProto(const persistence::ReplicationDlqTask& t) {
  adm::DLQReplicationTask out;
  out.set_source_cluster(t.key.source_cluster);
  out.set_source_shard_id(t.key.source_shard);
  out.set_task_id(t.key.task_id);
  out.set_namespace_id(t.namespace_id);
  out.set_workflow_id(t.workflow_id);
  out.set_run_id(t.run_id);
  out.set_first_event_id(t.first_event_id);
  out.set_next_event_id(t.next_event_id);
  out.set_version(t.version);
  out.set_last_error(t.last_error);
  *out.mutable_added_time() = ToProtoTime(t.added);
  out.set_kind(t.kind == tock::persistence::v1::ReplicationTask::KIND_SYNC_ACTIVITY
                   ? adm::DLQ_TASK_KIND_SYNC_ACTIVITY
                   : adm::DLQ_TASK_KIND_HISTORY);
  out.set_scheduled_event_id(t.scheduled_event_id);
  return out;
}

absl::Status HistoryReplicator::MergeDlqSource(std::vector<persistence::ReplicationDlqTask>& tasks,
                                               MergeState& state) {
  if (tasks.empty()) return absl::OkStatus();
  const persistence::ReplicationDlqKey& source = tasks.front().key;
  auto workflow_of = [](const persistence::ReplicationDlqTask& t) {
    return std::make_tuple(t.key.source_cluster, t.key.source_shard, t.namespace_id, t.workflow_id);
  };
  std::optional<persistence::RemoteClusterRecord> remote;
  for (const persistence::StoredRemoteCluster& r : clusters_.Remotes()) {
    if (r.record.name() == source.source_cluster) remote = r.record;
  }
  // The source rebuilds the tasks as they are now (Temporal's GetDLQReplicationMessages):
  // events from the branch holding them, an activity's current state.
  absl::Status fetched;
  std::map<int64_t, const adm::HistoryReplicationTask*> rebuilt;
  adm::GetDLQReplicationMessagesResponse got;
  if (!remote.has_value()) {
    fetched = absl::FailedPreconditionError(
        absl::StrCat("cluster ", source.source_cluster,
                     " is no longer a remote cluster: its tasks cannot be fetched again (purge "
                     "its DLQ instead)"));
  } else {
    adm::GetDLQReplicationMessagesRequest req;
    req.set_cluster_name(clusters_.current_cluster_name());
    for (const persistence::ReplicationDlqTask& t : tasks) {
      if (state.stuck.contains(workflow_of(t))) continue;
      adm::ReplicationTaskInfo* info = req.add_task_infos();
      info->set_task_id(t.key.task_id);
      auto* task = info->mutable_task();
      task->set_namespace_id(t.namespace_id);
      task->set_workflow_id(t.workflow_id);
      task->set_run_id(t.run_id);
      task->set_first_event_id(t.first_event_id);
      task->set_next_event_id(t.next_event_id);
      task->set_version(t.version);
      task->set_kind(t.kind);
      task->set_scheduled_event_id(t.scheduled_event_id);
    }
    if (!req.task_infos().empty()) {
      absl::StatusOr<adm::GetDLQReplicationMessagesResponse> answer =
          remotes_.GetDlqReplicationMessages(remote->address(), req);
      if (answer.ok()) {
        got = *std::move(answer);
        for (const adm::HistoryReplicationTask& t : got.replication_tasks()) rebuilt[t.task_id()] = &t;
      } else {
        fetched = absl::Status(answer.status().code(),
                               absl::StrCat("fetching the task again from cluster ",
                                            source.source_cluster, ": ", answer.status().message()));
      }
    }
  }
  for (persistence::ReplicationDlqTask& task : tasks) {
    if (state.stuck.contains(workflow_of(task))) {
      state.out.set_remaining_tasks(state.out.remaining_tasks() + 1);
      continue;
    }
    absl::Status s = fetched;
    if (s.ok()) {
      // Nothing rebuilt: nothing to apply (the run or the activity is gone at the source,
      // or the activity's state went with an earlier task of this call).
      auto it = rebuilt.find(task.key.task_id);
      if (it != rebuilt.end()) s = ApplyTask(*remote, *it->second);
    }
    if (s.ok()) {
      if (absl::Status d = replication_.DeleteReplicationDlqTask(task.key); !d.ok()) return d;
      state.out.set_merged_tasks(state.out.merged_tasks() + 1);
      ++state.merged_per_shard[{task.key.source_cluster, task.key.source_shard}];
      continue;
    }
    state.stuck.insert(workflow_of(task));
    state.out.set_remaining_tasks(state.out.remaining_tasks() + 1);
    task.last_error = std::string(s.message().substr(0, 2000));
    if (absl::Status put = replication_.PutReplicationDlqTask(task); !put.ok()) return put;
    if (state.out.failed_size() < 100) *state.out.add_failed() = DlqTaskProto(task);
  }
  return absl::OkStatus();
}

absl::StatusOr<adm::MergeDLQMessagesResponse> HistoryReplicator::MergeDlq(
    const persistence::ReplicationDlqSelection& selection) {
  if (faults_ != nullptr) faults_->Refresh();
  std::lock_guard apply(apply_mu_);
  MergeState state;
  persistence::ReplicationDlqKey after;
  constexpr int kMaxPages = 1000;  // 100,000 tasks a call; the rest is left for the next one
  for (int page = 0; page < kMaxPages; ++page) {
    absl::StatusOr<std::vector<persistence::ReplicationDlqTask>> tasks =
        replication_.ReadReplicationDlq(selection, after, kPageSize);
    if (!tasks.ok()) return tasks.status();
    if (tasks->empty()) break;
    after = tasks->back().key;
    // The page in runs of one source shard (it is in key order): one call rebuilds a run.
    std::vector<persistence::ReplicationDlqTask> run;
    for (persistence::ReplicationDlqTask& task : *tasks) {
      if (!run.empty() && (run.front().key.source_cluster != task.key.source_cluster ||
                           run.front().key.source_shard != task.key.source_shard)) {
        if (absl::Status s = MergeDlqSource(run, state); !s.ok()) return s;
        run.clear();
      }
      run.push_back(std::move(task));
    }
    if (absl::Status s = MergeDlqSource(run, state); !s.ok()) return s;
  }
  for (const auto& [shard, merged] : state.merged_per_shard) {
    logger_.Info("replication DLQ merged", {{"cluster", shard.first},
                                            {"shard", absl::StrCat(shard.second)},
                                            {"tasks", absl::StrCat(merged)}});
  }
  return std::move(state.out);
}

std::map<std::pair<std::string, int32_t>, HistoryReplicator::ShardProgress>
HistoryReplicator::Progress() const {
  std::lock_guard lock(mu_);
  return progress_;
}

}  // namespace tock::server::replication
