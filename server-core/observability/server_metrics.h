// The engine-level metrics of one tock-server, as handles resolved once at start: the history
// engine, matching, the timers, the archiver and the retention scanner each get this struct
// (by const reference) and call its handles on their paths. The wire edge (requests, errors,
// latency per RPC method) lives in rpc::Dispatcher, persistence calls in
// persistence::ObservedPersistence.
//
// Names are Temporal's (common/metrics/metric_defs.go) with Prometheus' `_total` suffix on
// counters (what Temporal's OpenTelemetry exporter adds by default) and durations in seconds.
// No namespace label: a label set chosen per call would need a lookup per call.
//
// A default-constructed ServerMetrics (or one built over a disabled registry) does nothing.
// Thread safety: the handles are safe from any thread; the struct is read-only after
// construction.
#pragma once

#include "lib/common/metrics.h"

namespace tock::server {

struct ServerMetrics {
  ServerMetrics() = default;
  explicit ServerMetrics(MetricsRegistry& registry);

  // How runs closed (Temporal: workflow_success, workflow_failed, ...): one increment per
  // run, in the transaction's aftermath (after the commit succeeded).
  metrics::Counter workflow_success;           // completed
  metrics::Counter workflow_failed;            // failed
  metrics::Counter workflow_timeout;           // timed out (run or execution timeout)
  metrics::Counter workflow_terminate;         // terminated
  metrics::Counter workflow_cancel;            // cancelled
  metrics::Counter workflow_continued_as_new;  // continued as new (cron and retry included)

  // From a task's scheduling (it was written) to a worker's poll taking it (Temporal's
  // task_schedule_to_start_latency, task_type "Workflow" / "Activity").
  metrics::Histogram workflow_task_schedule_to_start_latency;
  metrics::Histogram activity_task_schedule_to_start_latency;

  // Eager dispatch (Temporal's activity_eager_execution, workflow_eager_execution and
  // workflow_eager_execution_denied): activities handed back in a workflow task's completion,
  // first workflow tasks handed back in the start's answer, and eager starts asked for and
  // refused (namespace switched off, a start delay or cron wait, a retried start).
  metrics::Counter activity_eager_execution;
  metrics::Counter workflow_eager_execution;
  metrics::Counter workflow_eager_execution_denied;

  // Long polls waiting now, i.e. the pollers connected and idle (Temporal's pending_polls,
  // task_type "Workflow" / "Activity"): +1 when a poll starts waiting, -1 when it is answered,
  // expires or is cancelled.
  metrics::Gauge workflow_pending_polls;
  metrics::Gauge activity_pending_polls;

  // Timer lateness: how long after its fire time a durable timer actually fired (Temporal's
  // task_latency_queue, the time since the task's visibility time, task_category "timer").
  metrics::Histogram timer_task_latency;

  // The archiver: runs queued and not finished (set after each pass), each archived target,
  // each failed attempt (Temporal's history_/visibility_archiver_archive_success and
  // _transient_error).
  metrics::Gauge archiver_backlog;
  metrics::Counter history_archive_success;
  metrics::Counter history_archive_failures;
  metrics::Counter visibility_archive_success;
  metrics::Counter visibility_archive_failures;

  // Closed runs deleted because their namespace's retention passed (Temporal's
  // workflow_cleanup_delete), by the retention scanner or by the archiver after archiving.
  metrics::Counter workflow_cleanup_delete;
  // Failed background work, one per failure (each is also logged): a timer or a transfer
  // task that failed and will be retried (Temporal's task_errors, task_category "timer" /
  // "transfer"), a retention scan or an archiver pass that failed
  // (background_pass_errors_total, component "retention" / "archiver").
  metrics::Counter timer_task_errors;
  metrics::Counter transfer_task_errors;
  metrics::Counter retention_scan_errors;
  metrics::Counter archiver_pass_errors;
};

// Handles that do nothing, for engines that were given no metrics.
inline const ServerMetrics kNoServerMetrics{};

}  // namespace tock::server
