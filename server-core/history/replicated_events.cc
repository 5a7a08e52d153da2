#include "server-core/history/versioning.h"
#include "server-core/history/replicated_events.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "server-core/history/activity_timeouts.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using tock::persistence::v1::ActivityInfo;
using tock::persistence::v1::ChildExecutionInfo;
using tock::persistence::v1::ExternalRequestInfo;
using tock::persistence::v1::TimerInfo;
using tock::persistence::v1::TimerTask;
using tock::persistence::v1::TransferTask;

std::string Describe(const HistoryEvent& e) {
  const std::string& name = enums::EventType_Name(e.event_type());
  return absl::StrCat(
      "replicated event ", e.event_id(), " (",
      name.empty() ? absl::StrCat("event type ", static_cast<int>(e.event_type())) : name, ")");
}

absl::Status Refuse(const HistoryEvent& e, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(Describe(e), " ", why));
}

absl::Time EventTime(const HistoryEvent& e) { return FromProtoTime(e.event_time()); }

// The task the active side queued for a workflow or activity task is consumed by the poll
// that starts it (or goes stale when the activity closes): when this call queued it, it is
// not queued at all.
void DropQueued(RunTransaction& tx, persistence::TaskKind kind, int64_t scheduled_event_id) {
  auto& tasks = tx.new_tasks();
  std::erase_if(tasks, [&](const persistence::TaskQueueTask& t) {
    return t.kind == kind && t.task.scheduled_event_id() == scheduled_event_id;
  });
}

// ScheduleWorkflowTask's task, without its event (the event is the replicated one).
void QueueWorkflowTask(RunTransaction& tx) {
  const auto& exec = tx.execution();
  const auto& wft = tx.state().workflow_task();
  persistence::TaskQueueTask task;
  task.namespace_id = exec.namespace_id();
  task.task_queue = wft.task_queue();
  task.kind = persistence::TaskKind::kWorkflow;
  task.task.set_kind(TransferTask::KIND_WORKFLOW_TASK);
  task.task.set_namespace_id(exec.namespace_id());
  task.task.set_workflow_id(exec.workflow_id());
  task.task.set_run_id(exec.run_id());
  task.task.set_task_queue(wft.task_queue());
  task.task.set_scheduled_event_id(wft.scheduled_event_id());
  task.task.set_attempt(wft.attempt());
  tx.new_tasks().push_back(std::move(task));
}

void MergeFields(
    google::protobuf::Map<std::string, temporal::api::common::v1::Payload>* into,
    const google::protobuf::Map<std::string, temporal::api::common::v1::Payload>& from) {
  for (const auto& [k, v] : from) (*into)[k] = v;
}

