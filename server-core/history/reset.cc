#include "server-core/history/reset.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/common/ids.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "server-core/history/activity_timeouts.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
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

// What the events up to the point leave open, found while they are copied into the new run.
// The pointers are into the base run's events, which outlive it.
struct KeptHistory {
  std::map<int64_t, const HistoryEvent*> activities;  // scheduled id -> scheduled event
  std::map<int64_t, const HistoryEvent*> started;     // scheduled id -> started event
  std::map<std::string, const HistoryEvent*> timers;  // timer id -> started event
  std::set<int64_t> initiated;                        // children, external requests
  int64_t scheduled_task = 0, started_task = 0;       // the workflow task of the point
};

// The reset point must be inside the base run's history: after its first event, at most
// its last event id (Temporal's message).
absl::Status CheckPointInHistory(const MutableStateRecord& base, int64_t point) {
  if (point <= 1 || point >= base.next_event_id()) {
    return absl::InvalidArgumentError(
        "Workflow task finish ID must be > 1 && <= workflow last event ID.");
  }
  return absl::OkStatus();
}

// The base run's events [1, end), all of them: a history with fewer (deleted meanwhile by
// retention or the archiver, or cut short by a defect) is DATA_LOSS, never indexed past.
absl::StatusOr<std::vector<HistoryEvent>> ReadBaseEvents(persistence::ExecutionStore& store,
                                                         const MutableStateRecord& base,
                                                         int64_t end) {
  const std::string& run_id = base.execution().run_id();
  absl::StatusOr<std::vector<HistoryEvent>> events = store.ReadEvents(run_id, 1, end, INT32_MAX);
  if (!events.ok()) return events.status();
  for (int64_t id = 1; id < end; ++id) {
    const size_t index = static_cast<size_t>(id - 1);
    if (index >= events->size() || (*events)[index].event_id() != id) {
      return absl::DataLossError(
          absl::StrCat("The history of run ", run_id, " is missing event ", id, " of the ", end - 1,
                       " the reset needs (deleted meanwhile?); the run cannot be reset."));
    }
  }
  return events;
}

// The event before the point must begin a workflow task: the task the reset fails.
absl::Status CheckPointEndsWorkflowTask(const std::vector<HistoryEvent>& events, int64_t point) {
  const HistoryEvent& last = events[point - 2];  // the last event kept
  if (last.event_type() != enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED &&
      last.event_type() != enums::EVENT_TYPE_WORKFLOW_TASK_STARTED) {
    return absl::InvalidArgumentError(
        absl::StrCat("Can only reset workflow to event ID in range [WorkflowTaskScheduled +1, "
                     "WorkflowTaskStarted + 1]: ",
                     point));
  }
  return absl::OkStatus();
}

