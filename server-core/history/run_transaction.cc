#include "server-core/history/versioning.h"
#include "server-core/history/run_transaction.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"

#include "lib/common/ids.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using tock::persistence::v1::TimerKey;
using tock::persistence::v1::TimerTask;
using tock::persistence::v1::TransferTask;


// A child's outcome event that was buffered before its ChildWorkflowExecutionStarted got an
// id refers to that event once the id is known.
void FixChildStartedId(HistoryEvent& e, const MutableStateRecord& state) {
  auto fix = [&](auto* attrs) {
    if (attrs->started_event_id() != 0) return;
    auto it = state.children().find(attrs->initiated_event_id());
    if (it != state.children().end()) attrs->set_started_event_id(it->second.started_event_id());
  };
  switch (e.event_type()) {
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
      return fix(e.mutable_child_workflow_execution_completed_event_attributes());
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED:
      return fix(e.mutable_child_workflow_execution_failed_event_attributes());
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED:
      return fix(e.mutable_child_workflow_execution_canceled_event_attributes());
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT:
      return fix(e.mutable_child_workflow_execution_timed_out_event_attributes());
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED:
      return fix(e.mutable_child_workflow_execution_terminated_event_attributes());
    default:
      return;
  }
}

void SetActivityStartedId(HistoryEvent& e, int64_t started_id) {
  switch (e.event_type()) {
    case enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
      e.mutable_activity_task_completed_event_attributes()->set_started_event_id(started_id);
      break;
    case enums::EVENT_TYPE_ACTIVITY_TASK_FAILED:
      e.mutable_activity_task_failed_event_attributes()->set_started_event_id(started_id);
      break;
    case enums::EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
      e.mutable_activity_task_timed_out_event_attributes()->set_started_event_id(started_id);
      break;
    case enums::EVENT_TYPE_ACTIVITY_TASK_CANCELED:
      e.mutable_activity_task_canceled_event_attributes()->set_started_event_id(started_id);
      break;
    default:
      break;
  }
}

// The version of the run's last event: what internal changes (timers) stamp new events with
// when the namespace's version is not at hand.
int64_t LastVersion(const MutableStateRecord& state) {
  const auto& histories = state.version_histories();
  if (histories.histories_size() == 0) return 0;
  const auto& items = histories.histories(histories.current_version_history_index()).items();
  return items.empty() ? 0 : items.at(items.size() - 1).version();
}

}  // namespace

bool SeenRequest(MutableStateRecord& state, const std::string& request_id) {
  if (request_id.empty()) return false;
  auto* ids = state.mutable_execution()->mutable_applied_request_ids();
  if (std::find(ids->begin(), ids->end(), request_id) != ids->end()) return true;
  ids->Add()->assign(request_id);
  if (ids->size() > kRememberedRequestIds) ids->DeleteSubrange(0, ids->size() - kRememberedRequestIds);
  return false;
}

int64_t ActivityScheduledId(const HistoryEvent& e) {
  switch (e.event_type()) {
    case enums::EVENT_TYPE_ACTIVITY_TASK_STARTED:
      return e.activity_task_started_event_attributes().scheduled_event_id();
    case enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
      return e.activity_task_completed_event_attributes().scheduled_event_id();
    case enums::EVENT_TYPE_ACTIVITY_TASK_FAILED:
      return e.activity_task_failed_event_attributes().scheduled_event_id();
    case enums::EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
      return e.activity_task_timed_out_event_attributes().scheduled_event_id();
    case enums::EVENT_TYPE_ACTIVITY_TASK_CANCELED:
      return e.activity_task_canceled_event_attributes().scheduled_event_id();
    default:
      return 0;
  }
}

RunTransaction::RunTransaction(MutableStateRecord state, absl::Time now, int64_t namespace_version,
                               ShardController& shards)
    : state_(std::move(state)),
      expected_db_version_(state_.db_version()),
      now_(now),
      version_(namespace_version >= 0 ? namespace_version : LastVersion(state_)),
      shards_(shards),
      shard_id_(shards.ShardFor(state_.execution().namespace_id(),
                                state_.execution().workflow_id())) {
  if (state_.next_event_id() == 0) state_.set_next_event_id(1);
}

bool RunTransaction::IsOpen() const {
  return state_.execution().status() == enums::WORKFLOW_EXECUTION_STATUS_RUNNING;
}

HistoryEvent RunTransaction::NewEvent(EventType type) const {
  HistoryEvent e;
  e.set_event_type(type);
  *e.mutable_event_time() = ToProtoTime(now_);
  e.set_version(version_);
  return e;
}

