// Workflow task outcomes: RespondWorkflowTaskCompleted (the commands, in order) and
// RespondWorkflowTaskFailed.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "server-core/history/command_limits.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/versioning.h"
#include "lib/common/cron_schedule.h"
#include "server-core/history/activity_retry.h"
#include "server-core/history/activity_start.h"
#include "server-core/history/activity_timeouts.h"
#include "server-core/history/task_token.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::command::v1::Command;
using tock::persistence::v1::ActivityInfo;
using tock::persistence::v1::TimerTask;

// Sticky execution: a worker that keeps the run cached names its own queue in
// sticky_attributes, and the run's next workflow tasks go there with only the new events;
// a completion without them (a worker with its cache off) ends stickiness.
absl::Status ApplyStickyAttributes(RunTransaction& tx,
                                   const wf::RespondWorkflowTaskCompletedRequest& req,
                                   const Limits& limits) {
  const std::string& queue = req.sticky_attributes().worker_task_queue().name();
  if (queue.empty()) {
    tx.ClearSticky();
    return absl::OkStatus();
  }
  if (absl::Status s = ValidateIdField(queue, "StickyAttributes.WorkerTaskQueue.Name", limits);
      !s.ok()) {
    return s;
  }
  tx.SetSticky(queue, FromProtoDuration(req.sticky_attributes().schedule_to_start_timeout()));
  return absl::OkStatus();
}

// A completion that only rejects updates: a speculative task that carried it leaves nothing.
bool OnlyRejectsUpdates(const wf::RespondWorkflowTaskCompletedRequest& req) {
  if (!req.commands().empty() || req.force_create_new_workflow_task()) return false;
  return std::all_of(req.messages().begin(), req.messages().end(), [](const auto& m) {
    return m.body().template Is<temporal::api::update::v1::Rejection>();
  });
}

bool ClosesWorkflow(const Command& c) {
  switch (c.command_type()) {
    case enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION:
    case enums::COMMAND_TYPE_FAIL_WORKFLOW_EXECUTION:
    case enums::COMMAND_TYPE_CANCEL_WORKFLOW_EXECUTION:
    case enums::COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION:
      return true;
    default:
      return false;
  }
}

// The started workflow task the token names, or NOT_FOUND.
absl::Status CheckWorkflowToken(const RunTransaction& tx, const TaskToken& token) {
  const auto& wft = tx.state().workflow_task();
  if (!const_cast<RunTransaction&>(tx).IsOpen() || wft.started_event_id() == 0 ||
      wft.scheduled_event_id() != token.scheduled_event_id() || wft.attempt() != token.attempt()) {
    return absl::NotFoundError("Workflow task not found.");
  }
  return absl::OkStatus();
}

// The timeouts as Temporal normalises them (activity_timeouts.h), and the retry policy's
// defaults.
absl::Status NormalizeScheduleActivity(
    temporal::api::command::v1::ScheduleActivityTaskCommandAttributes& a, absl::Duration run_timeout) {
  if (absl::Status s = NormalizeActivityTimeouts(a, run_timeout); !s.ok()) return s;
  if (!a.has_retry_policy()) a.mutable_retry_policy();
  auto* retry = a.mutable_retry_policy();
  if (FromProtoDuration(retry->initial_interval()) <= absl::ZeroDuration()) {
    *retry->mutable_initial_interval() = ToProtoDuration(absl::Seconds(1));
  }
  if (retry->backoff_coefficient() < 1) retry->set_backoff_coefficient(2.0);
  if (FromProtoDuration(retry->maximum_interval()) <= absl::ZeroDuration()) {
    *retry->mutable_maximum_interval() =
        ToProtoDuration(100 * FromProtoDuration(retry->initial_interval()));
  }
  return absl::OkStatus();
}


// One function per command (or family) of RespondWorkflowTaskCompleted; ApplyCommands
// dispatches to them in the commands' order. Each validates before it appends anything.

// ScheduleActivityTask: ActivityTaskScheduled, the activity's state, its timeouts, and its
// task; or, when the worker asked for it on the run's own queue and `eager_allowed`, no task:
// its id goes in `eager`, to be started once every command is applied (StartEagerActivities).
absl::Status ScheduleActivity(RunTransaction& tx, const Command& command, int64_t completed_id,
                              bool eager_allowed, std::vector<int64_t>& eager) {
  auto a = command.schedule_activity_task_command_attributes();
  if (a.activity_id().empty() || a.activity_type().name().empty()) {
    return absl::InvalidArgumentError("ScheduleActivityTask needs an activity id and type");
  }
  if (absl::Status s = NormalizeScheduleActivity(
          a, FromProtoDuration(tx.execution().workflow_run_timeout()));
      !s.ok()) {
    return s;
  }
  for (const auto& [id, existing] : tx.state().activities()) {
    if (existing.activity_id() == a.activity_id()) {
      return absl::InvalidArgumentError(
          absl::StrCat("activity id ", a.activity_id(), " is already in use"));
    }
  }
  const std::string queue =
      a.task_queue().name().empty() ? tx.execution().task_queue() : a.task_queue().name();
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
  auto* ev = e.mutable_activity_task_scheduled_event_attributes();
  ev->set_activity_id(a.activity_id());
  *ev->mutable_activity_type() = a.activity_type();
  ev->mutable_task_queue()->set_name(queue);
  ev->mutable_task_queue()->set_kind(enums::TASK_QUEUE_KIND_NORMAL);
  *ev->mutable_header() = a.header();
  *ev->mutable_input() = a.input();
  *ev->mutable_schedule_to_close_timeout() = a.schedule_to_close_timeout();
  *ev->mutable_schedule_to_start_timeout() = a.schedule_to_start_timeout();
  *ev->mutable_start_to_close_timeout() = a.start_to_close_timeout();
  *ev->mutable_heartbeat_timeout() = a.heartbeat_timeout();
  ev->set_workflow_task_completed_event_id(completed_id);
  *ev->mutable_retry_policy() = a.retry_policy();
  if (a.has_priority()) *ev->mutable_priority() = a.priority();

  const bool eagerly = eager_allowed && a.request_eager_execution() && queue == tx.execution().task_queue();
  AddScheduledActivity(tx, e.event_id(), *ev, queue, tx.now(),
                       eagerly ? ActivityDispatch::kEager : ActivityDispatch::kQueue);
  if (eagerly) eager.push_back(e.event_id());
  return absl::OkStatus();
}