// BuildNewRun (history_engine.cc).
absl::Status ApplyStarted(RunTransaction& tx, const HistoryEvent& e) {
  const auto& a = e.workflow_execution_started_event_attributes();
  const absl::Time now = EventTime(e);
  auto* exec = tx.state().mutable_execution();
  exec->set_first_execution_run_id(a.first_execution_run_id().empty() ? exec->run_id()
                                                                      : a.first_execution_run_id());
  exec->set_workflow_type(a.workflow_type().name());
  exec->set_task_queue(a.task_queue().name());
  exec->set_status(enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
  *exec->mutable_start_time() = e.event_time();
  const absl::Duration backoff = FromProtoDuration(a.first_workflow_task_backoff());
  *exec->mutable_execution_time() = ToProtoTime(now + std::max(backoff, absl::ZeroDuration()));
  exec->set_attempt(a.attempt());
  exec->set_identity(a.identity());
  *exec->mutable_memo() = a.memo();
  *exec->mutable_search_attributes() = a.search_attributes();
  if (a.has_retry_policy()) *exec->mutable_retry_policy() = a.retry_policy();
  exec->set_cron_schedule(a.cron_schedule());
  if (a.has_parent_workflow_execution()) {
    auto* parent = exec->mutable_parent();
    parent->set_namespace_(a.parent_workflow_namespace());
    parent->set_namespace_id(a.parent_workflow_namespace_id());
    parent->set_workflow_id(a.parent_workflow_execution().workflow_id());
    parent->set_run_id(a.parent_workflow_execution().run_id());
    parent->set_initiated_event_id(a.parent_initiated_event_id());
  }
  *exec->mutable_workflow_execution_timeout() = a.workflow_execution_timeout();
  *exec->mutable_workflow_run_timeout() = a.workflow_run_timeout();
  *exec->mutable_default_workflow_task_timeout() = a.workflow_task_timeout();
  // (The start's user metadata stays on the event: BuildNewRun does not copy it into the
  // execution either.)

  absl::Time run_expires = absl::InfiniteFuture();
  const absl::Duration run_timeout = FromProtoDuration(a.workflow_run_timeout());
  if (run_timeout > absl::ZeroDuration()) {
    run_expires = now + std::max(backoff, absl::ZeroDuration()) + run_timeout;
    *exec->mutable_workflow_run_expiration_time() = ToProtoTime(run_expires);
  }
  std::optional<absl::Time> execution_expires;
  if (a.has_workflow_execution_expiration_time()) {
    execution_expires = FromProtoTime(a.workflow_execution_expiration_time());
    *exec->mutable_workflow_execution_expiration_time() = a.workflow_execution_expiration_time();
  }
  if (execution_expires && *execution_expires <= run_expires) {
    TimerTask timeout;
    timeout.set_kind(TimerTask::KIND_WORKFLOW_EXECUTION_TIMEOUT);
    tx.AddTimer(*execution_expires, timeout);
  } else if (run_expires != absl::InfiniteFuture()) {
    TimerTask timeout;
    timeout.set_kind(TimerTask::KIND_WORKFLOW_RUN_TIMEOUT);
    tx.AddTimer(run_expires, timeout);
  }
  if (backoff > absl::ZeroDuration()) {
    TimerTask wait;
    wait.set_kind(TimerTask::KIND_WORKFLOW_BACKOFF);
    tx.AddTimer(now + backoff, wait);
  }
  ApplyStartedVersioning(tx, a);
  tx.VisibilityChanged();
  return absl::OkStatus();
}

// The pending workflow task an event of it names, or INVALID_ARGUMENT.
absl::Status CheckWorkflowTask(const RunTransaction& tx, const HistoryEvent& e, int64_t scheduled,
                               int64_t started, bool must_be_started) {
  const auto& wft = tx.state().workflow_task();
  if (wft.scheduled_event_id() == 0 || wft.scheduled_event_id() != scheduled) {
    return Refuse(e, absl::StrCat("refers to workflow task scheduled at event ", scheduled,
                                  ", which is not the run's pending workflow task"));
  }
  if (must_be_started && (wft.started_event_id() == 0 || wft.started_event_id() != started)) {
    return Refuse(e, absl::StrCat("refers to workflow task started at event ", started,
                                  ", which is not the run's started workflow task"));
  }
  if (!must_be_started && wft.started_event_id() != 0) {
    return Refuse(e, "starts a workflow task that is already started");
  }
  return absl::OkStatus();
}

// A workflow task ended (completed, failed, timed out): its timeout timer goes.
void EndWorkflowTask(RunTransaction& tx) {
  tx.RetireTimer(tx.state().workflow_task().timeout_timer());
  tx.state().clear_workflow_task();
}

absl::StatusOr<ActivityInfo*> FindActivity(RunTransaction& tx, const HistoryEvent& e,
                                           int64_t scheduled) {
  auto* activities = tx.state().mutable_activities();
  auto it = activities->find(scheduled);
  if (it == activities->end()) {
    return Refuse(e, absl::StrCat("refers to the activity scheduled at event ", scheduled,
                                  ", which is not pending"));
  }
  return &it->second;
}

// RemoveActivity (activity_tasks.cc).
absl::Status CloseActivity(RunTransaction& tx, const HistoryEvent& e) {
  const int64_t scheduled = ActivityScheduledId(e);
  absl::StatusOr<ActivityInfo*> a = FindActivity(tx, e, scheduled);
  if (!a.ok()) return a.status();
  for (const auto& key : (*a)->timers()) tx.RetireTimer(key);
  tx.state().mutable_activities()->erase(scheduled);
  DropQueued(tx, persistence::TaskKind::kActivity, scheduled);
  return absl::OkStatus();
}

// The ScheduleActivityTask command (workflow_tasks.cc).
absl::Status ScheduleActivity(RunTransaction& tx, const HistoryEvent& e) {
  const auto& a = e.activity_task_scheduled_event_attributes();
  // From the event's time, as the active one did.
  AddScheduledActivity(tx, e.event_id(), a,
                       a.task_queue().name().empty() ? tx.execution().task_queue()
                                                     : a.task_queue().name(),
                       FromProtoTime(e.event_time()));
  return absl::OkStatus();
}

// ActivityTaskStarted is written with the activity's outcome (AppendActivityStarted): what
// it carries of the attempt that ends. The attempt's timers stay for the outcome to retire.
absl::Status StartActivity(RunTransaction& tx, const HistoryEvent& e) {
  const auto& a = e.activity_task_started_event_attributes();
  absl::StatusOr<ActivityInfo*> found = FindActivity(tx, e, a.scheduled_event_id());
  if (!found.ok()) return found.status();
  ActivityInfo& info = **found;
  if (a.attempt() > 0) {
    info.set_attempt(a.attempt());
    info.set_stamp(a.attempt());  // one stamp per attempt (RetryActivity)
  }
  if (!info.has_started_time()) *info.mutable_started_time() = e.event_time();
  info.set_started_identity(a.identity());
  info.set_request_id(a.request_id());
  if (a.has_last_failure()) *info.mutable_last_failure() = a.last_failure();
  return absl::OkStatus();
}

absl::Status RequestActivityCancel(RunTransaction& tx, const HistoryEvent& e) {
  const int64_t scheduled =
      e.activity_task_cancel_requested_event_attributes().scheduled_event_id();
  absl::StatusOr<ActivityInfo*> a = FindActivity(tx, e, scheduled);
  if (!a.ok()) return a.status();
  (*a)->set_cancel_requested(true);
  (*a)->set_cancel_requested_event_id(e.event_id());
  return absl::OkStatus();
}

absl::Status StartTimer(RunTransaction& tx, const HistoryEvent& e) {
  const auto& a = e.timer_started_event_attributes();
  if (a.timer_id().empty()) return Refuse(e, "has no timer id");
  if (tx.state().timers().contains(a.timer_id())) {
    return Refuse(e, absl::StrCat("starts timer ", a.timer_id(), ", which is already pending"));
  }
  TimerInfo timer;
  timer.set_timer_id(a.timer_id());
  timer.set_started_event_id(e.event_id());
  const absl::Time fire = EventTime(e) + FromProtoDuration(a.start_to_fire_timeout());
  *timer.mutable_expiry_time() = ToProtoTime(fire);
  TimerTask task;
  task.set_kind(TimerTask::KIND_USER_TIMER);
  task.set_timer_id(a.timer_id());
  task.set_event_id(e.event_id());
  *timer.mutable_timer() = tx.AddTimer(fire, task);
  (*tx.state().mutable_timers())[a.timer_id()] = std::move(timer);
  return absl::OkStatus();
}

absl::Status EndTimer(RunTransaction& tx, const HistoryEvent& e, const std::string& timer_id,
                      int64_t started_event_id) {
  auto* timers = tx.state().mutable_timers();
  auto it = timers->find(timer_id);
  if (it == timers->end() ||
      (started_event_id != 0 && it->second.started_event_id() != started_event_id)) {
    return Refuse(e, absl::StrCat("refers to timer ", timer_id, " started at event ",
                                  started_event_id, ", which is not pending"));
  }
  // A fired timer's row was deleted by its firing on the active side; here it is still
  // stored (a standby does not fire user timers), so it goes either way.
  tx.RetireTimer(it->second.timer());
  timers->erase(it);
  return absl::OkStatus();
}

absl::Status InitiateChild(RunTransaction& tx, const HistoryEvent& e) {
  const auto& a = e.start_child_workflow_execution_initiated_event_attributes();
  ChildExecutionInfo child;
  child.set_initiated_event_id(e.event_id());
  child.set_namespace_(a.namespace_());
  child.set_namespace_id(a.namespace_id());
  child.set_workflow_id(a.workflow_id());
  child.set_workflow_type(a.workflow_type().name());
  child.set_parent_close_policy(a.parent_close_policy());
  (*tx.state().mutable_children())[e.event_id()] = std::move(child);
  TransferTask task;
  task.set_kind(TransferTask::KIND_START_CHILD);
  task.set_scheduled_event_id(e.event_id());
  tx.AddTransferTask(std::move(task));
  return absl::OkStatus();
}

absl::StatusOr<ChildExecutionInfo*> FindChild(RunTransaction& tx, const HistoryEvent& e,
                                              int64_t initiated) {
  auto* children = tx.state().mutable_children();
  auto it = children->find(initiated);
  if (it == children->end()) {
    return Refuse(e, absl::StrCat("refers to the child workflow initiated at event ", initiated,
                                  ", which is not pending"));
  }
  return &it->second;
}

// The initiated event id of a child's end (or failed start), 0 for other events.
int64_t ChildEndInitiated(const HistoryEvent& e) {
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
    default:
      return 0;
  }
}

