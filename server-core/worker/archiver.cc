#include "server-core/worker/archiver.h"

#include <cstdlib>
#include <map>

#include "absl/strings/str_cat.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "server-core/history/run_transaction.h"

namespace tock::server::worker {
namespace enums = temporal::api::enums::v1;
namespace wf = temporal::api::workflowservice::v1;
namespace admin_pb = tock::admin::v1;
using persistence::ArchivalQueueRow;
using persistence::ArchivalStep;

namespace {

constexpr int32_t kBatch = 100;

}  // namespace

struct Archiver::Namespace {
  std::string id;
  std::string name;
  int64_t failover_version = 0;
  absl::Duration retention;
  bool history_enabled = false;  // cluster and namespace
  std::string history_uri;
  bool visibility_enabled = false;
  std::string visibility_uri;
  enums::ArchivalState history_state = enums::ARCHIVAL_STATE_DISABLED;
  enums::ArchivalState visibility_state = enums::ARCHIVAL_STATE_DISABLED;
};

Archiver::Archiver(namespaces::NamespaceEngine& namespaces, persistence::ArchivalQueueStore& queue,
                   persistence::ExecutionStore& executions, history::HistoryEngine& history,
                   archiver::ArchiveRegistry& archives, Clock& clock, OwnsRun owns_run,
                   absl::Duration poll_interval)
    : namespaces_(namespaces),
      queue_(queue),
      executions_(executions),
      history_(history),
      archives_(archives),
      clock_(clock),
      owns_run_(std::move(owns_run)),
      poll_interval_(poll_interval) {}

void Archiver::Start(Logger& logger, const ServerMetrics& metrics) {
  logger_ = &logger;
  metrics_ = &metrics;
  // Failures are recorded per run and retried; a pass that fails as a whole (database busy)
  // is logged and retried with backoff.
  thread_.emplace(poll_interval_, [this] { return RunOnce().status(); },
                  PeriodicThread::Observers{"archiver pass", logger_, metrics_->archiver_pass_errors});
}

void Archiver::Wake() {
  if (thread_) thread_->Wake();
}

absl::StatusOr<Archiver::Namespace> Archiver::LoadNamespace(const std::string& id,
                                                            const std::string& name) {
  wf::DescribeNamespaceRequest req;
  if (!id.empty()) {
    req.set_id(id);
  } else {
    req.set_namespace_(name);
  }
  absl::StatusOr<wf::DescribeNamespaceResponse> d = namespaces_.Describe(req);
  if (!d.ok()) return d.status();
  const auto& config = d->config();
  Namespace ns;
  ns.id = d->namespace_info().id();
  ns.name = d->namespace_info().name();
  ns.failover_version = d->failover_version();
  ns.retention = FromProtoDuration(config.workflow_execution_retention_ttl());
  ns.history_state = config.history_archival_state();
  ns.visibility_state = config.visibility_archival_state();
  ns.history_uri = config.history_archival_uri();
  ns.visibility_uri = config.visibility_archival_uri();
  ns.history_enabled = archives_.history_setup().enabled &&
                       ns.history_state == enums::ARCHIVAL_STATE_ENABLED && !ns.history_uri.empty();
  ns.visibility_enabled = archives_.visibility_setup().enabled &&
                          ns.visibility_state == enums::ARCHIVAL_STATE_ENABLED &&
                          !ns.visibility_uri.empty();
  return ns;
}

absl::Status Archiver::Save(ArchivalQueueRow& row) { return queue_.Put(row); }

void Archiver::RecordFailure(ArchivalQueueRow& row, const absl::Status& error) {
  row.attempts += 1;
  (row.visibility == ArchivalStep::kPending ? metrics_->visibility_archive_failures
                                            : metrics_->history_archive_failures)
      .Increment();
  if ((row.attempts & (row.attempts - 1)) == 0) {  // attempts 1, 2, 4, 8...
    logger_->Warn("archiving a run failed; retrying with backoff",
                  {{"namespace_id", row.namespace_id}, {"workflow_id", row.workflow_id},
                   {"run_id", row.run_id}, {"attempt", absl::StrCat(row.attempts)},
                   {"error", error.ToString()}});
  }
  row.last_error = std::string(error.message());
  const int shift = std::min(row.attempts - 1, 6);
  row.next_attempt = clock_.Now() + std::min(absl::Seconds(1 << shift), absl::Minutes(1));
  (void)queue_.Put(row);  // a database error here is retried with the step
}

absl::Status Archiver::ArchiveVisibility(const Namespace& ns, ArchivalQueueRow& row) {
  if (!ns.visibility_enabled) {
    row.visibility = ArchivalStep::kSkipped;
    return Save(row);
  }
  absl::StatusOr<persistence::MutableStateRecord> run =
      executions_.GetRun(ns.id, row.workflow_id, row.run_id);
  if (!run.ok()) {
    if (run.status().code() == absl::StatusCode::kNotFound) {  // deleted by an operator
      row.visibility = ArchivalStep::kSkipped;
      return Save(row);
    }
    RecordFailure(row, run.status());
    return run.status();
  }
  const auto info = history::ExecutionSummary(*run);
  tock::archiver::v1::VisibilityRecord record;
  record.set_namespace_id(ns.id);
  record.set_namespace_(ns.name);
  record.set_workflow_id(row.workflow_id);
  record.set_run_id(row.run_id);
  record.set_workflow_type_name(info.type().name());
  *record.mutable_start_time() = info.start_time();
  *record.mutable_execution_time() = info.execution_time();
  *record.mutable_close_time() = info.close_time();
  record.set_status(info.status());
  record.set_history_length(info.history_length());
  if (info.memo().fields_size() > 0) *record.mutable_memo() = info.memo();
  record.set_history_archival_uri(ns.history_uri);
  *record.mutable_execution_duration() = info.execution_duration();
  absl::StatusOr<archival::VisibilityArchive*> archive = archives_.Visibility(ns.visibility_uri);
  absl::Status s = archive.ok() ? (*archive)->Archive(record) : archive.status();
  if (!s.ok()) {
    RecordFailure(row, s);
    return s;
  }
  row.visibility = ArchivalStep::kArchived;
  metrics_->visibility_archive_success.Increment();
  row.attempts = 0;
  row.last_error.clear();
  return Save(row);
}

absl::Status Archiver::ArchiveHistory(const Namespace& ns, ArchivalQueueRow& row) {
  if (!ns.history_enabled) {
    row.history = ArchivalStep::kSkipped;
    return Save(row);
  }
  absl::StatusOr<persistence::MutableStateRecord> run =
      executions_.GetRun(ns.id, row.workflow_id, row.run_id);
  if (!run.ok()) {
    if (run.status().code() == absl::StatusCode::kNotFound) {  // deleted by an operator
      row.history = ArchivalStep::kSkipped;
      row.run_deleted = true;
      return Save(row);
    }
    RecordFailure(row, run.status());
    return run.status();
  }
  absl::StatusOr<std::vector<persistence::HistoryEvent>> events =
      executions_.ReadEvents(row.run_id, 1, run->next_event_id(), INT32_MAX);
  absl::Status s = events.status();
  if (s.ok()) {
    absl::StatusOr<archival::HistoryArchive*> archive = archives_.History(ns.history_uri);
    s = archive.ok() ? (*archive)->Archive({ns.id, ns.name, row.workflow_id, row.run_id}, *events)
                     : archive.status();
  }
  if (!s.ok()) {
    RecordFailure(row, s);
    return s;
  }
  if (after_history_upload_) after_history_upload_(row.run_id);
  row.history = ArchivalStep::kArchived;
  metrics_->history_archive_success.Increment();
  row.attempts = 0;
  row.last_error.clear();
  return Save(row);
}

absl::Status Archiver::DeleteRun(const Namespace& ns, ArchivalQueueRow& row) {
  if (row.run_deleted) return absl::OkStatus();
  wf::DeleteWorkflowExecutionRequest req;
  req.set_namespace_(ns.name);
  req.mutable_workflow_execution()->set_workflow_id(row.workflow_id);
  req.mutable_workflow_execution()->set_run_id(row.run_id);
  absl::Status s = history_.DeleteWorkflow({ns.id, ns.name, ns.failover_version}, req);
  // The shard moved away meanwhile (the delete was fenced): no failure of the run's, its new
  // owner deletes it.
  if (history::IsNotOwnedHere(s.code(), s.message())) return s;
  if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
    RecordFailure(row, s);
    return s;
  }
  row.run_deleted = true;
  metrics_->workflow_cleanup_delete.Increment();
  return Save(row);
}