// Eager activities (Temporal's handlePostCommandEagerExecuteActivity): each one a command of
// this completion scheduled eagerly is started for the completing worker, in this commit, and
// its task goes in the completion's answer. One the same completion cancelled is gone; none
// starts when the completion closed the run.
void StartEagerActivities(RunTransaction& tx, const std::vector<int64_t>& eager,
                          const std::string& identity, const std::string& namespace_name,
                          wf::RespondWorkflowTaskCompletedResponse& out) {
  if (!tx.IsOpen()) return;
  for (int64_t id : eager) {
    auto* activities = tx.state().mutable_activities();
    auto it = activities->find(id);
    if (it == activities->end() || it->second.has_started_time()) continue;
    auto event = std::find_if(tx.new_events().begin(), tx.new_events().end(),
                              [&](const HistoryEvent& e) { return e.event_id() == id; });
    if (event == tx.new_events().end()) continue;  // cannot be: scheduled by this completion
    StartActivityAttempt(tx, it->second, identity);
    *out.add_activity_tasks() = ActivityTaskOf(
        namespace_name, tx.state(), it->second, event->activity_task_scheduled_event_attributes());
  }
}

// RequestCancelActivityTask: ActivityTaskCancelRequested, and ActivityTaskCanceled at once
// when no worker has started the activity (which needs a new workflow task).
absl::Status RequestCancelActivity(RunTransaction& tx, const Command& command, int64_t completed_id,
                                   const std::string& identity, bool* needs_workflow_task) {
  int64_t scheduled = command.request_cancel_activity_task_command_attributes().scheduled_event_id();
  auto* activities = tx.state().mutable_activities();
  auto it = activities->find(scheduled);
  if (it == activities->end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("RequestCancelActivityTask: no pending activity scheduled at event ", scheduled));
  }
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED);
  e.mutable_activity_task_cancel_requested_event_attributes()->set_scheduled_event_id(scheduled);
  e.mutable_activity_task_cancel_requested_event_attributes()->set_workflow_task_completed_event_id(completed_id);
  if (!it->second.has_started_time()) {
    // Never picked up: cancelled at once, and the workflow hears about it.
    HistoryEvent& c = tx.Append(enums::EVENT_TYPE_ACTIVITY_TASK_CANCELED);
    auto* ca = c.mutable_activity_task_canceled_event_attributes();
    ca->set_scheduled_event_id(scheduled);
    ca->set_latest_cancel_requested_event_id(e.event_id());
    ca->set_identity(identity);
    for (const auto& key : it->second.timers()) tx.RetireTimer(key);
    activities->erase(it);
    *needs_workflow_task = true;
  } else {
    it->second.set_cancel_requested(true);
    it->second.set_cancel_requested_event_id(e.event_id());
  }
  return absl::OkStatus();
}

// StartTimer: TimerStarted, the timer's state and its user-timer task.
absl::Status StartTimer(RunTransaction& tx, const Command& command, int64_t completed_id) {
  const auto& a = command.start_timer_command_attributes();
  if (a.timer_id().empty()) return absl::InvalidArgumentError("StartTimer needs a timer id");
  if (tx.state().timers().contains(a.timer_id())) {
    return absl::InvalidArgumentError(absl::StrCat("timer id ", a.timer_id(), " is already in use"));
  }
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_TIMER_STARTED);
  auto* ev = e.mutable_timer_started_event_attributes();
  ev->set_timer_id(a.timer_id());
  *ev->mutable_start_to_fire_timeout() = a.start_to_fire_timeout();
  ev->set_workflow_task_completed_event_id(completed_id);
  tock::persistence::v1::TimerInfo timer;
  timer.set_timer_id(a.timer_id());
  timer.set_started_event_id(e.event_id());
  absl::Time fire = tx.now() + FromProtoDuration(a.start_to_fire_timeout());
  *timer.mutable_expiry_time() = ToProtoTime(fire);
  TimerTask task;
  task.set_kind(TimerTask::KIND_USER_TIMER);
  task.set_timer_id(a.timer_id());
  task.set_event_id(e.event_id());
  *timer.mutable_timer() = tx.AddTimer(fire, task);
  (*tx.state().mutable_timers())[a.timer_id()] = std::move(timer);
  return absl::OkStatus();
}