absl::Status InitiateExternal(RunTransaction& tx, const HistoryEvent& e, bool is_cancel) {
  ExternalRequestInfo info;
  info.set_initiated_event_id(e.event_id());
  info.set_is_cancel(is_cancel);
  if (is_cancel) {
    const auto& a = e.request_cancel_external_workflow_execution_initiated_event_attributes();
    info.set_namespace_(a.namespace_());
    info.set_workflow_id(a.workflow_execution().workflow_id());
    info.set_run_id(a.workflow_execution().run_id());
    info.set_child_workflow_only(a.child_workflow_only());
  } else {
    const auto& a = e.signal_external_workflow_execution_initiated_event_attributes();
    info.set_namespace_(a.namespace_());
    info.set_workflow_id(a.workflow_execution().workflow_id());
    info.set_run_id(a.workflow_execution().run_id());
    info.set_signal_name(a.signal_name());
    info.set_child_workflow_only(a.child_workflow_only());
  }
  (*tx.state().mutable_external_requests())[e.event_id()] = std::move(info);
  TransferTask task;
  task.set_kind(is_cancel ? TransferTask::KIND_CANCEL_EXTERNAL
                          : TransferTask::KIND_SIGNAL_EXTERNAL);
  task.set_scheduled_event_id(e.event_id());
  tx.AddTransferTask(std::move(task));
  return absl::OkStatus();
}