void RunTransaction::AddToHistory(HistoryEvent event) {
  event.set_event_id(state_.next_event_id());
  event.set_task_id(shards_.NextTaskId(shard_id_));
  RecordInHistory(std::move(event));
}

absl::Status RunTransaction::AppendReplicated(const HistoryEvent& event) {
  if (event.event_id() != state_.next_event_id()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "event ID mismatch: the run's next event is ", state_.next_event_id(),
        ", the replicated event ", enums::EventType_Name(event.event_type()), " has id ",
        event.event_id()));
  }
  const auto& histories = state_.version_histories();
  if (histories.histories_size() > 0 &&
      !histories.histories(histories.current_version_history_index()).items().empty() &&
      event.version() < LastVersion(state_)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "event version mismatch: the replicated event ", event.event_id(), " (",
        enums::EventType_Name(event.event_type()), ") has version ", event.version(),
        ", below the run's last version ", LastVersion(state_)));
  }
  RecordInHistory(event);
  return absl::OkStatus();
}

void RunTransaction::RecordInHistory(HistoryEvent event) {
  state_.set_next_event_id(event.event_id() + 1);
  state_.set_last_event_task_id(event.task_id());
  // Version history: one item per run of equal versions (SPEC §2.3).
  auto* histories = state_.mutable_version_histories();
  if (histories->histories_size() == 0) histories->add_histories();
  auto* items = histories->mutable_histories(histories->current_version_history_index())
                    ->mutable_items();
  if (!items->empty() && items->at(items->size() - 1).version() == event.version()) {
    items->Mutable(items->size() - 1)->set_event_id(event.event_id());
  } else {
    auto* item = items->Add();
    item->set_event_id(event.event_id());
    item->set_version(event.version());
  }
  state_.mutable_execution()->set_history_size_bytes(state_.execution().history_size_bytes() +
                                                     event.ByteSizeLong());
  events_.push_back(std::move(event));
}

HistoryEvent& RunTransaction::Append(EventType type) {
  AddToHistory(NewEvent(type));
  return events_.back();
}

HistoryEvent& RunTransaction::AppendOrBuffer(EventType type) {
  if (!WorkflowTaskStarted()) return Append(type);
  HistoryEvent* buffered = state_.add_buffered_events();
  *buffered = NewEvent(type);
  return *buffered;
}

void RunTransaction::FlushBuffered() {
  std::map<int64_t, int64_t> started_ids;  // activity scheduled id -> ActivityTaskStarted id
  auto buffered = std::move(*state_.mutable_buffered_events());
  state_.clear_buffered_events();
  for (HistoryEvent& event : buffered) {
    if (event.event_type() == enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED) {
      AddToHistory(std::move(event));
      const HistoryEvent& added = events_.back();
      int64_t initiated = added.child_workflow_execution_started_event_attributes().initiated_event_id();
      auto it = state_.mutable_children()->find(initiated);
      if (it != state_.mutable_children()->end()) it->second.set_started_event_id(added.event_id());
      continue;
    }
    FixChildStartedId(event, state_);
    int64_t scheduled = ActivityScheduledId(event);
    if (scheduled != 0 && event.event_type() != enums::EVENT_TYPE_ACTIVITY_TASK_STARTED) {
      auto it = started_ids.find(scheduled);
      if (it != started_ids.end()) SetActivityStartedId(event, it->second);
    }
    bool is_started = event.event_type() == enums::EVENT_TYPE_ACTIVITY_TASK_STARTED;
    AddToHistory(std::move(event));
    if (is_started) started_ids[scheduled] = events_.back().event_id();
  }
  for (auto it = state_.mutable_children()->begin(); it != state_.mutable_children()->end();) {
    it = it->second.closed() ? state_.mutable_children()->erase(it) : std::next(it);
  }
}

void RunTransaction::MaterializeSpeculative() {
  if (speculative_used_ || !speculative_) return;
  speculative_used_ = true;
  const SpeculativeTask& task = *speculative_;
  AddToHistory(task.scheduled);
  *state_.mutable_workflow_task() = task.info;
  auto* wft = state_.mutable_workflow_task();
  if (task.started.event_id() == 0) {
    wft->set_started_event_id(0);
    QueueWorkflowTask(FromProtoTime(wft->scheduled_time()));
    return;
  }
  AddToHistory(task.started);
  *wft->mutable_timeout_timer() = WorkflowTaskTimer(
      enums::TIMEOUT_TYPE_START_TO_CLOSE,
      FromProtoTime(wft->started_time()) + FromProtoDuration(wft->start_to_close_timeout()));
}

