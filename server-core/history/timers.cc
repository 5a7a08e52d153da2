// Durable timers coming due: user timers, workflow task and activity timeouts, activity
// retries, workflow run timeouts. Each firing is one transaction that also deletes the timer
// row, so a timer fires at least once and, once its effect is committed, never again.
#include "absl/strings/str_cat.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "server-core/history/activity_retry.h"
#include "server-core/history/activity_timeouts.h"
#include "server-core/history/history_engine.h"

namespace tock::server::history {

// activity_tasks.cc
void AppendActivityStarted(RunTransaction& tx, const tock::persistence::v1::ActivityInfo& a);
int64_t LastAppendedId(const RunTransaction& tx, temporal::api::enums::v1::EventType type);
void RemoveActivity(RunTransaction& tx, int64_t scheduled_event_id);
bool RetryActivity(RunTransaction& tx, tock::persistence::v1::ActivityInfo& a,
                   const temporal::api::failure::v1::Failure& failure,
                   temporal::api::enums::v1::RetryState* retry_state);

namespace {

namespace enums = temporal::api::enums::v1;
using tock::persistence::v1::TimerTask;

void FireUserTimer(RunTransaction& tx, const TimerTask& t) {
  auto* timers = tx.state().mutable_timers();
  auto it = timers->find(t.timer_id());
  if (it == timers->end() || it->second.started_event_id() != t.event_id()) return;
  HistoryEvent& e = tx.AppendOrBuffer(enums::EVENT_TYPE_TIMER_FIRED);
  e.mutable_timer_fired_event_attributes()->set_timer_id(t.timer_id());
  e.mutable_timer_fired_event_attributes()->set_started_event_id(t.event_id());
  timers->erase(it);
  tx.ScheduleWorkflowTask();
}

// A workflow task timed out: WorkflowTaskTimedOut, stickiness ended (the next task goes where
// any worker takes it, with the whole history) and the task scheduled again.
// - START_TO_CLOSE: a started task whose worker did not answer; the next attempt.
// - SCHEDULE_TO_START: a sticky task no worker took in time (its worker is gone, or the
//   server restarted and the task, kept in memory only, went with it); as Temporal does, at
//   the same attempt: it is not a failure of the workflow's code.
void FireWorkflowTaskTimeout(RunTransaction& tx, const TimerTask& t) {
  const auto& wft = tx.state().workflow_task();
  const bool schedule_to_start = t.timeout_type() == enums::TIMEOUT_TYPE_SCHEDULE_TO_START;
  const bool started = wft.started_event_id() != 0;
  if (wft.scheduled_event_id() != t.event_id() || wft.attempt() != t.attempt() ||
      started == schedule_to_start || (schedule_to_start && !wft.sticky())) {
    return;  // another task by now, or this one moved on: stale
  }
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT);
  auto* attrs = e.mutable_workflow_task_timed_out_event_attributes();
  attrs->set_scheduled_event_id(wft.scheduled_event_id());
  attrs->set_started_event_id(wft.started_event_id());
  attrs->set_timeout_type(schedule_to_start ? enums::TIMEOUT_TYPE_SCHEDULE_TO_START
                                            : enums::TIMEOUT_TYPE_START_TO_CLOSE);
  const int32_t attempt = wft.attempt();
  tx.state().clear_workflow_task();
  tx.ClearSticky();
  tx.FlushBuffered();  // (none unless started: events are buffered only then)
  tx.ScheduleWorkflowTask(schedule_to_start ? attempt : attempt + 1);
}

void FireActivityTimeout(RunTransaction& tx, const TimerTask& t) {
  auto* activities = tx.state().mutable_activities();
  auto it = activities->find(t.event_id());
  if (it == activities->end()) return;
  auto& a = it->second;
  const auto type = MissedActivityDeadline(
      a, static_cast<enums::TimeoutType>(t.timeout_type()), t.stamp());
  if (type == enums::TIMEOUT_TYPE_UNSPECIFIED) return;  // the attempt it was for is gone
  const bool per_attempt =
      type == enums::TIMEOUT_TYPE_START_TO_CLOSE || type == enums::TIMEOUT_TYPE_HEARTBEAT;
  if (per_attempt && (a.stamp() != t.stamp() || !a.has_started_time())) return;
  if (type == enums::TIMEOUT_TYPE_HEARTBEAT) {
    absl::Time last = a.has_last_heartbeat_time() ? FromProtoTime(a.last_heartbeat_time())
                                                  : FromProtoTime(a.started_time());
    absl::Time due = last + FromProtoDuration(a.heartbeat_timeout());
    if (due > tx.now()) {  // heartbeats came in: look again when the new one is due
      *a.add_timers() = tx.AddTimer(due, t);
      return;
    }
  }
  temporal::api::failure::v1::Failure failure;
  failure.set_message(absl::StrCat("activity ", TimeoutTypeName(type), " timeout"));
  failure.mutable_timeout_failure_info()->set_timeout_type(type);
  enums::RetryState retry_state = enums::RETRY_STATE_TIMEOUT;
  if (per_attempt && RetryActivity(tx, a, failure, &retry_state)) return;
  if (retry_state == enums::RETRY_STATE_TIMEOUT && type != enums::TIMEOUT_TYPE_SCHEDULE_TO_START) {
    // As Temporal reports it (timer_queue_active_task_executor.go): no time is left for
    // another attempt, whichever deadline fired.
    failure.set_message(
        "Not enough time to schedule next retry before activity ScheduleToClose timeout, giving "
        "up retrying");
    failure.mutable_timeout_failure_info()->set_timeout_type(enums::TIMEOUT_TYPE_SCHEDULE_TO_CLOSE);
  }
  if (a.has_heartbeat_details()) {
    *failure.mutable_timeout_failure_info()->mutable_last_heartbeat_details() = a.heartbeat_details();
  }
  if (a.has_started_time()) AppendActivityStarted(tx, a);
  const int64_t started_id =
      a.has_started_time() ? LastAppendedId(tx, enums::EVENT_TYPE_ACTIVITY_TASK_STARTED) : 0;
  HistoryEvent& e = tx.AppendOrBuffer(enums::EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT);
  auto* attrs = e.mutable_activity_task_timed_out_event_attributes();
  *attrs->mutable_failure() = failure;
  attrs->set_scheduled_event_id(a.scheduled_event_id());
  attrs->set_started_event_id(started_id);
  attrs->set_retry_state(retry_state);
  RemoveActivity(tx, t.event_id());
  tx.ScheduleWorkflowTask();
}

void FireActivityRetry(RunTransaction& tx, const TimerTask& t) {
  auto* activities = tx.state().mutable_activities();
  auto it = activities->find(t.event_id());
  if (it == activities->end() || it->second.stamp() != t.stamp()) return;
  *it->second.mutable_current_attempt_scheduled_time() = ToProtoTime(tx.now());
  tx.DispatchActivity(it->second);
}

}  // namespace