absl::Status ResolveExternal(RunTransaction& tx, const HistoryEvent& e, int64_t initiated,
                             bool is_cancel) {
  auto* requests = tx.state().mutable_external_requests();
  auto it = requests->find(initiated);
  if (it == requests->end() || it->second.is_cancel() != is_cancel) {
    return Refuse(e, absl::StrCat("refers to the ", is_cancel ? "cancel request" : "signal",
                                  " initiated at event ", initiated, ", which is not pending"));
  }
  requests->erase(it);
  return absl::OkStatus();
}

// The run closes as the active side's closing event said (RunTransaction::Close), at the
// event's time.
absl::Status CloseRun(RunTransaction& tx, const HistoryEvent& e,
                      enums::WorkflowExecutionStatus status, const std::string& new_run_id) {
  if (!new_run_id.empty()) tx.state().mutable_execution()->set_new_execution_run_id(new_run_id);
  // Tasks queued by this call for what can no longer start.
  std::erase_if(tx.new_tasks(), [](const persistence::TaskQueueTask& t) {
    return t.kind == persistence::TaskKind::kWorkflow || t.kind == persistence::TaskKind::kActivity;
  });
  tx.Close(status);
  *tx.state().mutable_execution()->mutable_close_time() = e.event_time();
  return absl::OkStatus();
}

