// One change of one workflow run, built in memory and then committed in one transaction:
// the new mutable state, the events it appends, the tasks and timers it creates or retires,
// and the visibility record when the run's summary changed.
//
// Event ids are assigned when an event enters the history. While a workflow task is started,
// events that arrive from outside (signals, activity results, timer fires, cancel requests)
// are buffered and get their ids when that task completes, so that the worker sees
// WorkflowTaskStarted followed directly by the task's outcome (reference/sdk_protocol.md §3.1).
//
// Not thread-safe: used under the run's lock.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server-core/history/shard_controller.h"
#include "server-core/persistence/execution_store.h"

namespace tock::server::history {

using temporal::api::enums::v1::EventType;
using persistence::HistoryEvent;
using persistence::MutableStateRecord;

// A workflow task shown to a worker but not written: one that only carries updates, so that
// a rejection leaves no trace in the history (Temporal's speculative workflow task). It is
// written as shown (same ids, times, attributes) as soon as anything else changes the run or
// the worker's answer must stay; nothing is written after it meanwhile, so its ids hold.
struct SpeculativeTask {
  HistoryEvent scheduled;
  HistoryEvent started;  // event_id 0 until a worker took it
  tock::persistence::v1::WorkflowTaskInfo info;  // what the run's workflow_task then holds
  // The in-memory timer that writes it when it times out (0: none): start-to-close once
  // started; before that, on a sticky queue, schedule-to-start.
  uint64_t timeout = 0;
};

// Remembers `request_id` (a signal's, a cancellation's, a reapplied event's) among the last
// kRememberedRequestIds the run applied: true when it was there already (a retry, applied
// once). An empty id is never remembered.
constexpr int kRememberedRequestIds = 100;
bool SeenRequest(MutableStateRecord& state, const std::string& request_id);

class RunTransaction {
 public:
  // `namespace_version` stamps the new events; -1: the version of the run's last event.
  RunTransaction(MutableStateRecord state, absl::Time now, int64_t namespace_version,
                 ShardController& shards);

  MutableStateRecord& state() { return state_; }
  const tock::persistence::v1::ExecutionInfo& execution() const { return state_.execution(); }
  const MutableStateRecord& state() const { return state_; }
  absl::Time now() const { return now_; }
  int64_t version() const { return version_; }  // stamped on the events this change adds
  int32_t shard_id() const { return shard_id_; }
  bool is_new() const { return expected_db_version_ == 0; }

  bool IsOpen() const;
  bool WorkflowTaskStarted() const { return state_.workflow_task().started_event_id() != 0; }
  bool WorkflowTaskPending() const { return state_.workflow_task().scheduled_event_id() != 0; }

  // Appends an event to the history now.
  HistoryEvent& Append(EventType type);
  // Appends a copy of `event` (a reset copying its base run's history): its type, time,
  // version and attributes, with this run's next event id and a new task id.
  void AppendCopy(const HistoryEvent& event) { AddToHistory(event); }
  // Appends an event another cluster wrote (replicated_events.h) as it is: its id, task id,
  // time and version stay; never buffered. INVALID_ARGUMENT when its id is not the run's next
  // event id or its version is below the run's last (nothing is appended then).
  absl::Status AppendReplicated(const HistoryEvent& event);
  // Appends now, or buffers while a workflow task is started.
  HistoryEvent& AppendOrBuffer(EventType type);
  // Moves the buffered events into the history in arrival order; an ActivityTask result
  // that follows its ActivityTaskStarted gets that event's id as started_event_id.
  void FlushBuffered();
  bool HasBuffered() const { return state_.buffered_events_size() > 0; }