// CancelTimer: TimerCanceled, and the pending timer and its task go.
absl::Status CancelTimer(RunTransaction& tx, const Command& command, int64_t completed_id,
                         const std::string& identity) {
  const std::string& id = command.cancel_timer_command_attributes().timer_id();
  auto* timers = tx.state().mutable_timers();
  auto it = timers->find(id);
  if (it == timers->end()) {
    return absl::InvalidArgumentError(absl::StrCat("CancelTimer: no pending timer ", id));
  }
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_TIMER_CANCELED);
  auto* ev = e.mutable_timer_canceled_event_attributes();
  ev->set_timer_id(id);
  ev->set_started_event_id(it->second.started_event_id());
  ev->set_workflow_task_completed_event_id(completed_id);
  ev->set_identity(identity);
  tx.RetireTimer(it->second.timer());
  timers->erase(it);
  return absl::OkStatus();
}

// CompleteWorkflowExecution: WorkflowExecutionCompleted closes the run; `cron_run` (if any)
// is the cron schedule's next run, started in this same transaction.
void CompleteWorkflow(RunTransaction& tx, const temporal::api::common::v1::Payloads& result,
                      int64_t completed_id, std::unique_ptr<RunTransaction> cron_run) {
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
  auto* ev = e.mutable_workflow_execution_completed_event_attributes();
  *ev->mutable_result() = result;
  ev->set_workflow_task_completed_event_id(completed_id);
  if (cron_run) {
    ev->set_new_execution_run_id(cron_run->execution().run_id());
    tx.state().mutable_execution()->set_new_execution_run_id(cron_run->execution().run_id());
  }
  tx.Close(enums::WORKFLOW_EXECUTION_STATUS_COMPLETED);
  if (cron_run) tx.SetFollowingRun(std::move(cron_run));
}

// FailWorkflowExecution: WorkflowExecutionFailed closes the run; `next_run` (if any) is the
// retry or the cron schedule's next run.
void FailWorkflow(RunTransaction& tx, const temporal::api::failure::v1::Failure& failure,
                  enums::RetryState retry_state, int64_t completed_id,
                  std::unique_ptr<RunTransaction> next_run) {
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_FAILED);
  auto* ev = e.mutable_workflow_execution_failed_event_attributes();
  *ev->mutable_failure() = failure;
  ev->set_retry_state(retry_state);
  ev->set_workflow_task_completed_event_id(completed_id);
  if (next_run) {
    ev->set_new_execution_run_id(next_run->execution().run_id());
    tx.state().mutable_execution()->set_new_execution_run_id(next_run->execution().run_id());
  }
  tx.Close(enums::WORKFLOW_EXECUTION_STATUS_FAILED);
  if (next_run) tx.SetFollowingRun(std::move(next_run));
}

// CancelWorkflowExecution: WorkflowExecutionCanceled closes the run.
void CancelWorkflow(RunTransaction& tx, const Command& command, int64_t completed_id) {
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED);
  auto* ev = e.mutable_workflow_execution_canceled_event_attributes();
  *ev->mutable_details() = command.cancel_workflow_execution_command_attributes().details();
  ev->set_workflow_task_completed_event_id(completed_id);
  tx.Close(enums::WORKFLOW_EXECUTION_STATUS_CANCELED);
}

// RecordMarker: MarkerRecorded, nothing else.
void RecordMarker(RunTransaction& tx, const Command& command, int64_t completed_id) {
  const auto& a = command.record_marker_command_attributes();
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_MARKER_RECORDED);
  auto* ev = e.mutable_marker_recorded_event_attributes();
  ev->set_marker_name(a.marker_name());
  *ev->mutable_details() = a.details();
  *ev->mutable_header() = a.header();
  if (a.has_failure()) *ev->mutable_failure() = a.failure();
  ev->set_workflow_task_completed_event_id(completed_id);
}


// UpsertWorkflowSearchAttributes: the event, and the run's search attributes (visibility).
void UpsertSearchAttributes(RunTransaction& tx, const Command& command, int64_t completed_id) {
  const auto& attrs = command.upsert_workflow_search_attributes_command_attributes().search_attributes();
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES);
  auto* ev = e.mutable_upsert_workflow_search_attributes_event_attributes();
  *ev->mutable_search_attributes() = attrs;
  ev->set_workflow_task_completed_event_id(completed_id);
  auto* fields = tx.state().mutable_execution()->mutable_search_attributes()->mutable_indexed_fields();
  for (const auto& [k, v] : attrs.indexed_fields()) (*fields)[k] = v;
  tx.VisibilityChanged();
}

// ModifyWorkflowProperties: WorkflowPropertiesModified, and the run's memo (visibility).
void ModifyWorkflowProperties(RunTransaction& tx, const Command& command, int64_t completed_id) {
  const auto& memo = command.modify_workflow_properties_command_attributes().upserted_memo();
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED);
  auto* ev = e.mutable_workflow_properties_modified_event_attributes();
  *ev->mutable_upserted_memo() = memo;
  ev->set_workflow_task_completed_event_id(completed_id);
  auto* fields = tx.state().mutable_execution()->mutable_memo()->mutable_fields();
  for (const auto& [k, v] : memo.fields()) (*fields)[k] = v;
  tx.VisibilityChanged();
}