// Workflow task scheduled, started, completed, failed and timed out.
// Returns nothing when `e` is of another family.
std::optional<absl::Status> ApplyWorkflowTaskEvent(RunTransaction& tx, const HistoryEvent& e) {
  auto& state = tx.state();
  switch (e.event_type()) {
    // Workflow tasks (RunTransaction::ScheduleWorkflowTask, RecordWorkflowTaskStarted,
    // RespondWorkflowTaskCompleted/Failed, the workflow task timeout).
    case enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED: {
      const auto& a = e.workflow_task_scheduled_event_attributes();
      if (state.workflow_task().scheduled_event_id() != 0) {
        return Refuse(e, absl::StrCat("schedules a workflow task while the one scheduled at event ",
                                      state.workflow_task().scheduled_event_id(), " is pending"));
      }
      auto* wft = state.mutable_workflow_task();
      wft->Clear();
      wft->set_scheduled_event_id(e.event_id());
      wft->set_attempt(a.attempt() < 1 ? 1 : a.attempt());
      *wft->mutable_scheduled_time() = e.event_time();
      *wft->mutable_start_to_close_timeout() = state.execution().default_workflow_task_timeout();
      wft->set_task_queue(state.execution().task_queue());
      QueueWorkflowTask(tx);
      return absl::OkStatus();
    }
    case enums::EVENT_TYPE_WORKFLOW_TASK_STARTED: {
      const auto& a = e.workflow_task_started_event_attributes();
      if (absl::Status s = CheckWorkflowTask(tx, e, a.scheduled_event_id(), 0, false); !s.ok()) {
        return s;
      }
      auto* wft = state.mutable_workflow_task();
      wft->set_started_event_id(e.event_id());
      *wft->mutable_started_time() = e.event_time();
      wft->set_identity(a.identity());
      wft->set_request_id(a.request_id());
      TimerTask timeout;
      timeout.set_kind(TimerTask::KIND_WORKFLOW_TASK_TIMEOUT);
      timeout.set_event_id(wft->scheduled_event_id());
      timeout.set_attempt(wft->attempt());
      timeout.set_timeout_type(enums::TIMEOUT_TYPE_START_TO_CLOSE);
      *wft->mutable_timeout_timer() =
          tx.AddTimer(EventTime(e) + FromProtoDuration(wft->start_to_close_timeout()), timeout);
      DropQueued(tx, persistence::TaskKind::kWorkflow, wft->scheduled_event_id());
      return absl::OkStatus();
    }
    case enums::EVENT_TYPE_WORKFLOW_TASK_COMPLETED: {
      const auto& a = e.workflow_task_completed_event_attributes();
      if (absl::Status s =
              CheckWorkflowTask(tx, e, a.scheduled_event_id(), a.started_event_id(), true);
          !s.ok()) {
        return s;
      }
      state.set_last_completed_workflow_task_started_event_id(a.started_event_id());
      EndWorkflowTask(tx);
      ApplyCompletedVersioning(tx, a);
      return absl::OkStatus();
    }
    case enums::EVENT_TYPE_WORKFLOW_TASK_FAILED: {
      const auto& a = e.workflow_task_failed_event_attributes();
      if (absl::Status s =
              CheckWorkflowTask(tx, e, a.scheduled_event_id(), a.started_event_id(), true);
          !s.ok()) {
        return s;
      }
      EndWorkflowTask(tx);
      if (a.cause() == enums::WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW &&
          a.new_run_id() == state.execution().run_id()) {
        // The failure a reset writes into its new run (reset.cc).
        *state.mutable_execution()->mutable_last_reset_time() = e.event_time();
        state.mutable_execution()->set_reset_base_run_id(a.base_run_id());
      }
      return absl::OkStatus();
    }
    case enums::EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT: {
      const auto& a = e.workflow_task_timed_out_event_attributes();
      if (absl::Status s = CheckWorkflowTask(tx, e, a.scheduled_event_id(), a.started_event_id(),
                                             a.started_event_id() != 0);
          !s.ok()) {
        return s;
      }
      EndWorkflowTask(tx);
      return absl::OkStatus();
    }
    default:
      return std::nullopt;
  }
}

// Activities, user timers and markers.
// Returns nothing when `e` is of another family.
std::optional<absl::Status> ApplyActivityOrTimerEvent(RunTransaction& tx, const HistoryEvent& e) {
  switch (e.event_type()) {
    // Activities (workflow_tasks.cc, activity_tasks.cc, timers.cc).
    case enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
      return ScheduleActivity(tx, e);
    case enums::EVENT_TYPE_ACTIVITY_TASK_STARTED:
      return StartActivity(tx, e);
    case enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
    case enums::EVENT_TYPE_ACTIVITY_TASK_FAILED:
    case enums::EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
    case enums::EVENT_TYPE_ACTIVITY_TASK_CANCELED:
      return CloseActivity(tx, e);
    case enums::EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED:
      return RequestActivityCancel(tx, e);

    // User timers.
    case enums::EVENT_TYPE_TIMER_STARTED:
      return StartTimer(tx, e);
    case enums::EVENT_TYPE_TIMER_FIRED:
      return EndTimer(tx, e, e.timer_fired_event_attributes().timer_id(),
                      e.timer_fired_event_attributes().started_event_id());
    case enums::EVENT_TYPE_TIMER_CANCELED:
      return EndTimer(tx, e, e.timer_canceled_event_attributes().timer_id(),
                      e.timer_canceled_event_attributes().started_event_id());

    case enums::EVENT_TYPE_MARKER_RECORDED:
      return absl::OkStatus();
    default:
      return std::nullopt;
  }
}