absl::StatusOr<int64_t> Archiver::RunOnce() {
  std::lock_guard lock(pass_mu_);
  absl::StatusOr<int64_t> done = PassLocked();
  // The backlog: runs whose archival is not finished (their history still to archive, or
  // the run still to delete), across namespaces.
  if (absl::StatusOr<std::vector<std::string>> live = queue_.NamespacesWithLiveRuns(); live.ok()) {
    int64_t backlog = 0;
    for (const std::string& ns : *live) {
      absl::StatusOr<persistence::ArchivalCounts> counts = queue_.Counts(ns);
      if (counts.ok()) {
        backlog += counts->history[static_cast<int>(ArchivalStep::kPending)];
      }
    }
    metrics_->archiver_backlog.Set(static_cast<double>(backlog));
  }
  return done;
}

int64_t Archiver::ForEachInParallel(std::vector<ArchivalQueueRow>& rows,
                                    const std::function<int64_t(ArchivalQueueRow&)>& step) {
  std::mutex mu;
  std::condition_variable all_done;
  size_t left = rows.size();
  int64_t total = 0;
  for (ArchivalQueueRow& row : rows) {
    auto job = [&, row_ptr = &row] {
      const int64_t n = step(*row_ptr);
      std::lock_guard lock(mu);
      total += n;
      if (--left == 0) all_done.notify_all();
    };
    if (!steps_.Run(job)) job();  // the pool is full or stopping: do it here
  }
  std::unique_lock lock(mu);
  all_done.wait(lock, [&] { return left == 0; });
  return total;
}

