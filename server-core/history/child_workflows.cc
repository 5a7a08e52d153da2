// Child workflows (reference/sdk_protocol.md §3.3-E): the StartChildWorkflowExecution
// command, then the transfer tasks that start the child and, when it closes, record its
// outcome in the parent; and parent-close policies for children still running.
//
// Each step is its own transaction and the task that drives it is durable, so a crash at
// any point is picked up again at start: the child is started with a request id derived
// from (parent run, initiated event), which makes a repeated start find the same run.
#include "absl/strings/str_cat.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "server-core/history/history_engine.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using tock::persistence::v1::ChildExecutionInfo;
using tock::persistence::v1::TransferTask;


std::string ChildRequestId(const std::string& parent_run_id, int64_t initiated_event_id) {
  return absl::StrCat("child:", parent_run_id, ":", initiated_event_id);
}

}  // namespace

absl::Status HistoryEngine::ApplyStartChildCommand(RunTransaction& tx, const NamespaceRef& ns,
                                                   const temporal::api::command::v1::Command& command,
                                                   int64_t completed_id) {
  const auto& a = command.start_child_workflow_execution_command_attributes();
  if (a.workflow_id().empty() || a.workflow_type().name().empty()) {
    return absl::InvalidArgumentError("StartChildWorkflowExecution needs a workflow id and type");
  }
  if (!a.namespace_().empty() && a.namespace_() != ns.name) {
    return absl::UnimplementedError(
        "child workflows in another namespace are not supported by this server yet");
  }
  if (a.has_versioning_override()) {
    if (absl::Status s = CheckVersioningOverride(a.versioning_override()); !s.ok()) return s;
  }
  HistoryEvent& e = tx.Append(enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED);
  auto* ev = e.mutable_start_child_workflow_execution_initiated_event_attributes();
  ev->set_namespace_(ns.name);
  ev->set_namespace_id(ns.id);
  ev->set_workflow_id(a.workflow_id());
  *ev->mutable_workflow_type() = a.workflow_type();
  ev->mutable_task_queue()->set_name(a.task_queue().name().empty() ? tx.execution().task_queue()
                                                                   : a.task_queue().name());
  ev->mutable_task_queue()->set_kind(enums::TASK_QUEUE_KIND_NORMAL);
  *ev->mutable_input() = a.input();
  *ev->mutable_workflow_execution_timeout() = a.workflow_execution_timeout();
  *ev->mutable_workflow_run_timeout() = a.workflow_run_timeout();
  *ev->mutable_workflow_task_timeout() = a.workflow_task_timeout();
  ev->set_parent_close_policy(a.parent_close_policy());
  ev->set_workflow_task_completed_event_id(completed_id);
  ev->set_workflow_id_reuse_policy(a.workflow_id_reuse_policy());
  if (a.has_retry_policy()) *ev->mutable_retry_policy() = a.retry_policy();
  ev->set_cron_schedule(a.cron_schedule());
  *ev->mutable_header() = a.header();
  *ev->mutable_memo() = a.memo();
  *ev->mutable_search_attributes() = a.search_attributes();
  if (a.has_versioning_override()) *ev->mutable_versioning_override() = a.versioning_override();

  ChildExecutionInfo child;
  child.set_initiated_event_id(e.event_id());
  child.set_namespace_(ns.name);
  child.set_namespace_id(ns.id);
  child.set_workflow_id(a.workflow_id());
  child.set_workflow_type(a.workflow_type().name());
  child.set_parent_close_policy(a.parent_close_policy());
  (*tx.state().mutable_children())[e.event_id()] = child;

  TransferTask task;
  task.set_kind(TransferTask::KIND_START_CHILD);
  task.set_scheduled_event_id(e.event_id());
  tx.AddTransferTask(std::move(task));
  return absl::OkStatus();
}

