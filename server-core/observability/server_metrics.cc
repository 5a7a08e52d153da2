#include "server-core/observability/server_metrics.h"

namespace tock::server {

ServerMetrics::ServerMetrics(MetricsRegistry& r) {
  const char* outcomes =
      "Workflow runs closed, by how they closed (Temporal's workflow_<outcome>).";
  workflow_success = r.Counter("workflow_success_total", outcomes);
  workflow_failed = r.Counter("workflow_failed_total", outcomes);
  workflow_timeout = r.Counter("workflow_timeout_total", outcomes);
  workflow_terminate = r.Counter("workflow_terminate_total", outcomes);
  workflow_cancel = r.Counter("workflow_cancel_total", outcomes);
  workflow_continued_as_new = r.Counter("workflow_continued_as_new_total", outcomes);

  const char* s2s = "Seconds from a task's scheduling to a worker's poll taking it.";
  workflow_task_schedule_to_start_latency =
      r.Histogram("task_schedule_to_start_latency", s2s, {{"task_type", "Workflow"}});
  activity_task_schedule_to_start_latency =
      r.Histogram("task_schedule_to_start_latency", s2s, {{"task_type", "Activity"}});

  activity_eager_execution = r.Counter(
      "activity_eager_execution_total",
      "Activities started in a workflow task's completion and handed back in its answer.");
  workflow_eager_execution = r.Counter(
      "workflow_eager_execution_total",
      "Workflows whose first workflow task was handed back in the start's answer.");
  workflow_eager_execution_denied = r.Counter(
      "workflow_eager_execution_denied_total",
      "Eager starts asked for and answered without the workflow task.");

  const char* polls = "Long polls waiting for a task now (connected, idle pollers).";
  workflow_pending_polls = r.Gauge("pending_polls", polls, {{"task_type", "Workflow"}});
  activity_pending_polls = r.Gauge("pending_polls", polls, {{"task_type", "Activity"}});

  timer_task_latency = r.Histogram(
      "task_latency_queue", "Seconds from a task's due time to its processing (timer lateness).",
      {{"task_category", "timer"}});

  archiver_backlog =
      r.Gauge("archiver_backlog", "Closed runs queued for archival and not finished yet.");
  history_archive_success =
      r.Counter("history_archiver_archive_success_total", "Histories archived.");
  history_archive_failures = r.Counter("history_archiver_archive_transient_error_total",
                                       "Failed attempts to archive a history (retried).");
  visibility_archive_success =
      r.Counter("visibility_archiver_archive_success_total", "Visibility records archived.");
  visibility_archive_failures =
      r.Counter("visibility_archiver_archive_transient_error_total",
                "Failed attempts to archive a visibility record (retried).");

  workflow_cleanup_delete = r.Counter("workflow_cleanup_delete_total",
                                      "Closed runs deleted because their retention passed.");
  const char* task_errors = "Background tasks that failed and will be retried.";
  timer_task_errors = r.Counter("task_errors_total", task_errors, {{"task_category", "timer"}});
  transfer_task_errors =
      r.Counter("task_errors_total", task_errors, {{"task_category", "transfer"}});
  const char* pass_errors = "Background passes (retention scan, archiver) that failed.";
  retention_scan_errors =
      r.Counter("background_pass_errors_total", pass_errors, {{"component", "retention"}});
  archiver_pass_errors =
      r.Counter("background_pass_errors_total", pass_errors, {{"component", "archiver"}});
}

}  // namespace tock::server