// The new run's state before its events: the base run's execution, running, started by the
// reset's request (what a retry of the reset recognizes it by).
MutableStateRecord NewRunState(const MutableStateRecord& base, const std::string& new_run_id,
                               const std::string& request_id) {
  MutableStateRecord state;
  *state.mutable_execution() = base.execution();
  auto* exec = state.mutable_execution();
  exec->set_run_id(new_run_id);
  exec->set_start_request_id(request_id);
  exec->set_status(enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
  exec->clear_close_time();
  exec->clear_new_execution_run_id();
  exec->clear_reset_run_id();
  exec->set_history_size_bytes(0);
  exec->set_cancel_requested(false);
  exec->mutable_search_attributes()->clear_indexed_fields();
  exec->mutable_memo()->clear_fields();
  // A new run: no worker has it cached, so its first workflow task goes to the normal queue.
  exec->clear_sticky_task_queue();
  exec->clear_sticky_schedule_to_start_timeout();
  return state;
}

// What one kept event sets in the new run's state, and what it opens or closes.
void ApplyKeptEvent(const HistoryEvent& e, RunTransaction& next, KeptHistory& kept) {
  auto* exec = next.state().mutable_execution();
  switch (e.event_type()) {
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
      *exec->mutable_search_attributes() =
          e.workflow_execution_started_event_attributes().search_attributes();
      *exec->mutable_memo() = e.workflow_execution_started_event_attributes().memo();
      break;
    case enums::EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
      for (const auto& [k, v] : e.upsert_workflow_search_attributes_event_attributes()
                                    .search_attributes()
                                    .indexed_fields()) {
        (*exec->mutable_search_attributes()->mutable_indexed_fields())[k] = v;
      }
      break;
    case enums::EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
      for (const auto& [k, v] :
           e.workflow_properties_modified_event_attributes().upserted_memo().fields()) {
        (*exec->mutable_memo()->mutable_fields())[k] = v;
      }
      break;
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
      exec->set_cancel_requested(true);
      break;
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
      (*next.state().mutable_updates())[e.workflow_execution_update_accepted_event_attributes()
                                            .protocol_instance_id()]
          .set_accepted_event_id(e.event_id());
      break;
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
      (*next.state().mutable_updates())
          [e.workflow_execution_update_completed_event_attributes().meta().update_id()]
              .set_completed_event_id(e.event_id());
      break;
    case enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
      kept.scheduled_task = e.event_id();
      kept.started_task = 0;
      break;
    case enums::EVENT_TYPE_WORKFLOW_TASK_STARTED:
      kept.started_task = e.event_id();
      break;
    case enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
      kept.activities[e.event_id()] = &e;
      break;
    case enums::EVENT_TYPE_ACTIVITY_TASK_STARTED:
      kept.started[e.activity_task_started_event_attributes().scheduled_event_id()] = &e;
      break;
    case enums::EVENT_TYPE_TIMER_STARTED:
      kept.timers[e.timer_started_event_attributes().timer_id()] = &e;
      break;
    case enums::EVENT_TYPE_TIMER_FIRED:
      kept.timers.erase(e.timer_fired_event_attributes().timer_id());
      break;
    case enums::EVENT_TYPE_TIMER_CANCELED:
      kept.timers.erase(e.timer_canceled_event_attributes().timer_id());
      break;
    default:
      if (int64_t closed = ActivityScheduledId(e)) kept.activities.erase(closed);  // closed
      if (Initiates(e)) kept.initiated.insert(e.event_id());
      if (int64_t resolved = ResolvedInitiated(e)) kept.initiated.erase(resolved);
      break;
  }
}

// Copies the events before the point into the new run. INVALID_ARGUMENT when a child or a
// request to another workflow is still pending at the point.
absl::StatusOr<KeptHistory> CopyKeptEvents(const std::vector<HistoryEvent>& events, int64_t point,
                                           RunTransaction& next) {
  KeptHistory kept;
  for (int64_t i = 0; i < point - 1; ++i) {
    next.AppendCopy(events[i]);
    ApplyKeptEvent(events[i], next, kept);
  }
  if (!kept.initiated.empty()) {
    return absl::InvalidArgumentError(
        "WorkflowResetter encountered pending child workflows or requests to other workflows; "
        "reset to a workflow task after they resolved.");
  }
  return kept;
}

// Activities scheduled and not started are scheduled again (attempt 1, from now); started
// ones fail after the point's workflow task (FailStartedActivities), as Temporal does.
void RescheduleActivities(const KeptHistory& kept, RunTransaction& next) {
  for (const auto& [scheduled_id, event] : kept.activities) {
    if (kept.started.contains(scheduled_id)) continue;
    const auto& a = event->activity_task_scheduled_event_attributes();
    AddScheduledActivity(next, scheduled_id, a, a.task_queue().name(), next.now());
  }
}

// Timers still pending at the point fire when they would have (at once if that has passed);
// the run's own timeout is armed as when it started.
void ArmTimers(const KeptHistory& kept, RunTransaction& next) {
  for (const auto& [timer_id, event] : kept.timers) {
    const absl::Time due = std::max(
        next.now(),
        FromProtoTime(event->event_time()) +
            FromProtoDuration(event->timer_started_event_attributes().start_to_fire_timeout()));
    tock::persistence::v1::TimerInfo timer;
    timer.set_timer_id(timer_id);
    timer.set_started_event_id(event->event_id());
    *timer.mutable_expiry_time() = ToProtoTime(due);
    TimerTask task;
    task.set_kind(TimerTask::KIND_USER_TIMER);
    task.set_timer_id(timer_id);
    task.set_event_id(event->event_id());
    *timer.mutable_timer() = next.AddTimer(due, task);
    (*next.state().mutable_timers())[timer_id] = std::move(timer);
  }
  const auto& execution = next.state().execution();
  TimerTask timeout;
  if (execution.has_workflow_execution_expiration_time() &&
      (!execution.has_workflow_run_expiration_time() ||
       FromProtoTime(execution.workflow_execution_expiration_time()) <=
           FromProtoTime(execution.workflow_run_expiration_time()))) {
    timeout.set_kind(TimerTask::KIND_WORKFLOW_EXECUTION_TIMEOUT);
    next.AddTimer(FromProtoTime(execution.workflow_execution_expiration_time()), timeout);
  } else if (execution.has_workflow_run_expiration_time()) {
    timeout.set_kind(TimerTask::KIND_WORKFLOW_RUN_TIMEOUT);
    next.AddTimer(FromProtoTime(execution.workflow_run_expiration_time()), timeout);
  }
}

// The workflow task of the point fails with RESET_WORKFLOW (started first if it was only
// scheduled), naming both runs and the version of the last event kept.
void FailPointWorkflowTask(KeptHistory& kept, const std::string& base_run_id, int64_t fork_version,
                           const std::string& reason, RunTransaction& next) {
  if (kept.started_task == 0) {
    HistoryEvent& started = next.Append(enums::EVENT_TYPE_WORKFLOW_TASK_STARTED);
    auto* attrs = started.mutable_workflow_task_started_event_attributes();
    attrs->set_scheduled_event_id(kept.scheduled_task);
    attrs->set_identity(kHistoryServiceIdentity);
    attrs->set_request_id(NewUuid());
    kept.started_task = started.event_id();
  }
  HistoryEvent& failed = next.Append(enums::EVENT_TYPE_WORKFLOW_TASK_FAILED);
  auto* attrs = failed.mutable_workflow_task_failed_event_attributes();
  attrs->set_scheduled_event_id(kept.scheduled_task);
  attrs->set_started_event_id(kept.started_task);
  attrs->set_cause(enums::WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW);
  attrs->set_identity(kHistoryServiceIdentity);
  attrs->set_base_run_id(base_run_id);
  attrs->set_new_run_id(next.execution().run_id());
  attrs->set_fork_event_version(fork_version);
  attrs->mutable_failure()->set_message(reason);
  attrs->mutable_failure()->mutable_reset_workflow_failure_info();
}

// Activities started before the point fail with the reset (Temporal's resetter).
void FailStartedActivities(const KeptHistory& kept, const std::string& reason,
                           RunTransaction& next) {
  for (const auto& [scheduled_id, event] : kept.activities) {
    auto it = kept.started.find(scheduled_id);
    if (it == kept.started.end()) continue;
    HistoryEvent& e = next.Append(enums::EVENT_TYPE_ACTIVITY_TASK_FAILED);
    auto* f = e.mutable_activity_task_failed_event_attributes();
    f->set_scheduled_event_id(scheduled_id);
    f->set_started_event_id(it->second->event_id());
    f->set_retry_state(enums::RETRY_STATE_NON_RETRYABLE_FAILURE);
    f->set_identity(it->second->activity_task_started_event_attributes().identity());
    f->mutable_failure()->set_message(reason);
    f->mutable_failure()->mutable_reset_workflow_failure_info();
  }
}

// Signals and accepted updates after the point are applied again, in their order
// (Temporal's default reapply type): an update as WorkflowExecutionUpdateAdmitted (origin
// REAPPLY) holding its request, which the worker accepts or rejects anew.
void ReapplyAfterPoint(const std::vector<HistoryEvent>& events, int64_t point,
                       const wf::ResetWorkflowExecutionRequest& req, RunTransaction& next) {
  const bool signals = Reapplies(req, enums::RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL);
  const bool updates = Reapplies(req, enums::RESET_REAPPLY_EXCLUDE_TYPE_UPDATE);
  for (size_t i = point - 1; i < events.size(); ++i) {
    const HistoryEvent& e = events[i];
    if (signals && e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) {
      HistoryEvent& signal = next.Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
      *signal.mutable_workflow_execution_signaled_event_attributes() =
          e.workflow_execution_signaled_event_attributes();
    } else if (updates && e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) {
      HistoryEvent& admitted = next.Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED);
      auto* attrs = admitted.mutable_workflow_execution_update_admitted_event_attributes();
      *attrs->mutable_request() =
          e.workflow_execution_update_accepted_event_attributes().accepted_request();
      attrs->set_origin(enums::UPDATE_ADMITTED_EVENT_ORIGIN_REAPPLY);
    }
  }
}

