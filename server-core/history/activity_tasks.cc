// Activity tasks: start at poll, heartbeats, results, retries by policy.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "lib/common/ids.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "server-core/history/activity_retry.h"
#include "server-core/history/activity_start.h"
#include "server-core/history/activity_timeouts.h"
#include "server-core/history/history_engine.h"
#include "server-core/persistence/read_retry.h"
#include "server-core/history/task_token.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using tock::persistence::v1::ActivityInfo;
using tock::persistence::v1::TimerTask;

absl::StatusOr<ActivityInfo*> StartedActivity(RunTransaction& tx, const TaskToken& token) {
  if (!token.is_activity() || !tx.IsOpen()) return absl::NotFoundError("Activity task not found.");
  auto* activities = tx.state().mutable_activities();
  auto it = activities->find(token.scheduled_event_id());
  if (it == activities->end() || it->second.stamp() != token.stamp() ||
      !it->second.has_started_time()) {
    return absl::NotFoundError("Activity task not found.");
  }
  return &it->second;
}

}  // namespace

void AppendActivityStarted(RunTransaction& tx, const ActivityInfo& a) {
  HistoryEvent& e = tx.AppendOrBuffer(enums::EVENT_TYPE_ACTIVITY_TASK_STARTED);
  auto* attrs = e.mutable_activity_task_started_event_attributes();
  attrs->set_scheduled_event_id(a.scheduled_event_id());
  attrs->set_identity(a.started_identity());
  attrs->set_request_id(a.request_id());
  attrs->set_attempt(a.attempt());
  if (a.has_last_failure()) *attrs->mutable_last_failure() = a.last_failure();
}

int64_t LastAppendedId(const RunTransaction& tx, enums::EventType type) {
  if (tx.WorkflowTaskStarted() || tx.new_events().empty()) return 0;  // fixed at flush
  const HistoryEvent& last = tx.new_events().back();
  return last.event_type() == type ? last.event_id() : 0;
}

void RemoveActivity(RunTransaction& tx, int64_t scheduled_event_id) {
  auto* activities = tx.state().mutable_activities();
  auto it = activities->find(scheduled_event_id);
  if (it == activities->end()) return;
  for (const auto& key : it->second.timers()) tx.RetireTimer(key);
  activities->erase(it);
}

bool RetryActivity(RunTransaction& tx, ActivityInfo& a, const temporal::api::failure::v1::Failure& failure,
                   enums::RetryState* retry_state) {
  absl::StatusOr<absl::Duration> backoff = NextActivityRetry(a, failure, tx.now(), retry_state);
  if (!backoff.ok()) return false;
  for (const auto& key : a.timers()) tx.RetireTimer(key);
  a.clear_timers();
  a.set_attempt(a.attempt() + 1);
  a.set_stamp(a.stamp() + 1);
  a.clear_started_time();
  a.clear_started_identity();
  *a.mutable_last_failure() = failure;
  // When the next attempt is scheduled (Temporal's ScheduledTime of a retry): what a standby
  // arms its retry timer at when it gets this state (replication_sync_activity.cc); set to
  // the dispatch time again when the retry fires.
  *a.mutable_current_attempt_scheduled_time() = ToProtoTime(tx.now() + *backoff);
  TimerTask retry;
  retry.set_kind(TimerTask::KIND_ACTIVITY_RETRY);
  retry.set_event_id(a.scheduled_event_id());
  retry.set_stamp(a.stamp());
  retry.set_attempt(a.attempt());
  *a.add_timers() = tx.AddTimer(tx.now() + *backoff, retry);
  // The next attempt waits for a worker from when it is due; the schedule-to-close deadline
  // still applies to the whole activity.
  ArmUnstartedActivityTimeouts(tx, a);
  return true;
}