void HistoryEngine::ProcessTransferTask(const persistence::TaskQueueTask& task) {
  if (parking_.ParkIfStandby(task.task.namespace_id(), task)) return;
  absl::Status s = ProcessTransferTaskOnce(task);
  if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
    // The task's row is stored: retried with backoff until done, while this host owns the
    // task's shard. A host that lost the shard leaves it to the new owner, which processes
    // the shard's stored transfer tasks when it takes the shard (OnShardAcquired).
    timer_queue_->RunWithRetries(
        [this, task] {
          if (!shards_.Owns(shards_.ShardFor(task.task.namespace_id(), task.task.workflow_id()))) {
            return absl::OkStatus();
          }
          return ProcessTransferTaskOnce(task);
        },
        "transfer task", {task.task.namespace_id(), task.task.workflow_id(), task.task.run_id()},
        absl::Seconds(1));
  }
}

absl::Status HistoryEngine::ProcessStoredTransferTasks(const std::set<int32_t>& shards) {
  if (shards.empty()) return absl::OkStatus();
  constexpr int32_t kTransferPage = 1000;
  // The rows stored under `stored_shard`, page by page; each of a shard in `shards` is run.
  auto process = [&](int32_t stored_shard) -> absl::Status {
    for (int64_t after = 0;;) {
      absl::StatusOr<std::vector<persistence::TaskQueueTask>> tasks =
          store_.LoadTransferTasks(stored_shard, after, kTransferPage);
      if (!tasks.ok()) return tasks.status();
      for (const auto& task : *tasks) {
        if (shards.contains(shards_.ShardFor(task.task.namespace_id(), task.task.workflow_id()))) {
          ProcessTransferTask(task);
        }
      }
      if (tasks->size() < static_cast<size_t>(kTransferPage)) return absl::OkStatus();
      after = tasks->back().task_id;
    }
  };
  // Each shard's own rows (the index serves them: no scan of other shards' rows), then the
  // rows written before transfer rows carried their shard (an upgraded database; none once
  // they are consumed), whose shard is computed here.
  for (int32_t shard : shards) {
    if (absl::Status s = process(shard); !s.ok()) return s;
  }
  return process(persistence::ExecutionStore::kUnshardedTransferTasks);
}

absl::Status HistoryEngine::ProcessTransferTaskOnce(const persistence::TaskQueueTask& task) {
  switch (task.task.kind()) {
    case TransferTask::KIND_START_CHILD:
      return StartChild(task);
    case TransferTask::KIND_CLOSE_EXECUTION:
      return CloseExecution(task);
    case TransferTask::KIND_SIGNAL_EXTERNAL:
    case TransferTask::KIND_CANCEL_EXTERNAL:
      return DeliverExternalRequest(task);
    default:
      return ConsumeTransferTask(task);
  }
}

absl::Status HistoryEngine::ConsumeTransferTask(const persistence::TaskQueueTask& task) {
  const auto& t = task.task;
  NamespaceRef ns{t.namespace_id(), "", -1};
  return Mutate(ns, {t.namespace_id(), t.workflow_id(), t.run_id()}, [&](RunTransaction& tx) {
    tx.ConsumeTask(task.task_id);
    return absl::OkStatus();
  });
}