// Everything a reset needs to build its new run, read before the commit is assembled.
struct ResetSource {
  const wf::ResetWorkflowExecutionRequest& req;
  const MutableStateRecord& base;  // the base run's state, as locked or read
  const std::string& new_run_id;
  const std::string& request_id;
};

// Checks the reset and builds the new run from the base run's history; writes nothing.
// Only the events it needs are read: up to the point, and the rest only to reapply.
absl::StatusOr<std::unique_ptr<RunTransaction>> BuildResetRun(const ResetSource& source,
                                                              persistence::ExecutionStore& store,
                                                              ShardController& shards,
                                                              absl::Time now,
                                                              int64_t namespace_version) {
  const wf::ResetWorkflowExecutionRequest& req = source.req;
  const int64_t point = req.workflow_task_finish_event_id();
  if (absl::Status s = CheckPointInHistory(source.base, point); !s.ok()) return s;
  const bool reapplies = Reapplies(req, enums::RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL) ||
                         Reapplies(req, enums::RESET_REAPPLY_EXCLUDE_TYPE_UPDATE);
  absl::StatusOr<std::vector<HistoryEvent>> events =
      ReadBaseEvents(store, source.base, reapplies ? source.base.next_event_id() : point);
  if (!events.ok()) return events.status();
  if (absl::Status s = CheckPointEndsWorkflowTask(*events, point); !s.ok()) return s;

  auto next = std::make_unique<RunTransaction>(
      NewRunState(source.base, source.new_run_id, source.request_id), now, namespace_version,
      shards);
  absl::StatusOr<KeptHistory> kept = CopyKeptEvents(*events, point, *next);
  if (!kept.ok()) return kept.status();
  RescheduleActivities(*kept, *next);
  ArmTimers(*kept, *next);
  FailPointWorkflowTask(*kept, source.base.execution().run_id(), (*events)[point - 2].version(),
                        req.reason(), *next);
  FailStartedActivities(*kept, req.reason(), *next);
  ReapplyAfterPoint(*events, point, req, *next);
  auto* exec = next->state().mutable_execution();
  *exec->mutable_last_reset_time() = ToProtoTime(next->now());
  exec->set_reset_base_run_id(source.base.execution().run_id());
  next->ScheduleWorkflowTask();
  next->VisibilityChanged();
  return next;
}

}  // namespace