void StartActivityAttempt(RunTransaction& tx, ActivityInfo& a, const std::string& identity) {
  for (const auto& key : a.timers()) tx.RetireTimer(key);
  a.clear_timers();
  *a.mutable_started_time() = ToProtoTime(tx.now());
  a.set_started_identity(identity);
  a.set_request_id(NewUuid());
  // Every deadline of a started attempt is stamped with it (a later attempt ignores them).
  AddActivityTimeout(tx, a, enums::TIMEOUT_TYPE_START_TO_CLOSE,
                     tx.now() + FromProtoDuration(a.start_to_close_timeout()), true);
  if (FromProtoDuration(a.heartbeat_timeout()) > absl::ZeroDuration()) {
    AddActivityTimeout(tx, a, enums::TIMEOUT_TYPE_HEARTBEAT,
                       tx.now() + FromProtoDuration(a.heartbeat_timeout()), true);
  }
  const absl::Duration s2c = FromProtoDuration(a.schedule_to_close_timeout());
  if (s2c > absl::ZeroDuration()) {
    AddActivityTimeout(tx, a, enums::TIMEOUT_TYPE_SCHEDULE_TO_CLOSE,
                       FromProtoTime(a.scheduled_time()) + s2c, true);
  }
}

wf::PollActivityTaskQueueResponse ActivityTaskOf(
    const std::string& namespace_name, const tock::persistence::v1::MutableState& run,
    const ActivityInfo& a,
    const temporal::api::history::v1::ActivityTaskScheduledEventAttributes& attrs) {
  const auto& exec = run.execution();
  wf::PollActivityTaskQueueResponse out;
  out.set_task_token(EncodeTaskToken(MakeActivityTaskToken(run, a)));
  out.set_workflow_namespace(namespace_name);
  out.mutable_workflow_type()->set_name(exec.workflow_type());
  out.mutable_workflow_execution()->set_workflow_id(exec.workflow_id());
  out.mutable_workflow_execution()->set_run_id(exec.run_id());
  *out.mutable_activity_type() = attrs.activity_type();
  out.set_activity_id(attrs.activity_id());
  *out.mutable_header() = attrs.header();
  *out.mutable_input() = attrs.input();
  if (a.has_heartbeat_details()) *out.mutable_heartbeat_details() = a.heartbeat_details();
  *out.mutable_scheduled_time() = a.scheduled_time();
  *out.mutable_current_attempt_scheduled_time() = a.current_attempt_scheduled_time();
  *out.mutable_started_time() = a.started_time();
  out.set_attempt(a.attempt());
  *out.mutable_schedule_to_close_timeout() = a.schedule_to_close_timeout();
  *out.mutable_start_to_close_timeout() = a.start_to_close_timeout();
  *out.mutable_heartbeat_timeout() = a.heartbeat_timeout();
  *out.mutable_retry_policy() = a.retry_policy();
  if (attrs.has_priority()) *out.mutable_priority() = attrs.priority();
  return out;
}

// An activity task's start for a poll: what its change leaves for the response.
struct HistoryEngine::ActivityStart {
  NamespaceRef ns;
  persistence::TaskQueueTask task;
  std::string identity;
  MutableStateRecord committed;
  ActivityInfo started;
};

Mutation HistoryEngine::StartActivityTask(ActivityStart& start) {
  return [this, &start](RunTransaction& tx) -> absl::Status {
    const auto& t = start.task.task;
    tx.ConsumeTask(start.task.task_id);
    auto* activities = tx.state().mutable_activities();
    auto it = activities->find(t.scheduled_event_id());
    if (!tx.IsOpen() || it == activities->end() || it->second.stamp() != t.stamp() ||
        it->second.has_started_time()) {
      return CommitThenFail(absl::NotFoundError("Activity task not found."));
    }
    ActivityInfo& a = it->second;
    metrics_->activity_task_schedule_to_start_latency.Observe(
        tx.now() - FromProtoTime(a.current_attempt_scheduled_time()));
    StartActivityAttempt(tx, a, start.identity);
    start.committed = tx.state();
    start.started = a;
    return absl::OkStatus();
  };
}

absl::StatusOr<wf::PollActivityTaskQueueResponse> HistoryEngine::ActivityTaskStarted(
    const ActivityStart& start, absl::Status committed) {
  if (!committed.ok()) return committed;
  const int64_t scheduled_id = start.started.scheduled_event_id();
  absl::StatusOr<std::vector<HistoryEvent>> scheduled = persistence::ReadWithRetries([&] {
    return store_.ReadEvents(start.task.task.run_id(), scheduled_id, scheduled_id + 1, 1);
  });
  if (!scheduled.ok()) return scheduled.status();
  if (scheduled->empty()) return absl::InternalError("the ActivityTaskScheduled event is missing");
  return ActivityTaskOf(start.ns.name, start.committed, start.started,
                        scheduled->front().activity_task_scheduled_event_attributes());
}