absl::Status HistoryEngine::StartChild(const persistence::TaskQueueTask& task) {
  const auto& t = task.task;
  const RunKey parent{t.namespace_id(), t.workflow_id(), t.run_id()};
  absl::StatusOr<MutableStateRecord> parent_state = ReadRun(parent);
  if (!parent_state.ok()) return parent_state.status();
  auto child_it = parent_state->children().find(t.scheduled_event_id());
  if (child_it == parent_state->children().end() || !child_it->second.run_id().empty() ||
      parent_state->execution().status() != enums::WORKFLOW_EXECUTION_STATUS_RUNNING) {
    return ConsumeTransferTask(task);  // already started, or nothing to start any more
  }
  absl::StatusOr<std::vector<HistoryEvent>> initiated =
      store_.ReadEvents(t.run_id(), t.scheduled_event_id(), t.scheduled_event_id() + 1, 1);
  if (!initiated.ok()) return initiated.status();
  if (initiated->empty()) return absl::InternalError("the child's initiated event is missing");
  const auto& a = initiated->front().start_child_workflow_execution_initiated_event_attributes();
  const NamespaceRef ns{a.namespace_id(), a.namespace_(), -1};

  // Start the child, unless a run with this request id exists already (a repeated task).
  tock::cluster::v1::StartChild child;
  wf::StartWorkflowExecutionRequest& start = *child.mutable_start();
  start.set_namespace_(a.namespace_());
  start.set_workflow_id(a.workflow_id());
  *start.mutable_workflow_type() = a.workflow_type();
  *start.mutable_task_queue() = a.task_queue();
  *start.mutable_input() = a.input();
  *start.mutable_workflow_execution_timeout() = a.workflow_execution_timeout();
  *start.mutable_workflow_run_timeout() = a.workflow_run_timeout();
  *start.mutable_workflow_task_timeout() = a.workflow_task_timeout();
  start.set_request_id(ChildRequestId(t.run_id(), t.scheduled_event_id()));
  start.set_workflow_id_reuse_policy(a.workflow_id_reuse_policy());
  if (a.has_retry_policy()) *start.mutable_retry_policy() = a.retry_policy();
  start.set_cron_schedule(a.cron_schedule());
  *start.mutable_header() = a.header();
  *start.mutable_memo() = a.memo();
  *start.mutable_search_attributes() = a.search_attributes();
  // Worker Deployments: the child's own override, else the parent's pinned one; and the
  // parent's version when the child's queue is polled by it (history/versioning.h).
  const auto& parent_exec = parent_state->execution();
  const auto polls = VersionPollsIn(parent.namespace_id);
  std::optional<temporal::api::workflow::v1::VersioningOverride> override_ =
      a.has_versioning_override() ? a.versioning_override()
                                  : InheritOverride(parent_exec, a.task_queue().name(), polls);
  if (override_) *start.mutable_versioning_override() = *override_;
  const InheritedVersion inherited =
      InheritVersion(parent_exec, nullptr, Successor::kChild, a.task_queue().name(), polls);
  if (inherited.pinned) *child.mutable_inherited_pinned_version() = *inherited.pinned;
  if (inherited.auto_upgrade) *child.mutable_inherited_auto_upgrade_info() = *inherited.auto_upgrade;
  tock::persistence::v1::ParentInfo& parent_info = *child.mutable_parent();
  parent_info.set_namespace_(ns.name);
  parent_info.set_namespace_id(parent.namespace_id);
  parent_info.set_workflow_id(parent.workflow_id);
  parent_info.set_run_id(parent.run_id);
  parent_info.set_initiated_event_id(t.scheduled_event_id());
  absl::StatusOr<wf::StartWorkflowExecutionResponse> started =
      any_shard_->StartChildWorkflow(ns, child);
  if (!started.ok() && started.status().code() != absl::StatusCode::kAlreadyExists) {
    return started.status();
  }

  NamespaceRef parent_ns{parent.namespace_id, ns.name, -1};
  return Mutate(parent_ns, parent, [&](RunTransaction& tx) -> absl::Status {
    tx.ConsumeTask(task.task_id);
    auto* children = tx.state().mutable_children();
    auto it = children->find(t.scheduled_event_id());
    if (!tx.IsOpen() || it == children->end() || !it->second.run_id().empty()) {
      return absl::OkStatus();  // recorded by an earlier attempt of this task
    }
    if (!started.ok()) {
      HistoryEvent& e = tx.AppendOrBuffer(enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED);
      auto* ev = e.mutable_start_child_workflow_execution_failed_event_attributes();
      ev->set_namespace_(a.namespace_());
      ev->set_namespace_id(a.namespace_id());
      ev->set_workflow_id(a.workflow_id());
      *ev->mutable_workflow_type() = a.workflow_type();
      ev->set_cause(enums::START_CHILD_WORKFLOW_EXECUTION_FAILED_CAUSE_WORKFLOW_ALREADY_EXISTS);
      ev->set_initiated_event_id(t.scheduled_event_id());
      ev->set_workflow_task_completed_event_id(a.workflow_task_completed_event_id());
      children->erase(it);
    } else {
      HistoryEvent& e = tx.AppendOrBuffer(enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED);
      auto* ev = e.mutable_child_workflow_execution_started_event_attributes();
      ev->set_namespace_(a.namespace_());
      ev->set_namespace_id(a.namespace_id());
      ev->set_initiated_event_id(t.scheduled_event_id());
      ev->mutable_workflow_execution()->set_workflow_id(a.workflow_id());
      ev->mutable_workflow_execution()->set_run_id(started->run_id());
      *ev->mutable_workflow_type() = a.workflow_type();
      *ev->mutable_header() = a.header();
      it->second.set_run_id(started->run_id());
      if (e.event_id() != 0) it->second.set_started_event_id(e.event_id());
    }
    tx.ScheduleWorkflowTask();
    return absl::OkStatus();
  });
}