void RunTransaction::ScheduleWorkflowTask(int32_t attempt) {
  if (!IsOpen() || WorkflowTaskPending()) return;
  auto* wft = state_.mutable_workflow_task();
  const auto& exec = state_.execution();
  const bool sticky = !exec.sticky_task_queue().empty();
  const std::string& queue = sticky ? exec.sticky_task_queue() : exec.task_queue();
  HistoryEvent& e = Append(enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
  auto* attrs = e.mutable_workflow_task_scheduled_event_attributes();
  attrs->mutable_task_queue()->set_name(queue);
  if (sticky) {
    attrs->mutable_task_queue()->set_kind(enums::TASK_QUEUE_KIND_STICKY);
    attrs->mutable_task_queue()->set_normal_name(exec.task_queue());
  } else {
    attrs->mutable_task_queue()->set_kind(enums::TASK_QUEUE_KIND_NORMAL);
  }
  *attrs->mutable_start_to_close_timeout() = exec.default_workflow_task_timeout();
  attrs->set_attempt(attempt < 1 ? 1 : attempt);
  wft->Clear();
  wft->set_scheduled_event_id(e.event_id());
  wft->set_attempt(attrs->attempt());
  *wft->mutable_scheduled_time() = ToProtoTime(now_);
  *wft->mutable_start_to_close_timeout() = exec.default_workflow_task_timeout();
  wft->set_task_queue(queue);
  wft->set_sticky(sticky);
  QueueWorkflowTask(now_);
}

void RunTransaction::QueueWorkflowTask(absl::Time scheduled) {
  auto* wft = state_.mutable_workflow_task();
  const auto& exec = state_.execution();
  persistence::TaskQueueTask task;
  task.namespace_id = exec.namespace_id();
  task.task_queue = wft->task_queue();
  task.kind = persistence::TaskKind::kWorkflow;
  task.task.set_kind(TransferTask::KIND_WORKFLOW_TASK);
  task.task.set_namespace_id(exec.namespace_id());
  task.task.set_workflow_id(exec.workflow_id());
  task.task.set_run_id(exec.run_id());
  task.task.set_task_queue(exec.task_queue());
  task.task.set_scheduled_event_id(wft->scheduled_event_id());
  task.task.set_attempt(wft->attempt());
  SetTaskVersion(task.task);
  if (!wft->sticky()) {
    new_tasks_.push_back(std::move(task));
    return;
  }
  // On the sticky queue the task lives in memory only: if no worker takes it within the
  // schedule-to-start timeout (the worker is gone, or the server restarted), this timer
  // moves the workflow task to the normal queue with the whole history.
  task.task.set_sticky(true);
  memory_tasks_.push_back(std::move(task));
  *wft->mutable_schedule_to_start_timer() =
      WorkflowTaskTimer(enums::TIMEOUT_TYPE_SCHEDULE_TO_START,
                        scheduled + FromProtoDuration(exec.sticky_schedule_to_start_timeout()));
}

tock::persistence::v1::TimerKey RunTransaction::WorkflowTaskTimer(enums::TimeoutType type,
                                                                  absl::Time when) {
  const auto& wft = state_.workflow_task();
  tock::persistence::v1::TimerTask timeout;
  timeout.set_kind(tock::persistence::v1::TimerTask::KIND_WORKFLOW_TASK_TIMEOUT);
  timeout.set_event_id(wft.scheduled_event_id());
  timeout.set_attempt(wft.attempt());
  timeout.set_timeout_type(type);
  return AddTimer(when, timeout);
}

const HistoryEvent& RunTransaction::StartWorkflowTask(const std::string& identity,
                                                      bool target_changed) {
  auto* w = state_.mutable_workflow_task();
  RetireTimer(w->schedule_to_start_timer());
  HistoryEvent& started = Append(enums::EVENT_TYPE_WORKFLOW_TASK_STARTED);
  auto* attrs = started.mutable_workflow_task_started_event_attributes();
  attrs->set_scheduled_event_id(w->scheduled_event_id());
  attrs->set_identity(identity);
  attrs->set_request_id(NewUuid());
  attrs->set_history_size_bytes(state_.execution().history_size_bytes());
  if (target_changed) attrs->set_target_worker_deployment_version_changed(true);
  w->set_started_event_id(started.event_id());
  *w->mutable_started_time() = ToProtoTime(now_);
  w->set_identity(identity);
  w->set_request_id(attrs->request_id());
  *w->mutable_timeout_timer() = WorkflowTaskTimer(
      enums::TIMEOUT_TYPE_START_TO_CLOSE, now_ + FromProtoDuration(w->start_to_close_timeout()));
  return started;
}

void RunTransaction::UnqueueWorkflowTask() {
  const int64_t scheduled = state_.workflow_task().scheduled_event_id();
  auto is_it = [&](const persistence::TaskQueueTask& t) {
    return t.kind == persistence::TaskKind::kWorkflow && t.task.scheduled_event_id() == scheduled;
  };
  std::erase_if(new_tasks_, is_it);
  std::erase_if(memory_tasks_, is_it);
}

void RunTransaction::SetSticky(const std::string& queue, absl::Duration schedule_to_start) {
  auto* exec = state_.mutable_execution();
  exec->set_sticky_task_queue(queue);
  *exec->mutable_sticky_schedule_to_start_timeout() = ToProtoDuration(
      schedule_to_start > absl::ZeroDuration() ? schedule_to_start : absl::Seconds(5));
}

void RunTransaction::ClearSticky() {
  state_.mutable_execution()->clear_sticky_task_queue();
  state_.mutable_execution()->clear_sticky_schedule_to_start_timeout();
}

void RunTransaction::DispatchActivity(const tock::persistence::v1::ActivityInfo& activity) {
  const auto& exec = state_.execution();
  persistence::TaskQueueTask task;
  task.namespace_id = exec.namespace_id();
  task.task_queue = activity.task_queue();
  task.kind = persistence::TaskKind::kActivity;
  task.task.set_kind(TransferTask::KIND_ACTIVITY_TASK);
  task.task.set_namespace_id(exec.namespace_id());
  task.task.set_workflow_id(exec.workflow_id());
  task.task.set_run_id(exec.run_id());
  task.task.set_task_queue(activity.task_queue());
  task.task.set_scheduled_event_id(activity.scheduled_event_id());
  task.task.set_attempt(activity.attempt());
  task.task.set_stamp(activity.stamp());
  SetTaskVersion(task.task);
  new_tasks_.push_back(std::move(task));
}

void RunTransaction::SetTaskVersion(TransferTask& task) const {
  EffectiveVersion effective = EffectiveVersionOf(state_.execution());
  if (effective.version.empty()) return;
  task.set_deployment_version(std::move(effective.version));
  task.set_pinned(effective.pinned);
}

void RunTransaction::AddTransferTask(TransferTask task) {
  const auto& exec = state_.execution();
  task.set_namespace_id(exec.namespace_id());
  task.set_workflow_id(exec.workflow_id());
  task.set_run_id(exec.run_id());
  persistence::TaskQueueTask t;
  t.namespace_id = exec.namespace_id();
  t.kind = persistence::TaskKind::kTransfer;
  t.task = std::move(task);
  new_tasks_.push_back(std::move(t));
}

TimerKey RunTransaction::AddTimer(absl::Time when, TimerTask task) {
  const auto& exec = state_.execution();
  task.set_namespace_id(exec.namespace_id());
  task.set_workflow_id(exec.workflow_id());
  task.set_run_id(exec.run_id());
  persistence::TimerTaskRow row;
  row.shard_id = shard_id_;
  // Stored in whole milliseconds, rounded up: a timer never fires before `when` (rounding
  // down made timers fire up to a millisecond before their started event's time plus their
  // duration).
  int64_t fire_ms = absl::ToUnixMillis(when);
  if (absl::FromUnixMillis(fire_ms) < when) ++fire_ms;
  row.fire_time = absl::FromUnixMillis(fire_ms);
  row.task_id = shards_.NextTaskId(shard_id_);
  row.task = std::move(task);
  TimerKey key;
  key.set_fire_time_ms(absl::ToUnixMillis(row.fire_time));
  key.set_task_id(row.task_id);
  new_timers_.push_back(std::move(row));
  return key;
}

void RunTransaction::RetireTimer(const TimerKey& key) {
  if (key.task_id() == 0) return;
  // A timer made by this change (a sticky task's schedule-to-start timer when the task is
  // started in the same commit) is simply not written.
  if (std::erase_if(new_timers_, [&](const persistence::TimerTaskRow& t) {
        return t.task_id == key.task_id();
      }) > 0) {
    return;
  }
  persistence::TimerTaskRow row;
  row.shard_id = shard_id_;
  row.fire_time = absl::FromUnixMillis(key.fire_time_ms());
  row.task_id = key.task_id();
  done_timers_.push_back(std::move(row));
}

void RunTransaction::Terminate(const std::string& reason,
                               const temporal::api::common::v1::Payloads& details,
                               const std::string& identity) {
  if (WorkflowTaskStarted()) {
    // WorkflowTaskStarted may only be followed by the task's outcome (sdk_protocol §3.1).
    const auto& wft = state_.workflow_task();
    HistoryEvent& failed = Append(enums::EVENT_TYPE_WORKFLOW_TASK_FAILED);
    auto* attrs = failed.mutable_workflow_task_failed_event_attributes();
    attrs->set_scheduled_event_id(wft.scheduled_event_id());
    attrs->set_started_event_id(wft.started_event_id());
    attrs->set_cause(enums::WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND);
    attrs->set_identity(identity);
    state_.clear_workflow_task();
  }
  FlushBuffered();
  HistoryEvent& e = Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED);
  auto* attrs = e.mutable_workflow_execution_terminated_event_attributes();
  attrs->set_reason(reason);
  *attrs->mutable_details() = details;
  attrs->set_identity(identity);
  Close(enums::WORKFLOW_EXECUTION_STATUS_TERMINATED);
}