std::vector<ArchivalQueueRow> Archiver::Owned(std::vector<ArchivalQueueRow> rows) const {
  std::erase_if(rows, [&](const ArchivalQueueRow& row) {
    return !owns_run_(row.namespace_id, row.workflow_id);
  });
  return rows;
}

absl::StatusOr<int64_t> Archiver::PassLocked() {
  const absl::Time now = clock_.Now();
  int64_t done = 0;
  std::map<std::string, absl::StatusOr<Namespace>> known;
  auto namespace_of = [&](const std::string& id) -> const absl::StatusOr<Namespace>& {
    auto it = known.find(id);
    if (it == known.end()) it = known.emplace(id, LoadNamespace(id, "")).first;
    return it->second;
  };

  // Visibility records of closed runs, a batch at a time, its runs in parallel. A failed row
  // gets a later next attempt, so the next batch moves on.
  // Rows of shards other hosts own are left to them: a batch with none of this host's ends
  // the loop (the same query would return it again).
  for (int round = 0; round < 1000; ++round) {
    absl::StatusOr<std::vector<ArchivalQueueRow>> all = queue_.VisibilityDue(now, kBatch);
    if (!all.ok()) return all.status();
    std::vector<ArchivalQueueRow> rows = Owned(*all);
    if (rows.empty()) break;
    for (const ArchivalQueueRow& row : rows) namespace_of(row.namespace_id);  // before the threads
    done += ForEachInParallel(rows, [&](ArchivalQueueRow& row) -> int64_t {
      const absl::StatusOr<Namespace>& ns = known.at(row.namespace_id);
      if (!ns.ok()) {
        RecordFailure(row, ns.status());
        return 0;
      }
      return ArchiveVisibility(*ns, row).ok() ? 1 : 0;
    });
    if (all->size() < static_cast<size_t>(kBatch)) break;
  }

  // Runs whose retention has passed: archive the history, then delete.
  absl::StatusOr<std::vector<std::string>> live = queue_.NamespacesWithLiveRuns();
  if (!live.ok()) return live.status();
  for (const std::string& id : *live) {
    const absl::StatusOr<Namespace>& ns = namespace_of(id);
    if (!ns.ok()) continue;  // retried at the next pass
    for (int round = 0; round < 1000; ++round) {
      absl::StatusOr<std::vector<ArchivalQueueRow>> all =
          queue_.RetentionDue(id, now - ns->retention, now, kBatch);
      if (!all.ok()) return all.status();
      std::vector<ArchivalQueueRow> rows = Owned(*all);
      const int64_t progress = ForEachInParallel(rows, [&](ArchivalQueueRow& row) -> int64_t {
        if (row.visibility == ArchivalStep::kPending) return 0;  // its record first
        int64_t steps = 0;
        if (row.history == ArchivalStep::kPending) {
          if (!ArchiveHistory(*ns, row).ok()) return 0;  // never delete unarchived
          ++steps;
        }
        if (DeleteRun(*ns, row).ok()) ++steps;
        return steps;
      });
      done += progress;
      if (all->size() < static_cast<size_t>(kBatch) || progress == 0) break;
    }
  }
  return done;
}

