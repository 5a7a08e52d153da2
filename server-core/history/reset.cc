// ResetWorkflowExecution, with Temporal's rules (service/history/api/resetworkflow,
// ndc/workflow_resetter): a new run whose history is the base run's up to the workflow task
// the reset point ends (the point is the event after its WorkflowTaskScheduled or
// WorkflowTaskStarted), that task failed with cause RESET_WORKFLOW, the base run's signals
// and accepted updates after the point reapplied (unless the reapply type says not; updates
// as WorkflowExecutionUpdateAdmitted events), and a new workflow task. The
// base run, if still running, is terminated in the same commit, and the new run becomes the
// workflow's current run. A run that is no longer the current one can be reset too: the
// current run, if running, is terminated first.
//
// The new run's state is rebuilt from the copied events: activities scheduled and not closed
// by the point are scheduled again (attempt 1, from now), timers started and not fired or
// cancelled fire when they would have (at once if that has passed), upserted search
// attributes and memo are those of the point. A point with a child workflow, or a signal or
// cancel request to another workflow, still pending is refused (as Temporal's resetter long
// did): resetting to a later workflow task avoids them.
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "lib/common/ids.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "server-core/history/history_engine.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using tock::persistence::v1::ActivityInfo;
using tock::persistence::v1::TimerTask;

// Whether events of `kind` after the point are applied again to the new run (Temporal's
// GetResetReapplyExcludeTypes: the deprecated reapply type SIGNAL leaves updates out, NONE
// everything; the exclude list takes kinds out).
bool Reapplies(const wf::ResetWorkflowExecutionRequest& req, enums::ResetReapplyExcludeType kind) {
  if (req.reset_reapply_type() == enums::RESET_REAPPLY_TYPE_NONE) return false;
  if (req.reset_reapply_type() == enums::RESET_REAPPLY_TYPE_SIGNAL &&
      kind == enums::RESET_REAPPLY_EXCLUDE_TYPE_UPDATE) {
    return false;
  }
  for (int excluded : req.reset_reapply_exclude_types()) {
    if (excluded == kind) return false;
  }
  return true;
}

// The initiated event id an event resolves (a child's end or start failure, an external
// signal's or cancel request's outcome), or 0.
int64_t ResolvedInitiated(const HistoryEvent& e) {
  switch (e.event_type()) {
    case enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED:
      return e.start_child_workflow_execution_failed_event_attributes().initiated_event_id();
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
      return e.child_workflow_execution_completed_event_attributes().initiated_event_id();
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED:
      return e.child_workflow_execution_failed_event_attributes().initiated_event_id();
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED:
      return e.child_workflow_execution_canceled_event_attributes().initiated_event_id();
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT:
      return e.child_workflow_execution_timed_out_event_attributes().initiated_event_id();
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED:
      return e.child_workflow_execution_terminated_event_attributes().initiated_event_id();
    case enums::EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED:
      return e.external_workflow_execution_signaled_event_attributes().initiated_event_id();
    case enums::EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED:
      return e.signal_external_workflow_execution_failed_event_attributes().initiated_event_id();
    case enums::EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
      return e.external_workflow_execution_cancel_requested_event_attributes().initiated_event_id();
    case enums::EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED:
      return e.request_cancel_external_workflow_execution_failed_event_attributes()
          .initiated_event_id();
    default:
      return 0;
  }
}

bool Initiates(const HistoryEvent& e) {
  return e.event_type() == enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED ||
         e.event_type() == enums::EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED ||
         e.event_type() == enums::EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED;
}

}  // namespace