void RunTransaction::Close(enums::WorkflowExecutionStatus status) {
  auto* exec = state_.mutable_execution();
  exec->set_status(status);
  *exec->mutable_close_time() = ToProtoTime(now_);
  RetireTimer(state_.workflow_task().timeout_timer());
  state_.clear_workflow_task();
  for (const auto& [id, timer] : state_.timers()) RetireTimer(timer.timer());
  for (const auto& [id, activity] : state_.activities()) {
    for (const auto& key : activity.timers()) RetireTimer(key);
  }
  state_.clear_timers();
  state_.clear_activities();
  state_.clear_buffered_events();
  visibility_changed_ = true;
  // Tell the parent (unless the run goes on as a new run: continue-as-new, retry) and apply the parent-close policy
  // to children still running.
  const bool notify_parent = exec->has_parent() && exec->new_execution_run_id().empty();
  if (notify_parent || !state_.children().empty()) {
    TransferTask task;
    task.set_kind(TransferTask::KIND_CLOSE_EXECUTION);
    AddTransferTask(std::move(task));
  }
}

persistence::RunWrite RunTransaction::TakeRunWrite(persistence::CurrentRunChange change,
                                                   const std::string& expected_current_run_id) {
  persistence::RunWrite write;
  state_.set_db_version(expected_db_version_ + 1);
  write.expected_db_version = expected_db_version_;
  write.events = events_;
  write.current_run_change = change;
  write.expected_current_run_id = expected_current_run_id;
  if (visibility_changed_ || is_new()) {
    const auto& exec = state_.execution();
    persistence::VisibilityRecord v;
    v.namespace_id = exec.namespace_id();
    v.workflow_id = exec.workflow_id();
    v.run_id = exec.run_id();
    v.workflow_type = exec.workflow_type();
    v.task_queue = exec.task_queue();
    v.status = exec.status();
    v.start_time = FromProtoTime(exec.start_time());
    v.execution_time = FromProtoTime(exec.execution_time());
    if (exec.has_close_time()) v.close_time = FromProtoTime(exec.close_time());
    v.history_length = state_.next_event_id() - 1;
    v.info = ExecutionSummary(state_).SerializeAsString();
    write.visibility = std::move(v);
  }
  write.state = std::move(state_);  // the transaction is spent: no copy of the state
  return write;
}

