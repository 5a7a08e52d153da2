#include "server-core/worker/retention_scanner.h"

#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::server::worker {

namespace wf = temporal::api::workflowservice::v1;

RetentionScanner::RetentionScanner(namespaces::NamespaceEngine& namespaces,
                                   persistence::VisibilityStore& visibility,
                                   history::HistoryEngine& history, Clock& clock, OwnsRun owns_run,
                                   absl::Duration interval)
    : namespaces_(namespaces),
      visibility_(visibility),
      history_(history),
      clock_(clock),
      owns_run_(std::move(owns_run)),
      interval_(interval) {}

void RetentionScanner::Start(Logger& logger, const ServerMetrics& metrics) {
  metrics_ = &metrics;
  // An error (database busy) is logged and retried with backoff.
  thread_.emplace(interval_, [this] { return ScanNow().status(); },
                  PeriodicThread::Observers{"retention scan", &logger, metrics.retention_scan_errors});
}

absl::StatusOr<int64_t> RetentionScanner::ScanNow() {
  std::lock_guard lock(scan_mu_);
  return ScanLocked();
}

absl::StatusOr<int64_t> RetentionScanner::ScanAfter(const std::function<void()>& change) {
  std::lock_guard lock(scan_mu_);
  change();
  return ScanLocked();
}

absl::StatusOr<int64_t> RetentionScanner::ScanLocked() {
  int64_t deleted = 0;
  wf::ListNamespacesRequest list;
  list.set_page_size(100);
  list.mutable_namespace_filter()->set_include_deleted(true);
  while (true) {
    absl::StatusOr<wf::ListNamespacesResponse> page = namespaces_.List(list);
    if (!page.ok()) return page.status();
    for (const auto& ns : page->namespaces()) {
      const auto& config = ns.config();
      const absl::Time cutoff =
          clock_.Now() - FromProtoDuration(config.workflow_execution_retention_ttl());
      history::NamespaceRef ref{ns.namespace_info().id(), ns.namespace_info().name(),
                                ns.failover_version()};
      absl::StatusOr<int64_t> n = ScanNamespace(ref, cutoff);
      if (!n.ok()) return n.status();
      deleted += *n;
    }
    if (page->next_page_token().empty()) break;
    list.set_next_page_token(page->next_page_token());
  }
  return deleted;
}

absl::StatusOr<int64_t> RetentionScanner::ScanNamespace(const history::NamespaceRef& ns,
                                                        absl::Time cutoff) {
  constexpr int32_t kBatch = 500;
  int64_t deleted = 0;
  // Paged with a cursor: the runs of shards other hosts own are left in place, so a query
  // that relied on each batch being deleted would return them again. The bound stops a scan
  // that cannot make progress.
  persistence::ClosedRunCursor after;
  for (int round = 0; round < 10'000; ++round) {
    // Runs queued for the archiver are left out: they are its to delete, after archiving.
    auto due = visibility_.ListClosedBefore(ns.id, cutoff, after, kBatch);
    if (!due.ok()) return due.status();
    if (due->empty()) break;
    for (const auto& info : *due) {
      if (!owns_run_(ns.id, info.execution().workflow_id())) continue;  // its owner's
      wf::DeleteWorkflowExecutionRequest req;
      req.set_namespace_(ns.name);
      *req.mutable_workflow_execution() = info.execution();
      absl::Status s = history_.DeleteWorkflow(ns, req);
      // The shard moved away meanwhile (UNAVAILABLE, fenced): its new owner deletes the run.
      if (history::IsNotOwnedHere(s.code(), s.message())) continue;
      if (!s.ok() && s.code() != absl::StatusCode::kNotFound) return s;
      ++deleted;
      metrics_->workflow_cleanup_delete.Increment();
    }
    const auto& last = due->back();
    after = {absl::ToUnixMillis(FromProtoTime(last.close_time())), last.execution().run_id()};
    if (due->size() < static_cast<size_t>(kBatch)) break;
  }
  return deleted;
}

}  // namespace tock::server::worker