absl::StatusOr<wf::PollActivityTaskQueueResponse> HistoryEngine::RecordActivityTaskStarted(
    const NamespaceRef& ns, const persistence::TaskQueueTask& task, const std::string& identity) {
  ActivityStart start{.ns = ns, .task = task, .identity = identity};
  const auto& t = task.task;
  absl::Status s = Mutate(ns, {t.namespace_id(), t.workflow_id(), t.run_id()},
                          StartActivityTask(start));
  return ActivityTaskStarted(start, std::move(s));
}

void HistoryEngine::RecordActivityTaskStartedAsync(
    const NamespaceRef& ns, const persistence::TaskQueueTask& task, const std::string& identity,
    Answer<wf::PollActivityTaskQueueResponse> done) {
  auto start = std::make_shared<ActivityStart>(ActivityStart{.ns = ns, .task = task, .identity = identity});
  const auto& t = task.task;
  MutateAsync(ns, {t.namespace_id(), t.workflow_id(), t.run_id()}, StartActivityTask(*start),
              /*offer_speculative=*/false, [this, start, done = std::move(done)](absl::Status s) {
                done(ActivityTaskStarted(*start, std::move(s)));
              });
}

Mutation HistoryEngine::CompleteActivity(const TaskToken& token,
                                         const temporal::api::common::v1::Payloads& result,
                                         const std::string& identity) {
  return [this, &token, &result, &identity](RunTransaction& tx) -> absl::Status {
    absl::StatusOr<ActivityInfo*> a = StartedActivity(tx, token);
    if (!a.ok()) return a.status();
    if (!identity.empty()) (*a)->set_started_identity(identity);
    AppendActivityStarted(tx, **a);
    const int64_t started_id = LastAppendedId(tx, enums::EVENT_TYPE_ACTIVITY_TASK_STARTED);
    HistoryEvent& e = tx.AppendOrBuffer(enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
    auto* attrs = e.mutable_activity_task_completed_event_attributes();
    *attrs->mutable_result() = result;
    attrs->set_scheduled_event_id(token.scheduled_event_id());
    attrs->set_started_event_id(started_id);
    attrs->set_identity(identity);
    RemoveActivity(tx, token.scheduled_event_id());
    tx.ScheduleWorkflowTask();
    return absl::OkStatus();
  };
}

absl::Status HistoryEngine::RespondActivityTaskCompleted(
    const NamespaceRef& ns, const std::string& token_bytes,
    const temporal::api::common::v1::Payloads& result, const std::string& identity) {
  absl::StatusOr<TaskToken> token = DecodeTaskTokenFor(token_bytes, ns.id);
  if (!token.ok()) return token.status();
  return Mutate(ns, {token->namespace_id(), token->workflow_id(), token->run_id()},
                CompleteActivity(*token, result, identity));
}

void HistoryEngine::RespondActivityTaskCompletedAsync(
    const NamespaceRef& ns, const std::string& token_bytes,
    const temporal::api::common::v1::Payloads& result, const std::string& identity,
    std::function<void(absl::Status)> done) {
  absl::StatusOr<TaskToken> decoded = DecodeTaskTokenFor(token_bytes, ns.id);
  if (!decoded.ok()) return done(decoded.status());
  auto token = std::make_shared<TaskToken>(std::move(*decoded));
  MutateAsync(ns, {token->namespace_id(), token->workflow_id(), token->run_id()},
              CompleteActivity(*token, result, identity), /*offer_speculative=*/false,
              [token, done = std::move(done)](absl::Status s) { done(std::move(s)); });
}

absl::Status HistoryEngine::RespondActivityTaskFailed(const NamespaceRef& ns,
                                                      const wf::RespondActivityTaskFailedRequest& req) {
  absl::StatusOr<TaskToken> token = DecodeTaskTokenFor(req.task_token(), ns.id);
  if (!token.ok()) return token.status();
  return Mutate(ns, {token->namespace_id(), token->workflow_id(), token->run_id()},
                [&](RunTransaction& tx) -> absl::Status {
    absl::StatusOr<ActivityInfo*> a = StartedActivity(tx, *token);
    if (!a.ok()) return a.status();
    ActivityInfo& activity = **a;
    if (req.has_last_heartbeat_details()) {
      *activity.mutable_heartbeat_details() = req.last_heartbeat_details();
    }
    enums::RetryState retry_state = enums::RETRY_STATE_UNSPECIFIED;
    if (RetryActivity(tx, activity, req.failure(), &retry_state)) return absl::OkStatus();
    AppendActivityStarted(tx, activity);
    const int64_t started_id = LastAppendedId(tx, enums::EVENT_TYPE_ACTIVITY_TASK_STARTED);
    HistoryEvent& e = tx.AppendOrBuffer(enums::EVENT_TYPE_ACTIVITY_TASK_FAILED);
    auto* attrs = e.mutable_activity_task_failed_event_attributes();
    *attrs->mutable_failure() = req.failure();
    attrs->set_scheduled_event_id(token->scheduled_event_id());
    attrs->set_started_event_id(started_id);
    attrs->set_identity(req.identity());
    attrs->set_retry_state(retry_state);
    RemoveActivity(tx, token->scheduled_event_id());
    tx.ScheduleWorkflowTask();
    return absl::OkStatus();
  });
}

absl::Status HistoryEngine::RespondActivityTaskCanceled(
    const NamespaceRef& ns, const std::string& token_bytes,
    const temporal::api::common::v1::Payloads& details, const std::string& identity) {
  absl::StatusOr<TaskToken> token = DecodeTaskTokenFor(token_bytes, ns.id);
  if (!token.ok()) return token.status();
  return Mutate(ns, {token->namespace_id(), token->workflow_id(), token->run_id()},
                [&](RunTransaction& tx) -> absl::Status {
    absl::StatusOr<ActivityInfo*> a = StartedActivity(tx, *token);
    if (!a.ok()) return a.status();
    if (!(*a)->cancel_requested()) {
      return absl::FailedPreconditionError("the activity was not asked to cancel");
    }
    const int64_t cancel_requested_id = (*a)->cancel_requested_event_id();
    AppendActivityStarted(tx, **a);
    const int64_t started_id = LastAppendedId(tx, enums::EVENT_TYPE_ACTIVITY_TASK_STARTED);
    HistoryEvent& e = tx.AppendOrBuffer(enums::EVENT_TYPE_ACTIVITY_TASK_CANCELED);
    auto* attrs = e.mutable_activity_task_canceled_event_attributes();
    *attrs->mutable_details() = details;
    attrs->set_latest_cancel_requested_event_id(cancel_requested_id);
    attrs->set_scheduled_event_id(token->scheduled_event_id());
    attrs->set_started_event_id(started_id);
    attrs->set_identity(identity);
    RemoveActivity(tx, token->scheduled_event_id());
    tx.ScheduleWorkflowTask();
    return absl::OkStatus();
  });
}

absl::StatusOr<wf::RecordActivityTaskHeartbeatResponse> HistoryEngine::RecordActivityTaskHeartbeat(
    const NamespaceRef& ns, const std::string& token_bytes,
    const temporal::api::common::v1::Payloads& details) {
  absl::StatusOr<TaskToken> token = DecodeTaskTokenFor(token_bytes, ns.id);
  if (!token.ok()) return token.status();
  bool cancel_requested = false;
  absl::Status s = Mutate(ns, {token->namespace_id(), token->workflow_id(), token->run_id()},
                          [&](RunTransaction& tx) -> absl::Status {
    absl::StatusOr<ActivityInfo*> a = StartedActivity(tx, *token);
    if (!a.ok()) return a.status();
    *(*a)->mutable_heartbeat_details() = details;
    *(*a)->mutable_last_heartbeat_time() = ToProtoTime(tx.now());
    cancel_requested = (*a)->cancel_requested();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  wf::RecordActivityTaskHeartbeatResponse out;
  out.set_cancel_requested(cancel_requested);
  return out;
}

}  // namespace tock::server::history