temporal::api::workflow::v1::WorkflowExecutionInfo ExecutionSummary(const MutableStateRecord& s) {
  const auto& exec = s.execution();
  temporal::api::workflow::v1::WorkflowExecutionInfo info;
  info.mutable_execution()->set_workflow_id(exec.workflow_id());
  info.mutable_execution()->set_run_id(exec.run_id());
  info.mutable_type()->set_name(exec.workflow_type());
  *info.mutable_start_time() = exec.start_time();
  if (exec.has_close_time()) {
    *info.mutable_close_time() = exec.close_time();
    *info.mutable_execution_duration() =
        ToProtoDuration(FromProtoTime(exec.close_time()) - FromProtoTime(exec.execution_time()));
  }
  info.set_status(exec.status());
  info.set_history_length(s.next_event_id() - 1);
  *info.mutable_execution_time() = exec.execution_time();
  *info.mutable_memo() = exec.memo();
  *info.mutable_search_attributes() = exec.search_attributes();
  info.set_task_queue(exec.task_queue());
  info.set_history_size_bytes(exec.history_size_bytes());
  info.set_first_run_id(exec.first_execution_run_id());
  if (exec.has_versioning_info()) *info.mutable_versioning_info() = exec.versioning_info();
  if (exec.has_parent()) {
    info.set_parent_namespace_id(exec.parent().namespace_id());
    info.mutable_parent_execution()->set_workflow_id(exec.parent().workflow_id());
    info.mutable_parent_execution()->set_run_id(exec.parent().run_id());
  }
  return info;
}

}  // namespace tock::server::history
