// SignalWithStartWorkflowExecution: signal the running run, or start one that carries the
// signal, under the workflow id's lock. A new run is written in one commit whose history is
// WorkflowExecutionStarted, WorkflowExecutionSignaled, WorkflowTaskScheduled (as Temporal
// writes it), so the first workflow task always sees the signal.
#include "absl/strings/str_cat.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/request_limits.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;

// A run can close between reading the current run and signalling it; then a new one is
// started. Bounded: each round either signals, starts, or saw the run close.
constexpr int kSignalOrStartRounds = 3;

wf::StartWorkflowExecutionRequest StartRequestOf(
    const wf::SignalWithStartWorkflowExecutionRequest& req) {
  wf::StartWorkflowExecutionRequest start;
  start.set_namespace_(req.namespace_());
  start.set_workflow_id(req.workflow_id());
  *start.mutable_workflow_type() = req.workflow_type();
  *start.mutable_task_queue() = req.task_queue();
  *start.mutable_input() = req.input();
  *start.mutable_workflow_execution_timeout() = req.workflow_execution_timeout();
  *start.mutable_workflow_run_timeout() = req.workflow_run_timeout();
  *start.mutable_workflow_task_timeout() = req.workflow_task_timeout();
  if (req.has_workflow_start_delay()) *start.mutable_workflow_start_delay() = req.workflow_start_delay();
  start.set_identity(req.identity());
  start.set_request_id(req.request_id());
  start.set_workflow_id_reuse_policy(req.workflow_id_reuse_policy());
  // The running run is signalled, never a conflict; a start happens only when none runs.
  start.set_workflow_id_conflict_policy(enums::WORKFLOW_ID_CONFLICT_POLICY_FAIL);
  if (req.has_retry_policy()) *start.mutable_retry_policy() = req.retry_policy();
  start.set_cron_schedule(req.cron_schedule());
  *start.mutable_memo() = req.memo();
  *start.mutable_search_attributes() = req.search_attributes();
  *start.mutable_header() = req.header();
  if (req.has_user_metadata()) *start.mutable_user_metadata() = req.user_metadata();
  if (req.has_versioning_override()) *start.mutable_versioning_override() = req.versioning_override();
  return start;
}

bool IsClosedRun(const absl::Status& s) {
  return s.code() == absl::StatusCode::kNotFound;  // "already completed", or deleted meanwhile
}

}  // namespace

absl::StatusOr<wf::SignalWithStartWorkflowExecutionResponse> HistoryEngine::SignalWithStartWorkflow(
    const NamespaceRef& ns, const wf::SignalWithStartWorkflowExecutionRequest& req) {
  if (absl::Status s = ValidateSignalFields(req.signal_name(), req.signal_input(), req.header(),
                                            limits_);
      !s.ok()) {
    return s;
  }
  const wf::StartWorkflowExecutionRequest start = StartRequestOf(req);
  const absl::Time now = clock_.Now();
  absl::StatusOr<absl::Duration> cron_wait = ValidateStart(ns, start, now);
  if (!cron_wait.ok()) return cron_wait.status();
  StartSignal signal{req.signal_name(), req.signal_input(), req.header(), req.identity(),
                     req.request_id().empty() ? "" : req.request_id() + ":signal"};

  std::shared_ptr<std::mutex> id_lock = IdLock(ns.id, req.workflow_id());
  std::lock_guard lock(*id_lock);
  for (int round = 0; round < kSignalOrStartRounds; ++round) {
    absl::StatusOr<persistence::CurrentRun> current = store_.GetCurrentRun(ns.id, req.workflow_id());
    if (!current.ok() && current.status().code() != absl::StatusCode::kNotFound) {
      return current.status();
    }
    if (current.ok() && current->status == enums::WORKFLOW_EXECUTION_STATUS_RUNNING) {
      wf::SignalWorkflowExecutionRequest to_run;
      to_run.mutable_workflow_execution()->set_workflow_id(req.workflow_id());
      to_run.mutable_workflow_execution()->set_run_id(current->run_id);
      to_run.set_signal_name(signal.name);
      *to_run.mutable_input() = signal.input;
      to_run.set_identity(signal.identity);
      to_run.set_request_id(signal.request_id);
      *to_run.mutable_header() = signal.header;
      absl::Status s = SignalWorkflow(ns, to_run);
      if (s.ok()) {
        wf::SignalWithStartWorkflowExecutionResponse out;
        out.set_run_id(current->run_id);
        out.set_started(false);
        return out;
      }
      if (!IsClosedRun(s)) return s;
      continue;  // it closed meanwhile: look again
    }
    absl::StatusOr<wf::StartWorkflowExecutionResponse> started =
        StartLocked(ns, start, std::nullopt, &signal, now, *cron_wait);
    if (!started.ok()) {
      // A continue-as-new, retry or cron run may have become current meanwhile (those are
      // not made under this lock): signal it in the next round.
      if (started.status().code() == absl::StatusCode::kAlreadyExists) {
        absl::StatusOr<persistence::CurrentRun> now_current =
            store_.GetCurrentRun(ns.id, req.workflow_id());
        if (now_current.ok() && now_current->status == enums::WORKFLOW_EXECUTION_STATUS_RUNNING) {
          continue;
        }
      }
      return started.status();
    }
    wf::SignalWithStartWorkflowExecutionResponse out;
    out.set_run_id(started->run_id());
    out.set_started(started->started());
    return out;
  }
  return absl::AbortedError(
      "the workflow's runs kept closing while the signal was delivered; try again");
}

}  // namespace tock::server::history