absl::Status HistoryEngine::CloseExecution(const persistence::TaskQueueTask& task) {
  const auto& t = task.task;
  absl::StatusOr<MutableStateRecord> closed = ReadRun({t.namespace_id(), t.workflow_id(), t.run_id()});
  if (!closed.ok()) return closed.status();
  const auto& exec = closed->execution();

  // Parent-close policies of the children still running.
  for (const auto& [initiated, child] : closed->children()) {
    if (child.run_id().empty() || child.closed()) continue;
    NamespaceRef child_ns{child.namespace_id(), child.namespace_(), -1};
    absl::Status s;
    if (child.parent_close_policy() == enums::PARENT_CLOSE_POLICY_REQUEST_CANCEL) {
      wf::RequestCancelWorkflowExecutionRequest cancel;
      cancel.mutable_workflow_execution()->set_workflow_id(child.workflow_id());
      cancel.mutable_workflow_execution()->set_run_id(child.run_id());
      cancel.set_identity("tock-server parent close policy");
      s = any_shard_->RequestCancelWorkflow(child_ns, cancel);
    } else if (child.parent_close_policy() != enums::PARENT_CLOSE_POLICY_ABANDON) {
      wf::TerminateWorkflowExecutionRequest terminate;
      terminate.mutable_workflow_execution()->set_workflow_id(child.workflow_id());
      terminate.mutable_workflow_execution()->set_run_id(child.run_id());
      terminate.set_reason("parent closed (parent close policy TERMINATE)");
      terminate.set_identity("tock-server parent close policy");
      s = any_shard_->TerminateWorkflow(child_ns, terminate);
    }
    if (!s.ok() && s.code() != absl::StatusCode::kNotFound) return s;
  }

  if (exec.has_parent() && exec.status() != enums::WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW) {
    absl::StatusOr<std::vector<HistoryEvent>> last =
        store_.ReadEvents(exec.run_id(), closed->next_event_id() - 1, closed->next_event_id(), 1);
    if (!last.ok()) return last.status();
    if (last->empty()) return absl::InternalError("the child's close event is missing");
    tock::cluster::v1::ChildClosed closed_child;
    *closed_child.mutable_parent() = exec.parent();
    closed_child.set_workflow_id(exec.workflow_id());
    closed_child.set_run_id(exec.run_id());
    closed_child.set_status(exec.status());
    *closed_child.mutable_close_event() = std::move(last->front());
    absl::Status s = any_shard_->RecordChildClosed(closed_child);
    if (!s.ok() && s.code() != absl::StatusCode::kNotFound) return s;
  }
  return ConsumeTransferTask(task);
}

absl::StatusOr<wf::StartWorkflowExecutionResponse> HistoryEngine::StartChildWorkflow(
    const NamespaceRef& ns, const tock::cluster::v1::StartChild& child) {
  InheritedVersion inherited;
  if (child.has_inherited_pinned_version()) inherited.pinned = child.inherited_pinned_version();
  if (child.has_inherited_auto_upgrade_info()) {
    inherited.auto_upgrade = child.inherited_auto_upgrade_info();
  }
  return StartWorkflowWithParent(ns, child.start(), child.parent(), inherited);
}