absl::StatusOr<admin_pb::TriggerArchivalResponse> Archiver::Trigger(
    const admin_pb::TriggerArchivalRequest& req) {
  if (req.workflow_id().empty()) {
    return absl::InvalidArgumentError("a workflow id is required (--workflow-id)");
  }
  absl::StatusOr<Namespace> ns = LoadNamespace("", req.namespace_());
  if (!ns.ok()) return ns.status();
  if (!ns->history_enabled && !ns->visibility_enabled) {
    return absl::FailedPreconditionError(absl::StrCat(
        "namespace \"", ns->name,
        "\" archives neither histories nor visibility records; enable it with tock namespace "
        "update ", ns->name, " --history-archival-state enabled",
        archives_.history_setup().enabled ? "" : " (and enable archival in the cluster config)"));
  }
  std::string run_id = req.run_id();
  if (run_id.empty()) {
    absl::StatusOr<persistence::CurrentRun> current =
        executions_.GetCurrentRun(ns->id, req.workflow_id());
    if (!current.ok()) {
      if (current.status().code() == absl::StatusCode::kNotFound) {
        return absl::NotFoundError(absl::StrCat("workflow \"", req.workflow_id(),
                                                "\" not found in namespace \"", ns->name, "\""));
      }
      return current.status();
    }
    run_id = current->run_id;
  }
  std::lock_guard lock(pass_mu_);
  absl::StatusOr<std::optional<ArchivalQueueRow>> queued = queue_.Get(ns->id, run_id);
  if (!queued.ok()) return queued.status();
  ArchivalQueueRow row;
  if (queued->has_value()) {
    row = **queued;
  } else {
    absl::StatusOr<persistence::MutableStateRecord> run =
        executions_.GetRun(ns->id, req.workflow_id(), run_id);
    if (!run.ok()) {
      if (run.status().code() == absl::StatusCode::kNotFound) {
        return absl::NotFoundError(absl::StrCat("workflow \"", req.workflow_id(), "\" run ",
                                                run_id, " not found in namespace \"", ns->name,
                                                "\""));
      }
      return run.status();
    }
    if (run->execution().status() == enums::WORKFLOW_EXECUTION_STATUS_RUNNING) {
      return absl::FailedPreconditionError(
          absl::StrCat("workflow \"", req.workflow_id(), "\" run ", run_id,
                       " is still running; only closed runs are archived"));
    }
    row.namespace_id = ns->id;
    row.run_id = run_id;
    row.workflow_id = req.workflow_id();
    row.close_time = FromProtoTime(run->execution().close_time());
  }
  if (row.visibility == ArchivalStep::kPending) {
    if (absl::Status s = ArchiveVisibility(*ns, row); !s.ok()) return s;
  }
  if (row.history == ArchivalStep::kPending && !row.run_deleted) {
    if (absl::Status s = ArchiveHistory(*ns, row); !s.ok()) return s;
  }
  admin_pb::TriggerArchivalResponse out;
  out.set_run_id(run_id);
  if (row.history == ArchivalStep::kArchived) out.set_history_archival_uri(ns->history_uri);
  if (row.visibility == ArchivalStep::kArchived) out.set_visibility_archival_uri(ns->visibility_uri);
  *out.mutable_delete_time() = ToProtoTime(row.close_time + ns->retention);
  return out;
}

absl::StatusOr<admin_pb::GetArchivalStatusResponse> Archiver::Status(
    const admin_pb::GetArchivalStatusRequest& req) {
  absl::StatusOr<Namespace> ns = LoadNamespace("", req.namespace_());
  if (!ns.ok()) return ns.status();
  absl::StatusOr<persistence::ArchivalCounts> counts = queue_.Counts(ns->id);
  if (!counts.ok()) return counts.status();
  absl::StatusOr<std::vector<ArchivalQueueRow>> failing =
      queue_.Failing(ns->id, req.max_failures() > 0 ? req.max_failures() : 20);
  if (!failing.ok()) return failing.status();
  admin_pb::GetArchivalStatusResponse out;
  out.set_namespace_(ns->name);
  out.set_namespace_id(ns->id);
  auto fill = [](admin_pb::ArchivalKindStatus& k, bool cluster, enums::ArchivalState state,
                 const std::string& uri, const int64_t (&steps)[3]) {
    k.set_cluster_enabled(cluster);
    k.set_state(state == enums::ARCHIVAL_STATE_ENABLED ? "enabled" : "disabled");
    k.set_uri(uri);
    k.set_pending(steps[0]);
    k.set_archived(steps[1]);
    k.set_skipped(steps[2]);
  };
  fill(*out.mutable_history(), archives_.history_setup().enabled, ns->history_state,
       ns->history_uri, counts->history);
  fill(*out.mutable_visibility(), archives_.visibility_setup().enabled, ns->visibility_state,
       ns->visibility_uri, counts->visibility);
  out.set_runs_deleted(counts->runs_deleted);
  out.set_failing(counts->failing);
  for (const ArchivalQueueRow& row : *failing) {
    admin_pb::ArchivalFailure* f = out.add_failures();
    f->set_workflow_id(row.workflow_id);
    f->set_run_id(row.run_id);
    f->set_attempts(row.attempts);
    f->set_last_error(row.last_error);
    *f->mutable_next_attempt_time() = ToProtoTime(row.next_attempt);
    *f->mutable_close_time() = ToProtoTime(row.close_time);
  }
  return out;
}

}  // namespace tock::server::worker