  // Appends WorkflowTaskScheduled and queues the task, unless the run is closed or a
  // workflow task is already scheduled or started. `attempt` 0 means 1. A run with a sticky
  // queue gets it there (in memory, with its durable schedule-to-start timer).
  void ScheduleWorkflowTask(int32_t attempt = 1);
  // Records the scheduled workflow task started by `identity` now: WorkflowTaskStarted, its
  // start-to-close timer, and a sticky task's schedule-to-start timer retired. Returns the
  // started event.
  // `target_changed`: the event's target_worker_deployment_version_changed.
  const HistoryEvent& StartWorkflowTask(const std::string& identity, bool target_changed = false);
  // Takes the scheduled workflow task's task back out of this change (an eager start hands
  // the task to the starter instead of a queue).
  void UnqueueWorkflowTask();
  // Sticky execution (ExecutionInfo.sticky_task_queue): the next workflow tasks go to the
  // worker's sticky queue with only the new events until a failure, a timeout or
  // ResetStickyTaskQueue clears it. A zero `schedule_to_start` is Temporal's default, 5 s.
  void SetSticky(const std::string& queue, absl::Duration schedule_to_start);
  void ClearSticky();
  // Queues an activity task for the activity scheduled at `scheduled_event_id`.
  void DispatchActivity(const tock::persistence::v1::ActivityInfo& activity);

  // The run's speculative task, offered to a change that decides about it (HistoryEngine::
  // Mutate); null when there is none or it was used.
  const SpeculativeTask* offered_speculative() const {
    return speculative_used_ ? nullptr : speculative_ ? &*speculative_ : nullptr;
  }
  void OfferSpeculative(SpeculativeTask task) { speculative_ = std::move(task); }
  // Writes the offered task into the history as it was shown: its scheduled event, the state
  // of a scheduled or started workflow task, its task (when not started; on a sticky queue in
  // memory, with its durable schedule-to-start timer from when it was scheduled) or its
  // timeout timer.
  void MaterializeSpeculative();
  // The offered task ends unwritten (a worker rejected all it carried).
  void DropSpeculative() { speculative_used_ = speculative_dropped_ = true; }
  bool speculative_dropped() const { return speculative_dropped_; }
  // Replaces the run's speculative task (kept when this change writes nothing).
  void KeepSpeculative(SpeculativeTask task) {
    speculative_used_ = true;
    kept_speculative_ = std::move(task);
  }
  bool speculative_used() const { return speculative_used_; }
  std::optional<SpeculativeTask>& kept_speculative() { return kept_speculative_; }

  // Follow-up work of the history service itself, durable with this change.
  void AddTransferTask(tock::persistence::v1::TransferTask task);

  // A durable timer; returns its key so a later change can retire it.
  tock::persistence::v1::TimerKey AddTimer(absl::Time when, tock::persistence::v1::TimerTask task);
  // Its row is deleted by this change; a timer this change made is not written at all.
  void RetireTimer(const tock::persistence::v1::TimerKey& key);
  // The task-queue task this change consumed (a poll that started it).
  // 0: an unstored task (a sticky workflow task), nothing to delete.
  void ConsumeTask(int64_t task_id) {
    if (task_id != 0) done_task_ids_.push_back(task_id);
  }

  // Sets the closing status and time, retires every timer of the run, and marks
  // visibility for update.
  void Close(temporal::api::enums::v1::WorkflowExecutionStatus status);
  // Ends an open run as TERMINATED: a started workflow task's failure (FORCE_CLOSE_COMMAND)
  // first, then the buffered events, then WorkflowExecutionTerminated.
  void Terminate(const std::string& reason, const temporal::api::common::v1::Payloads& details,
                 const std::string& identity);
  void VisibilityChanged() { visibility_changed_ = true; }