absl::StatusOr<wf::ResetWorkflowExecutionResponse> HistoryEngine::ResetWorkflow(
    const NamespaceRef& ns, const wf::ResetWorkflowExecutionRequest& req) {
  const std::string& workflow_id = req.workflow_execution().workflow_id();
  absl::StatusOr<std::string> run_id =
      ResolveRunId(ns.id, workflow_id, req.workflow_execution().run_id());
  if (!run_id.ok()) return run_id.status();
  if (req.reason().size() > limits_.max_id_length * 4) {
    return absl::InvalidArgumentError("Reason exceeds length limit.");
  }
  absl::StatusOr<persistence::CurrentRun> current = store_.GetCurrentRun(ns.id, workflow_id);
  if (!current.ok()) return current.status();
  if (current->run_id != *run_id && current->status == enums::WORKFLOW_EXECUTION_STATUS_RUNNING) {
    // An older run is reset: the current one ends first (Temporal's resetter does the same),
    // and the new run takes over from it (the commit checks it is still the current run).
    wf::TerminateWorkflowExecutionRequest terminate;
    terminate.mutable_workflow_execution()->set_workflow_id(workflow_id);
    terminate.mutable_workflow_execution()->set_run_id(current->run_id);
    terminate.set_reason(req.reason());
    terminate.set_identity(kHistoryServiceIdentity);
    if (absl::Status s = TerminateWorkflow(ns, terminate); !s.ok()) return s;
  }
  const std::string replaces = current->run_id == *run_id ? "" : current->run_id;
  const std::string new_run_id = NewUuid();
  const RunKey key{ns.id, workflow_id, *run_id};
  absl::Status s = Mutate(ns, key, [&](RunTransaction& base) -> absl::Status {
    const int64_t point = req.workflow_task_finish_event_id();
    if (point <= 1 || point >= base.state().next_event_id()) {
      return absl::InvalidArgumentError(
          "Workflow task finish ID must be > 1 && <= workflow last event ID.");
    }
    absl::StatusOr<std::vector<HistoryEvent>> events =
        store_.ReadEvents(*run_id, 1, base.state().next_event_id(), INT32_MAX);
    if (!events.ok()) return events.status();
    const HistoryEvent& last = (*events)[point - 2];  // the last event kept
    if (last.event_type() != enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED &&
        last.event_type() != enums::EVENT_TYPE_WORKFLOW_TASK_STARTED) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Can only reset workflow to event ID in range [WorkflowTaskScheduled +1, "
          "WorkflowTaskStarted + 1]: ",
          point));
    }

    // The new run: the base run's execution, its events up to the point, rebuilt state.
    MutableStateRecord state;
    *state.mutable_execution() = base.state().execution();
    auto* exec = state.mutable_execution();
    exec->set_run_id(new_run_id);
    exec->set_status(enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
    exec->clear_close_time();
    exec->clear_new_execution_run_id();
    exec->set_history_size_bytes(0);
    exec->set_cancel_requested(false);
    exec->mutable_search_attributes()->clear_indexed_fields();
    exec->mutable_memo()->clear_fields();
    auto next = std::make_unique<RunTransaction>(std::move(state), base.now(), ns.failover_version,
                                                 shards_);
    std::map<int64_t, const HistoryEvent*> activities;  // scheduled id -> scheduled event
    std::map<int64_t, const HistoryEvent*> started;     // scheduled id -> started event
    std::map<std::string, const HistoryEvent*> timers;  // timer id -> started event
    std::set<int64_t> initiated;                        // children, external requests
    int64_t scheduled_task = 0, started_task = 0;
    for (int64_t i = 0; i < point - 1; ++i) {
      const HistoryEvent& e = (*events)[i];
      next->AppendCopy(e);
      switch (e.event_type()) {
        case enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
          *next->state().mutable_execution()->mutable_search_attributes() =
              e.workflow_execution_started_event_attributes().search_attributes();
          *next->state().mutable_execution()->mutable_memo() =
              e.workflow_execution_started_event_attributes().memo();
          break;
        case enums::EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
          auto* fields = next->state().mutable_execution()->mutable_search_attributes()
                             ->mutable_indexed_fields();
          for (const auto& [k, v] :
               e.upsert_workflow_search_attributes_event_attributes().search_attributes()
                   .indexed_fields()) {
            (*fields)[k] = v;
          }
          break;
        }
        case enums::EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED: {
          auto* fields = next->state().mutable_execution()->mutable_memo()->mutable_fields();
          for (const auto& [k, v] :
               e.workflow_properties_modified_event_attributes().upserted_memo().fields()) {
            (*fields)[k] = v;
          }
          break;
        }
        case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
          next->state().mutable_execution()->set_cancel_requested(true);
          break;
        case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED: {
          const auto& accepted = e.workflow_execution_update_accepted_event_attributes();
          (*next->state().mutable_updates())[accepted.protocol_instance_id()]
              .set_accepted_event_id(e.event_id());
          break;
        }
        case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED: {
          const auto& completed = e.workflow_execution_update_completed_event_attributes();
          (*next->state().mutable_updates())[completed.meta().update_id()]
              .set_completed_event_id(e.event_id());
          break;
        }
        case enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
          scheduled_task = e.event_id();
          started_task = 0;
          break;
        case enums::EVENT_TYPE_WORKFLOW_TASK_STARTED:
          started_task = e.event_id();
          break;
        case enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
          activities[e.event_id()] = &e;
          break;
        case enums::EVENT_TYPE_ACTIVITY_TASK_STARTED:
          started[e.activity_task_started_event_attributes().scheduled_event_id()] = &e;
          break;
        case enums::EVENT_TYPE_TIMER_STARTED:
          timers[e.timer_started_event_attributes().timer_id()] = &e;
          break;
        case enums::EVENT_TYPE_TIMER_FIRED:
          timers.erase(e.timer_fired_event_attributes().timer_id());
          break;
        case enums::EVENT_TYPE_TIMER_CANCELED:
          timers.erase(e.timer_canceled_event_attributes().timer_id());
          break;
        default:
          if (int64_t closed = ActivityScheduledId(e)) activities.erase(closed);  // closed
          if (Initiates(e)) initiated.insert(e.event_id());
          if (int64_t resolved = ResolvedInitiated(e)) initiated.erase(resolved);
          break;
      }
    }
    if (!initiated.empty()) {
      return absl::InvalidArgumentError(
          "WorkflowResetter encountered pending child workflows or requests to other workflows; "
          "reset to a workflow task after they resolved.");
    }
    MutableStateRecord& ns_state = next->state();

    // Activities not started are scheduled again, timers armed for when they were due.
    for (const auto& [scheduled_id, event] : activities) {
      if (started.contains(scheduled_id)) continue;  // failed below, as Temporal does
      const auto& a = event->activity_task_scheduled_event_attributes();
      ActivityInfo info;
      info.set_scheduled_event_id(scheduled_id);
      info.set_activity_id(a.activity_id());
      info.set_activity_type(a.activity_type().name());
      info.set_task_queue(a.task_queue().name());
      *info.mutable_scheduled_time() = ToProtoTime(next->now());
      *info.mutable_current_attempt_scheduled_time() = ToProtoTime(next->now());
      info.set_attempt(1);
      info.set_stamp(1);
      *info.mutable_schedule_to_start_timeout() = a.schedule_to_start_timeout();
      *info.mutable_schedule_to_close_timeout() = a.schedule_to_close_timeout();
      *info.mutable_start_to_close_timeout() = a.start_to_close_timeout();
      *info.mutable_heartbeat_timeout() = a.heartbeat_timeout();
      *info.mutable_retry_policy() = a.retry_policy();
      const absl::Duration s2c = FromProtoDuration(a.schedule_to_close_timeout());
      if (s2c > absl::ZeroDuration()) {
        TimerTask timeout;
        timeout.set_kind(TimerTask::KIND_ACTIVITY_TIMEOUT);
        timeout.set_event_id(scheduled_id);
        timeout.set_timeout_type(enums::TIMEOUT_TYPE_SCHEDULE_TO_CLOSE);
        *info.add_timers() = next->AddTimer(next->now() + s2c, timeout);
      }
      next->DispatchActivity(info);
      (*ns_state.mutable_activities())[scheduled_id] = std::move(info);
    }
    for (const auto& [timer_id, event] : timers) {
      const absl::Time due =
          std::max(next->now(), FromProtoTime(event->event_time()) +
                                    FromProtoDuration(
                                        event->timer_started_event_attributes().start_to_fire_timeout()));
      tock::persistence::v1::TimerInfo timer;
      timer.set_timer_id(timer_id);
      timer.set_started_event_id(event->event_id());
      *timer.mutable_expiry_time() = ToProtoTime(due);
      TimerTask task;
      task.set_kind(TimerTask::KIND_USER_TIMER);
      task.set_timer_id(timer_id);
      task.set_event_id(event->event_id());
      *timer.mutable_timer() = next->AddTimer(due, task);
      (*ns_state.mutable_timers())[timer_id] = std::move(timer);
    }
    // The run's own timeout, as when it started.
    const auto& execution = ns_state.execution();
    if (execution.has_workflow_execution_expiration_time() &&
        (!execution.has_workflow_run_expiration_time() ||
         FromProtoTime(execution.workflow_execution_expiration_time()) <=
             FromProtoTime(execution.workflow_run_expiration_time()))) {
      TimerTask timeout;
      timeout.set_kind(TimerTask::KIND_WORKFLOW_EXECUTION_TIMEOUT);
      next->AddTimer(FromProtoTime(execution.workflow_execution_expiration_time()), timeout);
    } else if (execution.has_workflow_run_expiration_time()) {
      TimerTask timeout;
      timeout.set_kind(TimerTask::KIND_WORKFLOW_RUN_TIMEOUT);
      next->AddTimer(FromProtoTime(execution.workflow_run_expiration_time()), timeout);
    }

    // The workflow task of the point fails with RESET_WORKFLOW.
    if (started_task == 0) {
      HistoryEvent& started = next->Append(enums::EVENT_TYPE_WORKFLOW_TASK_STARTED);
      auto* attrs = started.mutable_workflow_task_started_event_attributes();
      attrs->set_scheduled_event_id(scheduled_task);
      attrs->set_identity(kHistoryServiceIdentity);
      attrs->set_request_id(NewUuid());
      started_task = started.event_id();
    }
    HistoryEvent& failed = next->Append(enums::EVENT_TYPE_WORKFLOW_TASK_FAILED);
    auto* attrs = failed.mutable_workflow_task_failed_event_attributes();
    attrs->set_scheduled_event_id(scheduled_task);
    attrs->set_started_event_id(started_task);
    attrs->set_cause(enums::WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW);
    attrs->set_identity(kHistoryServiceIdentity);
    attrs->set_base_run_id(*run_id);
    attrs->set_new_run_id(new_run_id);
    attrs->set_fork_event_version(last.version());
    attrs->mutable_failure()->set_message(req.reason());
    attrs->mutable_failure()->mutable_reset_workflow_failure_info();

    // Activities started before the point fail with the reset (Temporal's resetter).
    for (const auto& [scheduled_id, event] : activities) {
      auto it = started.find(scheduled_id);
      if (it == started.end()) continue;
      HistoryEvent& e = next->Append(enums::EVENT_TYPE_ACTIVITY_TASK_FAILED);
      auto* f = e.mutable_activity_task_failed_event_attributes();
      f->set_scheduled_event_id(scheduled_id);
      f->set_started_event_id(it->second->event_id());
      f->set_retry_state(enums::RETRY_STATE_NON_RETRYABLE_FAILURE);
      f->set_identity(it->second->activity_task_started_event_attributes().identity());
      f->mutable_failure()->set_message(req.reason());
      f->mutable_failure()->mutable_reset_workflow_failure_info();
    }
    // Signals and accepted updates after the point are applied again, in their order
    // (Temporal's default reapply type): an update as WorkflowExecutionUpdateAdmitted (origin
    // REAPPLY) holding its request, which the worker accepts or rejects anew.
    const bool signals = Reapplies(req, enums::RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL);
    const bool updates = Reapplies(req, enums::RESET_REAPPLY_EXCLUDE_TYPE_UPDATE);
    for (size_t i = point - 1; i < events->size(); ++i) {
      const HistoryEvent& e = (*events)[i];
      if (signals && e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) {
        HistoryEvent& signal = next->Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
        *signal.mutable_workflow_execution_signaled_event_attributes() =
            e.workflow_execution_signaled_event_attributes();
      } else if (updates && e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) {
        HistoryEvent& admitted = next->Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED);
        auto* attrs = admitted.mutable_workflow_execution_update_admitted_event_attributes();
        *attrs->mutable_request() = e.workflow_execution_update_accepted_event_attributes().accepted_request();
        attrs->set_origin(enums::UPDATE_ADMITTED_EVENT_ORIGIN_REAPPLY);
      }
    }
    auto* reset = ns_state.mutable_execution();
    *reset->mutable_last_reset_time() = ToProtoTime(next->now());
    reset->set_reset_base_run_id(*run_id);
    next->ScheduleWorkflowTask();
    next->VisibilityChanged();

    if (base.IsOpen()) base.Terminate(req.reason(), {}, kHistoryServiceIdentity);
    base.state().mutable_execution()->set_reset_run_id(new_run_id);
    base.SetFollowingRun(std::move(next), replaces);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  wf::ResetWorkflowExecutionResponse out;
  out.set_run_id(new_run_id);
  return out;
}

}  // namespace tock::server::history