absl::Status HistoryEngine::RecordChildClosed(const tock::cluster::v1::ChildClosed& closed) {
  const HistoryEvent& close_event = closed.close_event();
  const auto& p = closed.parent();
  NamespaceRef parent_ns{p.namespace_id(), p.namespace_(), -1};
  return Mutate(parent_ns, {p.namespace_id(), p.workflow_id(), p.run_id()},
                          [&](RunTransaction& tx) -> absl::Status {
    auto* children = tx.state().mutable_children();
    auto it = children->find(p.initiated_event_id());
    if (!tx.IsOpen() || it == children->end() || it->second.closed()) return absl::OkStatus();
    ChildExecutionInfo& child = it->second;
    temporal::api::common::v1::WorkflowExecution execution;
    execution.set_workflow_id(closed.workflow_id());
    execution.set_run_id(closed.run_id());
    temporal::api::common::v1::WorkflowType type;
    type.set_name(child.workflow_type());
    if (child.started_event_id() == 0 && child.run_id().empty()) {
      // The child closed before its start was recorded here: record the start first.
      HistoryEvent& e = tx.AppendOrBuffer(enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED);
      auto* ev = e.mutable_child_workflow_execution_started_event_attributes();
      ev->set_namespace_(child.namespace_());
      ev->set_namespace_id(child.namespace_id());
      ev->set_initiated_event_id(child.initiated_event_id());
      *ev->mutable_workflow_execution() = execution;
      *ev->mutable_workflow_type() = type;
      child.set_run_id(closed.run_id());
      if (e.event_id() != 0) child.set_started_event_id(e.event_id());
    }
    auto fill = [&](auto* ev) {
      ev->set_namespace_(child.namespace_());
      ev->set_namespace_id(child.namespace_id());
      *ev->mutable_workflow_execution() = execution;
      *ev->mutable_workflow_type() = type;
      ev->set_initiated_event_id(child.initiated_event_id());
      ev->set_started_event_id(child.started_event_id());
    };
    switch (closed.status()) {
      case enums::WORKFLOW_EXECUTION_STATUS_COMPLETED: {
        auto* ev = tx.AppendOrBuffer(enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)
                       .mutable_child_workflow_execution_completed_event_attributes();
        fill(ev);
        *ev->mutable_result() = close_event.workflow_execution_completed_event_attributes().result();
        break;
      }
      case enums::WORKFLOW_EXECUTION_STATUS_FAILED: {
        auto* ev = tx.AppendOrBuffer(enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED)
                       .mutable_child_workflow_execution_failed_event_attributes();
        fill(ev);
        *ev->mutable_failure() = close_event.workflow_execution_failed_event_attributes().failure();
        ev->set_retry_state(close_event.workflow_execution_failed_event_attributes().retry_state());
        break;
      }
      case enums::WORKFLOW_EXECUTION_STATUS_CANCELED: {
        auto* ev = tx.AppendOrBuffer(enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED)
                       .mutable_child_workflow_execution_canceled_event_attributes();
        fill(ev);
        *ev->mutable_details() = close_event.workflow_execution_canceled_event_attributes().details();
        break;
      }
      case enums::WORKFLOW_EXECUTION_STATUS_TIMED_OUT: {
        auto* ev = tx.AppendOrBuffer(enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT)
                       .mutable_child_workflow_execution_timed_out_event_attributes();
        fill(ev);
        ev->set_retry_state(enums::RETRY_STATE_TIMEOUT);
        break;
      }
      default: {
        auto* ev = tx.AppendOrBuffer(enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED)
                       .mutable_child_workflow_execution_terminated_event_attributes();
        fill(ev);
        break;
      }
    }
    if (child.started_event_id() != 0) {
      children->erase(it);
    } else {
      child.set_closed(true);  // erased when its buffered started event gets an id
    }
    tx.ScheduleWorkflowTask();
    return absl::OkStatus();
  });
}

}  // namespace tock::server::history
