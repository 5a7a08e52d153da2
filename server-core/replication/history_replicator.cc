#include "server-core/replication/history_replicator.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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
      const auto& t = row.task;
      absl::StatusOr<bool> listed = NamespaceListsCluster(t.namespace_id(), caller);
      if (!listed.ok()) return listed.status();
      if (!*listed) continue;
      // The run and its events as they are now; a run deleted since is skipped (Temporal
      // skips tasks whose run is gone, so one missing run never blocks the queue).
      absl::StatusOr<persistence::MutableStateRecord> run =
          executions_.GetRun(t.namespace_id(), t.workflow_id(), t.run_id());
      if (absl::IsNotFound(run.status())) continue;
      if (!run.ok()) return run.status();
      if (t.kind() == tock::persistence::v1::ReplicationTask::KIND_SYNC_ACTIVITY) {
        AddSyncActivityTask(*run, row.task_id, t, sent_activities, *messages);
        continue;
      }
      absl::StatusOr<std::vector<persistence::HistoryEvent>> events =
          executions_.ReadEvents(t.run_id(), t.first_event_id(), t.next_event_id(),
                                 static_cast<int32_t>(t.next_event_id() - t.first_event_id()));
      if (!events.ok()) return events.status();
      if (events->empty()) continue;
      adm::HistoryReplicationTask* task = messages->add_tasks();
      task->set_task_id(row.task_id);
      task->set_namespace_id(t.namespace_id());
      task->set_workflow_id(t.workflow_id());
      task->set_run_id(t.run_id());
      const auto& histories = run->version_histories();
      if (histories.histories_size() > 0) {
        *task->mutable_version_history_items() =
            histories.histories(histories.current_version_history_index()).items();
      }
      for (persistence::HistoryEvent& e : *events) *task->add_events() = std::move(e);
    }
  }
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
  const int64_t end = req.end_event_id() == 0 ? run->next_event_id() : req.end_event_id();
  const int32_t page = req.maximum_page_size() == 0
                           ? kMaxRawHistoryPage
                           : std::min(req.maximum_page_size(), kMaxRawHistoryPage);
  adm::GetWorkflowExecutionRawHistoryResponse out;
  const auto& histories = run->version_histories();
  if (histories.histories_size() > 0) {
    *out.mutable_version_history_items() =
        histories.histories(histories.current_version_history_index()).items();
  }
  if (first >= end) return out;
  absl::StatusOr<std::vector<persistence::HistoryEvent>> events =
      executions_.ReadEvents(req.run_id(), first, end, page);
  if (!events.ok()) return events.status();
  for (persistence::HistoryEvent& e : *events) *out.add_events() = std::move(e);
  if (!out.events().empty() && out.events().rbegin()->event_id() + 1 < end) {
    out.set_next_page_token(absl::StrCat(out.events().rbegin()->event_id() + 1));
  }
  return out;
}

absl::Status HistoryReplicator::ApplyTask(const persistence::RemoteClusterRecord& remote,
                                          const adm::HistoryReplicationTask& task) {
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
  absl::Status first_error;
  for (const persistence::StoredRemoteCluster& remote : clusters_.Remotes()) {
    if (!remote.record.connection_enabled()) continue;
    absl::Status s = Pull(remote.record);
    if (!s.ok() && first_error.ok()) {
      first_error = absl::Status(
          s.code(), absl::StrCat("from cluster ", remote.record.name(), ": ", s.message()));
    }
  }
  return first_error;
}

absl::Status HistoryReplicator::Pull(const persistence::RemoteClusterRecord& remote) {
  adm::GetReplicationMessagesRequest req;
  req.set_cluster_name(clusters_.current_cluster_name());
  {
    std::lock_guard lock(mu_);
    for (int32_t s = 1; s <= remote.history_shard_count(); ++s) {
      // The remote's shard s holds the workflows of local shard s when the counts are equal
      // (the same hash of the same namespace id and workflow id); with counts that are
      // multiples, of the local shard it folds onto.
      if (!shards_.owns((s - 1) % shards_.count + 1)) continue;
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
  absl::Status failed;
  for (const adm::ReplicationMessages& shard : got->shard_messages()) {
    int64_t through = shard.last_retrieved_message_id();
    int64_t applied = 0;
    std::string error;
    for (const adm::HistoryReplicationTask& task : shard.tasks()) {
      absl::Status s = ApplyTask(remote, task);
      if (!s.ok()) {
        through = task.task_id() - 1;
        error = std::string(s.message().substr(0, 500));
        if (failed.ok()) failed = s;
        break;
      }
      ++applied;
    }
    std::lock_guard lock(mu_);
    ShardProgress& p = progress_[{remote.name(), shard.shard_id()}];
    // A task that failed before any was retrieved keeps the cursor where it was.
    if (through >= p.last_retrieved || p.last_retrieved < 0) p.last_retrieved = through;
    p.tasks_applied += applied;
    p.last_pull = absl::Now();
    p.last_error = error;
  }
  return failed;
}

std::map<std::pair<std::string, int32_t>, HistoryReplicator::ShardProgress>
HistoryReplicator::Progress() const {
  std::lock_guard lock(mu_);
  return progress_;
}

}  // namespace tock::server::replication