// Signals, cancel requests, search attributes and memo.
// Returns nothing when `e` is of another family.
std::optional<absl::Status> ApplyExternalInputEvent(RunTransaction& tx, const HistoryEvent& e) {
  auto& state = tx.state();
  switch (e.event_type()) {
    // From outside (client_ops.cc) and the workflow's own properties (workflow_tasks.cc).
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED: {
      // Remembered as the active side did (client_ops.cc), for a retry after a failover.
      SeenRequest(state, e.workflow_execution_signaled_event_attributes().request_id());
      return absl::OkStatus();
    }
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
      state.mutable_execution()->set_cancel_requested(true);
      return absl::OkStatus();
    case enums::EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
      MergeFields(state.mutable_execution()->mutable_search_attributes()->mutable_indexed_fields(),
                  e.upsert_workflow_search_attributes_event_attributes()
                      .search_attributes()
                      .indexed_fields());
      tx.VisibilityChanged();
      return absl::OkStatus();
    case enums::EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
      MergeFields(state.mutable_execution()->mutable_memo()->mutable_fields(),
                  e.workflow_properties_modified_event_attributes().upserted_memo().fields());
      tx.VisibilityChanged();
      return absl::OkStatus();
    default:
      return std::nullopt;
  }
}

// Child workflows and requests to other workflows.
// Returns nothing when `e` is of another family.
std::optional<absl::Status> ApplyChildOrExternalRequestEvent(RunTransaction& tx,
                                                             const HistoryEvent& e) {
  auto& state = tx.state();
  switch (e.event_type()) {
    // Child workflows (child_workflows.cc).
    case enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
      return InitiateChild(tx, e);
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED: {
      const auto& a = e.child_workflow_execution_started_event_attributes();
      absl::StatusOr<ChildExecutionInfo*> child = FindChild(tx, e, a.initiated_event_id());
      if (!child.ok()) return child.status();
      if ((*child)->started_event_id() != 0) return Refuse(e, "starts a child that is started");
      (*child)->set_run_id(a.workflow_execution().run_id());
      (*child)->set_started_event_id(e.event_id());
      return absl::OkStatus();
    }
    case enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED:
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED:
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED:
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT:
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED: {
      const int64_t initiated = ChildEndInitiated(e);
      absl::StatusOr<ChildExecutionInfo*> child = FindChild(tx, e, initiated);
      if (!child.ok()) return child.status();
      // (A child's end always follows its started event in the history: the active side's
      // `closed` flag only covers the moment both wait in the buffer.)
      state.mutable_children()->erase(initiated);
      return absl::OkStatus();
    }

    // Signals and cancellations sent to other workflows (external_requests.cc).
    case enums::EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
      return InitiateExternal(tx, e, /*is_cancel=*/false);
    case enums::EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
      return InitiateExternal(tx, e, /*is_cancel=*/true);
    case enums::EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED:
      return ResolveExternal(
          tx, e, e.external_workflow_execution_signaled_event_attributes().initiated_event_id(),
          false);
    case enums::EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED:
      return ResolveExternal(
          tx, e,
          e.signal_external_workflow_execution_failed_event_attributes().initiated_event_id(),
          false);
    case enums::EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
      return ResolveExternal(
          tx, e,
          e.external_workflow_execution_cancel_requested_event_attributes().initiated_event_id(),
          true);
    case enums::EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED:
      return ResolveExternal(tx, e,
                             e.request_cancel_external_workflow_execution_failed_event_attributes()
                                 .initiated_event_id(),
                             true);
    default:
      return std::nullopt;
  }
}