absl::StatusOr<wf::ResetWorkflowExecutionResponse> WorkflowReset::Reset(
    const NamespaceRef& ns, const wf::ResetWorkflowExecutionRequest& req) {
  const std::string& workflow_id = req.workflow_execution().workflow_id();
  absl::StatusOr<std::string> base_run_id =
      runs_.ResolveRunId(ns.id, workflow_id, req.workflow_execution().run_id());
  if (!base_run_id.ok()) return base_run_id.status();
  if (req.reason().size() > limits_.max_id_length * 4) {
    return absl::InvalidArgumentError("Reason exceeds length limit.");
  }
  if (req.request_id().size() > limits_.max_id_length) {
    return absl::InvalidArgumentError("RequestId length exceeds limit.");
  }
  absl::StatusOr<persistence::CurrentRun> current = store_.GetCurrentRun(ns.id, workflow_id);
  if (!current.ok()) return current.status();
  // A retry of a reset that committed (its answer lost, or a batch retrying) finds the run it
  // made current. A retry racing the first reset fails its commit's check that the current
  // run is still the one it read (ABORTED), and its next try is answered here.
  const std::string request_id = req.request_id().empty() ? NewUuid() : req.request_id();
  wf::ResetWorkflowExecutionResponse out;
  if (current->start_request_id == request_id) {
    out.set_run_id(current->run_id);
    return out;
  }
  absl::StatusOr<std::optional<MutableStateRecord>> older_base =
      ReadOlderBase(ns, workflow_id, *base_run_id, current->run_id);
  if (!older_base.ok()) return older_base.status();
  absl::StatusOr<std::string> new_run_id =
      Commit(ns, req, current->run_id, *older_base, request_id);
  if (!new_run_id.ok()) return new_run_id.status();
  out.set_run_id(*new_run_id);
  return out;
}