absl::Status HistoryEngine::TimeOutRun(RunTransaction& tx, NamespaceRef ns, bool execution_expired) {
  // The started workflow task's outcome, if any, can no longer be recorded; the run ends here.
  ns.failover_version = tx.version();  // a following run continues this run's version
  temporal::api::failure::v1::Failure failure;
  failure.set_message("workflow run timed out");
  failure.mutable_timeout_failure_info()->set_timeout_type(enums::TIMEOUT_TYPE_START_TO_CLOSE);
  enums::RetryState retry_state = enums::RETRY_STATE_TIMEOUT;
  // The execution timeout ends the whole chain: no retry, no next cron run.
  absl::StatusOr<std::unique_ptr<RunTransaction>> next =
      execution_expired ? nullptr : NextRunAfterFailure(tx, ns, failure, &retry_state);
  if (!next.ok()) return next.status();
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT);
  auto* ev = e.mutable_workflow_execution_timed_out_event_attributes();
  ev->set_retry_state(retry_state);
  if (*next) {
    ev->set_new_execution_run_id((*next)->execution().run_id());
    tx.state().mutable_execution()->set_new_execution_run_id((*next)->execution().run_id());
  }
  tx.Close(enums::WORKFLOW_EXECUTION_STATUS_TIMED_OUT);
  if (*next) tx.SetFollowingRun(std::move(*next));
  return absl::OkStatus();
}

absl::Status HistoryEngine::FireTimer(const persistence::TimerTaskRow& row) {
  const TimerTask& t = row.task;
  // On a standby cluster the active one fires it: its events arrive by replication.
  if (parking_.ParkIfStandby(t.namespace_id(), row)) return absl::OkStatus();
  NamespaceRef ns;
  ns.id = t.namespace_id();
  // The namespace's version when replicated (a timer that fires after a failover writes
  // events of the new active cluster); else the run's current version.
  ns.failover_version = activity_of_ ? activity_of_(t.namespace_id()).failover_version : -1;
  absl::Status s = Mutate(ns, {t.namespace_id(), t.workflow_id(), t.run_id()},
                          [&](RunTransaction& tx) -> absl::Status {
    tx.done_timers().push_back(row);
    if (!tx.IsOpen()) return absl::OkStatus();
    switch (t.kind()) {
      case TimerTask::KIND_USER_TIMER:
        FireUserTimer(tx, t);
        break;
      case TimerTask::KIND_WORKFLOW_TASK_TIMEOUT:
        FireWorkflowTaskTimeout(tx, t);
        break;
      case TimerTask::KIND_ACTIVITY_TIMEOUT:
        FireActivityTimeout(tx, t);
        break;
      case TimerTask::KIND_ACTIVITY_RETRY:
        FireActivityRetry(tx, t);
        break;
      case TimerTask::KIND_WORKFLOW_BACKOFF:
        // Unless a signal already got the first workflow task dispatched (and done).
        if (tx.state().last_completed_workflow_task_started_event_id() == 0)
          tx.ScheduleWorkflowTask();
        break;
      case TimerTask::KIND_WORKFLOW_RUN_TIMEOUT:
        return TimeOutRun(tx, ns, /*execution_expired=*/false);
      case TimerTask::KIND_WORKFLOW_EXECUTION_TIMEOUT:
        return TimeOutRun(tx, ns, /*execution_expired=*/true);
      default:
        break;
    }
    return absl::OkStatus();
  });
  // NOT_FOUND: the run is gone, nothing to do. Other errors (a lost shard, a busy database)
  // are retried by the timer queue; the row is still stored.
  return s;
}

}  // namespace tock::server::history