// ProtocolMessage: the message the command names, taken out of `messages` (which keeps the
// rest for after the commands).
absl::StatusOr<const temporal::api::protocol::v1::Message*> TakeProtocolMessage(
    const Command& command,
    std::map<std::string, const temporal::api::protocol::v1::Message*>& messages) {
  const std::string& id = command.protocol_message_command_attributes().message_id();
  auto it = messages.find(id);
  if (it == messages.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ProtocolMessageCommand referenced absent message ID ", id));
  }
  const temporal::api::protocol::v1::Message* message = it->second;
  messages.erase(it);
  return message;
}

}  // namespace

// A workflow task's completion: what its change needs besides the request, and what it
// leaves for after its commit.
struct HistoryEngine::WorkflowTaskCompletion {
  NamespaceRef ns;
  TaskToken token;
  UpdateEffects effects;
  std::optional<persistence::TaskQueueTask> next_speculative;
  wf::RespondWorkflowTaskCompletedResponse out;
};

Mutation HistoryEngine::CompleteWorkflowTask(const wf::RespondWorkflowTaskCompletedRequest& req,
                                             WorkflowTaskCompletion& c) {
  return [this, &req, &c](RunTransaction& tx) -> absl::Status {
    if (const SpeculativeTask* offered = tx.offered_speculative()) {
      if (offered->started.event_id() == 0 ||
          offered->info.scheduled_event_id() != c.token.scheduled_event_id() ||
          offered->info.attempt() != c.token.attempt()) {
        return absl::NotFoundError("Workflow task not found.");
      }
      if (OnlyRejectsUpdates(req)) {
        // Nothing to keep: the task is forgotten, and the worker told to forget it too.
        for (const auto& m : req.messages()) {
          if (absl::Status u = ApplyUpdateMessage(tx, m, c.effects); !u.ok()) return u;
        }
        const bool undelivered = FinishUpdateMessages(tx, offered->started.event_id(), false, c.effects);
        tx.DropSpeculative();
        if (undelivered) c.next_speculative = MakeSpeculative(c.ns, tx);
        c.out.set_reset_history_event_id(tx.state().last_completed_workflow_task_started_event_id());
        return NothingToWrite();
      }
      tx.MaterializeSpeculative();
    }
    if (absl::Status checked = CheckWorkflowToken(tx, c.token); !checked.ok()) return checked;
    auto* wft = tx.state().mutable_workflow_task();
    const int64_t scheduled = wft->scheduled_event_id();
    const int64_t started = wft->started_event_id();
    tx.RetireTimer(wft->timeout_timer());

    const bool closes = std::any_of(req.commands().begin(), req.commands().end(), ClosesWorkflow);
    if (closes && tx.HasBuffered()) {
      // New events arrived while the worker decided to close: it must see them first.
      HistoryEvent& failed = tx.Append(enums::EVENT_TYPE_WORKFLOW_TASK_FAILED);
      auto* attrs = failed.mutable_workflow_task_failed_event_attributes();
      attrs->set_scheduled_event_id(scheduled);
      attrs->set_started_event_id(started);
      attrs->set_cause(enums::WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND);
      attrs->set_identity(req.identity());
      tx.state().clear_workflow_task();
      tx.ClearSticky();  // a failed task goes to any worker, with the whole history
      tx.FlushBuffered();
      tx.ScheduleWorkflowTask();
      return CommitThenFail(absl::InvalidArgumentError("UnhandledCommand"));
    }

    if (std::optional<CommandLimitBreach> breach =
            CheckCommandLimits(tx.state(), req.commands(), limits_,
                               CommandsSetSearchAttributes(req.commands())
                                   ? *SchemaOf(tx.state().execution().namespace_id())
                                   : visibility::SearchAttributeSchema())) {
      const int32_t attempt = wft->attempt();
      HistoryEvent& failed = tx.Append(enums::EVENT_TYPE_WORKFLOW_TASK_FAILED);
      auto* attrs = failed.mutable_workflow_task_failed_event_attributes();
      attrs->set_scheduled_event_id(scheduled);
      attrs->set_started_event_id(started);
      attrs->set_cause(breach->cause);
      attrs->set_identity(req.identity());
      attrs->mutable_failure()->set_message(breach->message);
      attrs->mutable_failure()->mutable_server_failure_info();
      tx.state().clear_workflow_task();
      tx.ClearSticky();
      if (breach->terminate) {
        tx.Terminate(breach->message, {}, kHistoryServiceIdentity);
      } else {
        tx.FlushBuffered();
        tx.ScheduleWorkflowTask(attempt + 1);
      }
      return CommitThenFail(absl::InvalidArgumentError(breach->message));
    }

    HistoryEvent& completed = tx.Append(enums::EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    auto* attrs = completed.mutable_workflow_task_completed_event_attributes();
    attrs->set_scheduled_event_id(scheduled);
    attrs->set_started_event_id(started);
    attrs->set_identity(req.identity());
    // Replays depend on the SDK flags recorded here (reference/sdk_protocol.md P1).
    if (req.has_sdk_metadata()) *attrs->mutable_sdk_metadata() = req.sdk_metadata();
    if (req.has_metering_metadata()) *attrs->mutable_metering_metadata() = req.metering_metadata();
    // A versioned worker's behaviour for the run and its version (Worker Deployments), on
    // the event, in the run's versioning info and its search attributes.
    RecordWorkerVersion(tx, req, *attrs);
    tx.state().set_last_completed_workflow_task_started_event_id(started);
    tx.state().clear_workflow_task();
    if (absl::Status sticky = ApplyStickyAttributes(tx, req, limits_); !sticky.ok()) return sticky;

    bool needs_workflow_task = req.force_create_new_workflow_task();
    std::map<std::string, const temporal::api::protocol::v1::Message*> messages;
    for (const auto& m : req.messages()) messages.emplace(m.id(), &m);
    std::vector<int64_t> eager_activities;
    if (absl::Status applied = ApplyCommands(tx, c.ns, req, completed.event_id(),
                                             &needs_workflow_task, messages, c.effects,
                                             eager_activities);
        !applied.ok()) {
      return applied;
    }
    // Messages no command placed (rejections, mostly) follow the commands, in request order.
    for (const auto& m : req.messages()) {
      if (!messages.contains(m.id())) continue;
      if (absl::Status u = ApplyUpdateMessage(tx, m, c.effects); !u.ok()) return u;
    }
    needs_workflow_task |= FinishUpdateMessages(
        tx, started, req.force_create_new_workflow_task() && req.messages().empty(), c.effects);
    StartEagerActivities(tx, eager_activities, req.identity(), c.ns.name, c.out);
    if (tx.IsOpen()) {
      needs_workflow_task |= tx.HasBuffered();
      tx.FlushBuffered();
      if (needs_workflow_task) {
        tx.ScheduleWorkflowTask();
        if (req.return_new_workflow_task()) ReturnNewWorkflowTask(tx, started, req.identity(), c.out);
      }
    }
    return absl::OkStatus();
  };
}

absl::StatusOr<wf::RespondWorkflowTaskCompletedResponse> HistoryEngine::WorkflowTaskCompleted(
    WorkflowTaskCompletion& c, absl::Status committed) {
  if (!committed.ok()) return committed;
  PublishUpdateEffects(c.token.run_id(), c.effects);
  if (c.next_speculative) task_sink_(std::move(*c.next_speculative));
  if (c.out.activity_tasks_size() > 0) {
    metrics_->activity_eager_execution.Increment(c.out.activity_tasks_size());
  }
  return std::move(c.out);
}

namespace {

// A versioning behaviour needs a versioned worker to have one (Temporal's
// respondworkflowtaskcompleted/api.go; reference/api_2026.md §3.3.5).
absl::Status CheckVersioning(const wf::RespondWorkflowTaskCompletedRequest& req) {
  if (req.versioning_behavior() != enums::VERSIONING_BEHAVIOR_UNSPECIFIED &&
      req.deployment_options().worker_versioning_mode() != enums::WORKER_VERSIONING_MODE_VERSIONED) {
    return absl::InvalidArgumentError(
        "versioning behavior cannot be specified without deployment options being set with "
        "versioned mode");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<wf::RespondWorkflowTaskCompletedResponse> HistoryEngine::RespondWorkflowTaskCompleted(
    const NamespaceRef& ns, const wf::RespondWorkflowTaskCompletedRequest& req) {
  if (absl::Status s = CheckVersioning(req); !s.ok()) return s;
  absl::StatusOr<TaskToken> token = DecodeTaskTokenFor(req.task_token(), ns.id);
  if (!token.ok()) return token.status();
  WorkflowTaskCompletion c{.ns = ns, .token = std::move(*token)};
  const RunKey key{c.token.namespace_id(), c.token.workflow_id(), c.token.run_id()};
  absl::Status s = Mutate(ns, key, CompleteWorkflowTask(req, c), c.token.speculative());
  return WorkflowTaskCompleted(c, std::move(s));
}

void HistoryEngine::RespondWorkflowTaskCompletedAsync(
    const NamespaceRef& ns, const wf::RespondWorkflowTaskCompletedRequest& req,
    Answer<wf::RespondWorkflowTaskCompletedResponse> done) {
  if (absl::Status s = CheckVersioning(req); !s.ok()) return done(s);
  absl::StatusOr<TaskToken> token = DecodeTaskTokenFor(req.task_token(), ns.id);
  if (!token.ok()) return done(token.status());
  auto c = std::make_shared<WorkflowTaskCompletion>();
  c->ns = ns;
  c->token = std::move(*token);
  const RunKey key{c->token.namespace_id(), c->token.workflow_id(), c->token.run_id()};
  MutateAsync(ns, key, CompleteWorkflowTask(req, *c), c->token.speculative(),
              [this, c, done = std::move(done)](absl::Status s) {
                done(WorkflowTaskCompleted(*c, std::move(s)));
              });
}

void HistoryEngine::ReturnNewWorkflowTask(RunTransaction& tx, int64_t completed_started,
                                          const std::string& identity,
                                          wf::RespondWorkflowTaskCompletedResponse& out) {
  // Only to a worker that keeps the run cached (a sticky one): the task carries the events
  // after the task it completed, as a task from its sticky queue would.
  if (tx.state().execution().sticky_task_queue().empty() || !tx.WorkflowTaskPending() ||
      tx.WorkflowTaskStarted()) {
    return;
  }
  tx.UnqueueWorkflowTask();
  tx.StartWorkflowTask(identity, TargetVersionChanged(tx.execution()));
  std::vector<HistoryEvent> events;
  for (const HistoryEvent& e : tx.new_events()) {
    if (e.event_id() > completed_started) events.push_back(e);
  }
  const auto& wft = tx.state().workflow_task();
  wf::PollWorkflowTaskQueueResponse task = WorkflowTaskOf(tx.state(), std::move(events), false);
  for (auto& m : updates_.MessagesFor(tx.execution().run_id(), wft.started_event_id())) {
    *task.add_messages() = std::move(m);
  }
  *out.mutable_workflow_task() = std::move(task);
}

absl::Status HistoryEngine::ApplyCommands(RunTransaction& tx, const NamespaceRef& ns,
                                          const wf::RespondWorkflowTaskCompletedRequest& req,
                                          int64_t completed_id, bool* needs_workflow_task,
                                          std::map<std::string, const temporal::api::protocol::v1::Message*>& messages,
                                          UpdateEffects& effects,
                                          std::vector<int64_t>& eager_activities) {
  for (const Command& command : req.commands()) {
    if (!tx.IsOpen()) {
      return absl::InvalidArgumentError(
          "a command follows the command that closed the workflow; close commands must be last");
    }
    absl::Status applied = absl::OkStatus();
    switch (command.command_type()) {
      case enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK:
        applied = ScheduleActivity(tx, command, completed_id, eager_.activities.On(ns.name),
                                   eager_activities);
        break;
      case enums::COMMAND_TYPE_REQUEST_CANCEL_ACTIVITY_TASK:
        applied = RequestCancelActivity(tx, command, completed_id, req.identity(), needs_workflow_task);
        break;
      case enums::COMMAND_TYPE_START_TIMER:
        applied = StartTimer(tx, command, completed_id);
        break;
      case enums::COMMAND_TYPE_CANCEL_TIMER:
        applied = CancelTimer(tx, command, completed_id, req.identity());
        break;
      case enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION: {
        const auto& result = command.complete_workflow_execution_command_attributes().result();
        // A cron schedule goes on with its next run, started in this same transaction.
        absl::StatusOr<std::unique_ptr<RunTransaction>> cron = NextCronRun(tx, ns, &result, nullptr);
        if (!cron.ok()) return cron.status();
        CompleteWorkflow(tx, result, completed_id, std::move(*cron));
        break;
      }
      case enums::COMMAND_TYPE_FAIL_WORKFLOW_EXECUTION: {
        const auto& failure = command.fail_workflow_execution_command_attributes().failure();
        enums::RetryState retry_state = enums::RETRY_STATE_RETRY_POLICY_NOT_SET;
        absl::StatusOr<std::unique_ptr<RunTransaction>> next_or =
            NextRunAfterFailure(tx, ns, failure, &retry_state);
        if (!next_or.ok()) return next_or.status();
        FailWorkflow(tx, failure, retry_state, completed_id, std::move(*next_or));
        break;
      }
      case enums::COMMAND_TYPE_CANCEL_WORKFLOW_EXECUTION:
        CancelWorkflow(tx, command, completed_id);
        break;
      case enums::COMMAND_TYPE_RECORD_MARKER:
        RecordMarker(tx, command, completed_id);
        break;
      case enums::COMMAND_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
        UpsertSearchAttributes(tx, command, completed_id);
        break;
      case enums::COMMAND_TYPE_MODIFY_WORKFLOW_PROPERTIES:
        ModifyWorkflowProperties(tx, command, completed_id);
        break;
      case enums::COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION:
        ContinueAsNew(tx, ns, command, req.identity(), completed_id);
        break;
      case enums::COMMAND_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION:
      case enums::COMMAND_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION:
        applied = ApplyExternalCommand(tx, ns, command, completed_id);
        break;
      case enums::COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION:
        applied = ApplyStartChildCommand(tx, ns, command, completed_id);
        break;
      case enums::COMMAND_TYPE_PROTOCOL_MESSAGE: {
        absl::StatusOr<const temporal::api::protocol::v1::Message*> message =
            TakeProtocolMessage(command, messages);
        if (!message.ok()) return message.status();
        applied = ApplyUpdateMessage(tx, **message, effects);
        break;
      }
      default:
        return absl::UnimplementedError(absl::StrCat(
            "command ", enums::CommandType_Name(command.command_type()),
            " is not supported by this server yet"));
    }
    if (!applied.ok()) return applied;
  }
  return absl::OkStatus();
}

void HistoryEngine::ContinueAsNew(RunTransaction& tx, const NamespaceRef& ns, const Command& command,
                                  const std::string& identity, int64_t completed_id) {
  const auto& a = command.continue_as_new_workflow_execution_command_attributes();
  const auto& exec = tx.execution();
  // What the command leaves empty is inherited from this run.
  NewRun next;
  next.workflow_id = exec.workflow_id();
  next.workflow_type = a.workflow_type();
  if (next.workflow_type.name().empty()) next.workflow_type.set_name(exec.workflow_type());
  next.task_queue = a.task_queue().name().empty() ? exec.task_queue() : a.task_queue().name();
  next.input = a.input();
  next.execution_timeout = FromProtoDuration(exec.workflow_execution_timeout());
  next.run_timeout = FromProtoDuration(a.workflow_run_timeout()) > absl::ZeroDuration()
                         ? FromProtoDuration(a.workflow_run_timeout())
                         : FromProtoDuration(exec.workflow_run_timeout());
  next.task_timeout = FromProtoDuration(a.workflow_task_timeout()) > absl::ZeroDuration()
                          ? FromProtoDuration(a.workflow_task_timeout())
                          : FromProtoDuration(exec.default_workflow_task_timeout());
  next.identity = identity;
  next.header = a.header();
  next.memo = a.has_memo() ? a.memo() : exec.memo();
  next.search_attributes = a.has_search_attributes() ? a.search_attributes() : exec.search_attributes();
  if (a.has_retry_policy()) next.retry_policy = a.retry_policy();
  next.cron_schedule = a.cron_schedule();
  next.first_execution_run_id = exec.first_execution_run_id();
  next.continued_execution_run_id = exec.run_id();
  next.initiator = a.initiator() == enums::CONTINUE_AS_NEW_INITIATOR_UNSPECIFIED
                       ? enums::CONTINUE_AS_NEW_INITIATOR_WORKFLOW
                       : a.initiator();
  if (exec.has_parent()) next.parent = exec.parent();
  next.first_task_backoff = FromProtoDuration(a.backoff_start_interval());
  if (exec.has_workflow_execution_expiration_time()) {
    next.execution_expiration = FromProtoTime(exec.workflow_execution_expiration_time());
  }
  if (a.has_last_completion_result()) next.last_completion_result = a.last_completion_result();
  if (a.has_failure()) next.continued_failure = a.failure();
  const auto polls = VersionPollsIn(exec.namespace_id());
  next.versioning_override = InheritOverride(exec, next.task_queue, polls);
  next.inherited = InheritVersion(exec, nullptr, Successor::kContinueAsNew, next.task_queue, polls,
                                  a.initial_versioning_behavior());
  std::unique_ptr<RunTransaction> following = BuildNewRun(ns, next, tx.now());
  const std::string new_run_id = following->execution().run_id();

  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW);
  auto* ev = e.mutable_workflow_execution_continued_as_new_event_attributes();
  ev->set_new_execution_run_id(new_run_id);
  *ev->mutable_workflow_type() = next.workflow_type;
  ev->mutable_task_queue()->set_name(next.task_queue);
  ev->mutable_task_queue()->set_kind(enums::TASK_QUEUE_KIND_NORMAL);
  *ev->mutable_input() = a.input();
  *ev->mutable_workflow_run_timeout() = ToProtoDuration(next.run_timeout);
  *ev->mutable_workflow_task_timeout() = ToProtoDuration(next.task_timeout);
  ev->set_workflow_task_completed_event_id(completed_id);
  *ev->mutable_backoff_start_interval() = a.backoff_start_interval();
  ev->set_initiator(next.initiator);
  if (a.has_failure()) *ev->mutable_failure() = a.failure();
  if (a.has_last_completion_result()) *ev->mutable_last_completion_result() = a.last_completion_result();
  *ev->mutable_header() = a.header();
  *ev->mutable_memo() = next.memo;
  *ev->mutable_search_attributes() = next.search_attributes;
  ev->set_initial_versioning_behavior(a.initial_versioning_behavior());
  tx.state().mutable_execution()->set_new_execution_run_id(new_run_id);
  tx.Close(enums::WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW);
  tx.SetFollowingRun(std::move(following));
}

absl::Status HistoryEngine::RespondWorkflowTaskFailed(const NamespaceRef& ns,
                                                      const wf::RespondWorkflowTaskFailedRequest& req) {
  absl::StatusOr<TaskToken> token = DecodeTaskTokenFor(req.task_token(), ns.id);
  if (!token.ok()) return token.status();
  return Mutate(ns, {token->namespace_id(), token->workflow_id(), token->run_id()},
                [&](RunTransaction& tx) -> absl::Status {
    if (absl::Status c = CheckWorkflowToken(tx, *token); !c.ok()) return c;
    auto* wft = tx.state().mutable_workflow_task();
    tx.RetireTimer(wft->timeout_timer());
    HistoryEvent& failed = tx.Append(enums::EVENT_TYPE_WORKFLOW_TASK_FAILED);
    auto* attrs = failed.mutable_workflow_task_failed_event_attributes();
    attrs->set_scheduled_event_id(wft->scheduled_event_id());
    attrs->set_started_event_id(wft->started_event_id());
    attrs->set_cause(req.cause());
    if (req.has_failure()) *attrs->mutable_failure() = req.failure();
    attrs->set_identity(req.identity());
    const int32_t attempt = wft->attempt();
    tx.state().clear_workflow_task();
    tx.ClearSticky();  // as Temporal: the retry goes to any worker, with the whole history
    tx.FlushBuffered();
    tx.ScheduleWorkflowTask(attempt + 1);
    return absl::OkStatus();
  });
}

absl::StatusOr<HistoryEngine::NewRun> HistoryEngine::SuccessorOf(
    const tock::persistence::v1::ExecutionInfo& exec, Successor how) {
  absl::StatusOr<std::vector<HistoryEvent>> first = store_.ReadEvents(exec.run_id(), 1, 2, 1);
  if (!first.ok()) return first.status();
  if (first->empty()) return absl::InternalError("the start event is missing");
  const auto& start = first->front().workflow_execution_started_event_attributes();
  NewRun next;
  next.workflow_id = exec.workflow_id();
  next.workflow_type = start.workflow_type();
  next.task_queue = exec.task_queue();
  next.input = start.input();
  next.execution_timeout = FromProtoDuration(exec.workflow_execution_timeout());
  next.run_timeout = FromProtoDuration(exec.workflow_run_timeout());
  next.task_timeout = FromProtoDuration(exec.default_workflow_task_timeout());
  next.request_id = exec.start_request_id();
  next.identity = exec.identity();
  next.header = start.header();
  next.memo = exec.memo();
  next.search_attributes = exec.search_attributes();
  if (exec.has_retry_policy()) next.retry_policy = exec.retry_policy();
  next.cron_schedule = exec.cron_schedule();
  next.first_execution_run_id = exec.first_execution_run_id();
  next.continued_execution_run_id = exec.run_id();
  if (exec.has_parent()) next.parent = exec.parent();
  if (exec.has_workflow_execution_expiration_time()) {
    next.execution_expiration = FromProtoTime(exec.workflow_execution_expiration_time());
  }
  const auto polls = VersionPollsIn(exec.namespace_id());
  next.versioning_override = InheritOverride(exec, next.task_queue, polls);
  next.inherited = InheritVersion(exec, &start, how, next.task_queue, polls);
  return next;
}

std::function<bool(const std::string&, const std::string&)> HistoryEngine::VersionPollsIn(
    const std::string& namespace_id) const {
  if (!version_routing_.polls) return nullptr;
  return [this, namespace_id](const std::string& version, const std::string& task_queue) {
    return version_routing_.polls(namespace_id, version, task_queue);
  };
}

bool HistoryEngine::TargetVersionChanged(const tock::persistence::v1::ExecutionInfo& exec) const {
  if (!version_routing_.target) return false;
  const EffectiveVersion effective = EffectiveVersionOf(exec);
  if (!effective.pinned) return false;
  const std::string target =
      version_routing_.target(exec.namespace_id(), exec.task_queue(), exec.workflow_id());
  return !target.empty() && target != effective.version;
}

absl::StatusOr<std::unique_ptr<RunTransaction>> HistoryEngine::NextRunAfterFailure(
    RunTransaction& tx, const NamespaceRef& ns, const temporal::api::failure::v1::Failure& failure,
    enums::RetryState* retry_state) {
  const auto& exec = tx.execution();
  // A workflow with a retry policy gets a new run (attempt + 1) after the backoff.
  if (exec.has_retry_policy()) {
    tock::persistence::v1::ActivityInfo as_activity;  // the retry rules are the same
    *as_activity.mutable_retry_policy() = exec.retry_policy();
    as_activity.set_attempt(exec.attempt());
    absl::StatusOr<absl::Duration> backoff =
        NextActivityRetry(as_activity, failure, tx.now(), retry_state);
    if (backoff.ok() && exec.has_workflow_execution_expiration_time() &&
        tx.now() + *backoff >= FromProtoTime(exec.workflow_execution_expiration_time())) {
      *retry_state = enums::RETRY_STATE_TIMEOUT;  // the execution timeout ends the chain
      return nullptr;
    }
    if (backoff.ok()) {
      absl::StatusOr<NewRun> next = SuccessorOf(exec, Successor::kRetry);
      if (!next.ok()) return next.status();
      next->initiator = enums::CONTINUE_AS_NEW_INITIATOR_RETRY;
      next->attempt = exec.attempt() + 1;
      next->first_task_backoff = *backoff;
      return BuildNewRun(ns, *next, tx.now());
    }
  }
  // Without a retry, a cron schedule goes on with its next run.
  return NextCronRun(tx, ns, nullptr, &failure);
}

absl::StatusOr<std::unique_ptr<RunTransaction>> HistoryEngine::NextCronRun(
    RunTransaction& tx, const NamespaceRef& ns,
    const temporal::api::common::v1::Payloads* result,
    const temporal::api::failure::v1::Failure* failure) {
  const auto& exec = tx.execution();
  if (exec.cron_schedule().empty()) return nullptr;
  absl::StatusOr<CronSchedule> schedule = CronSchedule::Parse(exec.cron_schedule());
  if (!schedule.ok()) return nullptr;  // validated at start; nothing to schedule
  // From when this run was scheduled to run (its execution time), as Temporal does.
  const absl::Duration wait = CronBackoff(*schedule, FromProtoTime(exec.execution_time()), tx.now());
  if (wait == absl::InfiniteDuration()) return nullptr;
  if (exec.has_workflow_execution_expiration_time() &&
      tx.now() + wait >= FromProtoTime(exec.workflow_execution_expiration_time())) {
    return nullptr;  // the execution timeout ends the schedule
  }
  absl::StatusOr<NewRun> next = SuccessorOf(exec, Successor::kCron);
  if (!next.ok()) return next.status();
  next->initiator = enums::CONTINUE_AS_NEW_INITIATOR_CRON_SCHEDULE;
  next->attempt = 1;
  next->first_task_backoff = wait;
  if (result != nullptr) next->last_completion_result = *result;
  if (failure != nullptr) next->continued_failure = *failure;
  return BuildNewRun(ns, *next, tx.now());
}

}  // namespace tock::server::history