// Workflow updates.
// Returns nothing when `e` is of another family.
std::optional<absl::Status> ApplyUpdateEvent(RunTransaction& tx, const HistoryEvent& e) {
  auto& state = tx.state();
  switch (e.event_type()) {
    // Updates (updates.cc): admitted ones live in memory only; accepted and completed ones
    // are in the state.
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED:
      return absl::OkStatus();
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED: {
      const std::string& id =
          e.workflow_execution_update_accepted_event_attributes().protocol_instance_id();
      if (id.empty()) return Refuse(e, "has no update id");
      if (state.updates().contains(id)) {
        return Refuse(e, absl::StrCat("accepts update ", id, ", which is accepted already"));
      }
      (*state.mutable_updates())[id].set_accepted_event_id(e.event_id());
      return absl::OkStatus();
    }
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED: {
      const std::string& id =
          e.workflow_execution_update_completed_event_attributes().meta().update_id();
      auto it = state.mutable_updates()->find(id);
      if (it == state.mutable_updates()->end() || it->second.completed_event_id() != 0) {
        return Refuse(e, absl::StrCat("completes update ", id, ", which is not accepted and open"));
      }
      it->second.set_completed_event_id(e.event_id());
      return absl::OkStatus();
    }
    default:
      return std::nullopt;
  }
}

// The run's start and end.
// Returns nothing when `e` is of another family.
std::optional<absl::Status> ApplyRunLifecycleEvent(RunTransaction& tx, const HistoryEvent& e) {
  switch (e.event_type()) {
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
      return ApplyStarted(tx, e);

    // The run's end.
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
      return CloseRun(tx, e, enums::WORKFLOW_EXECUTION_STATUS_COMPLETED,
                      e.workflow_execution_completed_event_attributes().new_execution_run_id());
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
      return CloseRun(tx, e, enums::WORKFLOW_EXECUTION_STATUS_FAILED,
                      e.workflow_execution_failed_event_attributes().new_execution_run_id());
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
      return CloseRun(tx, e, enums::WORKFLOW_EXECUTION_STATUS_TIMED_OUT,
                      e.workflow_execution_timed_out_event_attributes().new_execution_run_id());
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
      return CloseRun(tx, e, enums::WORKFLOW_EXECUTION_STATUS_CANCELED, "");
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
      return CloseRun(tx, e, enums::WORKFLOW_EXECUTION_STATUS_TERMINATED, "");
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW: {
      const std::string& next =
          e.workflow_execution_continued_as_new_event_attributes().new_execution_run_id();
      if (next.empty()) return Refuse(e, "has no new run id");
      return CloseRun(tx, e, enums::WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, next);
    }
    default:
      return std::nullopt;
  }
}

absl::Status ApplyOne(RunTransaction& tx, const HistoryEvent& e) {
  for (auto apply : {ApplyRunLifecycleEvent, ApplyWorkflowTaskEvent, ApplyActivityOrTimerEvent,
                     ApplyExternalInputEvent, ApplyChildOrExternalRequestEvent, ApplyUpdateEvent}) {
    if (std::optional<absl::Status> s = apply(tx, e); s.has_value()) return *std::move(s);
  }
  return Refuse(e, "is not of a type this server applies");
}

}  // namespace

absl::Status ApplyReplicatedEvents(RunTransaction& tx, const std::vector<HistoryEvent>& batch) {
  if (batch.size() > kMaxReplicatedBatch) {
    return absl::InvalidArgumentError(absl::StrCat("a replicated batch of ", batch.size(),
                                                   " events; at most ", kMaxReplicatedBatch));
  }
  if (tx.HasBuffered()) {
    return absl::FailedPreconditionError(
        "the run holds buffered events: they must be flushed before replicated events apply");
  }
  for (const HistoryEvent& e : batch) {
    const bool first = e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED;
    if (first != (tx.state().next_event_id() == 1)) {
      return Refuse(e, first ? "starts a run that has events already"
                             : "comes before the run's WorkflowExecutionStarted");
    }
    if (!first && !tx.IsOpen()) return Refuse(e, "follows the run's closing event");
    if (absl::Status s = tx.AppendReplicated(e); !s.ok()) return s;
    if (absl::Status s = ApplyOne(tx, e); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace tock::server::history