absl::StatusOr<std::optional<MutableStateRecord>> WorkflowReset::ReadOlderBase(
    const NamespaceRef& ns, const std::string& workflow_id, const std::string& base_run_id,
    const std::string& current_run_id) {
  if (base_run_id == current_run_id) return std::nullopt;
  // An older run than the current one: it is closed, so its state and history stay as read
  // here, and its write in the commit checks that it did not change.
  absl::StatusOr<MutableStateRecord> base = runs_.ReadRun({ns.id, workflow_id, base_run_id});
  if (!base.ok()) return base.status();
  if (base->execution().zombie() ||
      base->execution().status() == enums::WORKFLOW_EXECUTION_STATUS_RUNNING) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", base_run_id, " of workflow ", workflow_id,
        " is not the workflow's current run and has not closed; only a closed older run, or "
        "the current run, can be reset"));
  }
  return std::move(*base);
}

absl::StatusOr<std::string> WorkflowReset::Commit(
    const NamespaceRef& ns, const wf::ResetWorkflowExecutionRequest& req,
    const std::string& current_run_id, const std::optional<MutableStateRecord>& older_base,
    const std::string& request_id) {
  // The current run's change (MutateRun locks it: a running current run is ended with all of
  // Mutate's care), carrying the new run and, for an older base, its record.
  const std::string& workflow_id = req.workflow_execution().workflow_id();
  std::string new_run_id;
  absl::Status s = runs_.MutateRun(
      ns, {ns.id, workflow_id, current_run_id}, [&](RunTransaction& tx) -> absl::Status {
        // Time-ordered as every run id (lib/common/ids.h), from the change's clock.
        new_run_id = NewTimeOrderedUuid(tx.now());
        const MutableStateRecord& base = older_base ? *older_base : tx.state();
        absl::StatusOr<std::unique_ptr<RunTransaction>> next = BuildResetRun(
            {req, base, new_run_id, request_id}, store_, shards_, tx.now(), ns.failover_version);
        if (!next.ok()) return next.status();
        if (tx.IsOpen()) tx.Terminate(req.reason(), {}, kHistoryServiceIdentity);
        if (older_base) {
          auto recorded =
              std::make_unique<RunTransaction>(*older_base, tx.now(), ns.failover_version, shards_);
          recorded->state().mutable_execution()->set_reset_run_id(new_run_id);
          tx.SetCompanionRun(std::move(recorded));
        } else {
          tx.state().mutable_execution()->set_reset_run_id(new_run_id);
        }
        tx.SetFollowingRun(std::move(*next));
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return new_run_id;
}

}  // namespace tock::server::history