  // A run that starts in the same commit and takes over the workflow id (continue-as-new).
  // `replaces`: the workflow's current run the new one takes over from (empty: this run; a
  // reset of an older run replaces the current one).
  void SetFollowingRun(std::unique_ptr<RunTransaction> next, std::string replaces = "") {
    following_ = std::move(next);
    following_replaces_ = std::move(replaces);
  }
  const std::string& following_replaces() const { return following_replaces_; }
  RunTransaction* following_run() { return following_.get(); }
  // Another existing run of the same workflow id that this change writes too, in the same
  // commit (a reset of an older run records the new run in that base run while the current
  // run, this one, is terminated). Its write is checked against the db_version it was read
  // with, so a concurrent change of it aborts the whole commit. It must not be open: the
  // post-commit effects (cache, speculative task, updates, waiters) are only this run's.
  // Its cached state is dropped after the commit, not replaced: its lock is not held across
  // the commit, so a later change of it may already be cached; the store has the truth.
  void SetCompanionRun(std::unique_ptr<RunTransaction> companion) {
    companion_ = std::move(companion);
  }
  RunTransaction* companion_run() { return companion_.get(); }

  // What to write, and what to do after the write succeeded. Moves the state out: call last.
  persistence::RunWrite TakeRunWrite(persistence::CurrentRunChange change,
                                     const std::string& expected_current_run_id = "");
  std::vector<persistence::TaskQueueTask>& new_tasks() { return new_tasks_; }
  // Tasks handed to matching after the commit, never stored (sticky workflow tasks).
  std::vector<persistence::TaskQueueTask>& memory_tasks() { return memory_tasks_; }
  std::vector<persistence::TimerTaskRow>& new_timers() { return new_timers_; }
  std::vector<persistence::TimerTaskRow>& done_timers() { return done_timers_; }
  std::vector<int64_t>& done_task_ids() { return done_task_ids_; }
  const std::vector<HistoryEvent>& new_events() const { return events_; }

 private:
  HistoryEvent NewEvent(EventType type) const;
  void AddToHistory(HistoryEvent event);
  // An event with its id and task id set enters the history: next event id, version
  // history, last event task id, history size.
  void RecordInHistory(HistoryEvent event);

  MutableStateRecord state_;
  const int64_t expected_db_version_;
  const absl::Time now_;
  const int64_t version_;
  ShardController& shards_;
  const int32_t shard_id_;
  std::vector<HistoryEvent> events_;
  std::vector<persistence::TaskQueueTask> new_tasks_;
  std::vector<persistence::TaskQueueTask> memory_tasks_;
  std::vector<persistence::TimerTaskRow> new_timers_;
  // Queues the scheduled workflow task (state's workflow_task): on the normal queue, stored
  // with this change; on a sticky queue in memory only, with a durable schedule-to-start
  // timer counted from `scheduled`.
  void QueueWorkflowTask(absl::Time scheduled);
  // A workflow or activity task of a run on a Worker Deployment version carries the run's
  // effective version and whether it is pinned (history/versioning.h): matching routes by it.
  void SetTaskVersion(tock::persistence::v1::TransferTask& task) const;
  // A durable timeout of the workflow task (its scheduled event and attempt), due at `when`.
  tock::persistence::v1::TimerKey WorkflowTaskTimer(temporal::api::enums::v1::TimeoutType type,
                                                    absl::Time when);
  std::vector<persistence::TimerTaskRow> done_timers_;
  std::vector<int64_t> done_task_ids_;
  bool visibility_changed_ = false;
  std::unique_ptr<RunTransaction> following_;
  std::string following_replaces_;
  std::unique_ptr<RunTransaction> companion_;
  std::optional<SpeculativeTask> speculative_;
  bool speculative_used_ = false;
  bool speculative_dropped_ = false;
  std::optional<SpeculativeTask> kept_speculative_;
};

// The scheduled event id an activity's started or closing event refers to (0 for other
// events).
int64_t ActivityScheduledId(const HistoryEvent& e);

// The summary ListWorkflowExecutions and DescribeWorkflowExecution show.
temporal::api::workflow::v1::WorkflowExecutionInfo ExecutionSummary(const MutableStateRecord& s);

}  // namespace tock::server::history
