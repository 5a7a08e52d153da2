// Signals and cancellations a workflow sends to other workflows (its children among them):
// the command records the initiated event; a durable transfer task then delivers it and
// records the outcome (…Signaled / …CancelRequested, or …Failed when the target is gone).
// Redelivery after a crash is harmless: the signal carries a request id derived from the
// initiated event, and a repeated cancel request is a no-op.
#include "absl/strings/str_cat.h"
#include "server-core/history/history_engine.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using tock::persistence::v1::ExternalRequestInfo;
using tock::persistence::v1::TransferTask;

}  // namespace

absl::Status HistoryEngine::ApplyExternalCommand(RunTransaction& tx, const NamespaceRef& ns,
                                                 const temporal::api::command::v1::Command& command,
                                                 int64_t completed_id) {
  const bool is_cancel =
      command.command_type() == enums::COMMAND_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION;
  ExternalRequestInfo info;
  info.set_is_cancel(is_cancel);
  if (is_cancel) {
    const auto& a = command.request_cancel_external_workflow_execution_command_attributes();
    if (!a.namespace_().empty() && a.namespace_() != ns.name) {
      return absl::UnimplementedError("cancelling a workflow in another namespace is not supported yet");
    }
    HistoryEvent& e = tx.Append(enums::EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED);
    auto* ev = e.mutable_request_cancel_external_workflow_execution_initiated_event_attributes();
    ev->set_workflow_task_completed_event_id(completed_id);
    ev->set_namespace_(ns.name);
    ev->set_namespace_id(ns.id);
    ev->mutable_workflow_execution()->set_workflow_id(a.workflow_id());
    ev->mutable_workflow_execution()->set_run_id(a.run_id());
    ev->set_child_workflow_only(a.child_workflow_only());
    ev->set_reason(a.reason());
    info.set_initiated_event_id(e.event_id());
    info.set_workflow_id(a.workflow_id());
    info.set_run_id(a.run_id());
    info.set_child_workflow_only(a.child_workflow_only());
  } else {
    const auto& a = command.signal_external_workflow_execution_command_attributes();
    if (!a.namespace_().empty() && a.namespace_() != ns.name) {
      return absl::UnimplementedError("signalling a workflow in another namespace is not supported yet");
    }
    HistoryEvent& e = tx.Append(enums::EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED);
    auto* ev = e.mutable_signal_external_workflow_execution_initiated_event_attributes();
    ev->set_namespace_(ns.name);
    ev->set_namespace_id(ns.id);
    ev->set_workflow_task_completed_event_id(completed_id);
    *ev->mutable_workflow_execution() = a.execution();
    ev->set_signal_name(a.signal_name());
    *ev->mutable_input() = a.input();
    ev->set_child_workflow_only(a.child_workflow_only());
    *ev->mutable_header() = a.header();
    info.set_initiated_event_id(e.event_id());
    info.set_workflow_id(a.execution().workflow_id());
    info.set_run_id(a.execution().run_id());
    info.set_signal_name(a.signal_name());
    info.set_child_workflow_only(a.child_workflow_only());
  }
  info.set_namespace_(ns.name);
  (*tx.state().mutable_external_requests())[info.initiated_event_id()] = info;
  TransferTask task;
  task.set_kind(is_cancel ? TransferTask::KIND_CANCEL_EXTERNAL : TransferTask::KIND_SIGNAL_EXTERNAL);
  task.set_scheduled_event_id(info.initiated_event_id());
  tx.AddTransferTask(std::move(task));
  return absl::OkStatus();
}

absl::Status HistoryEngine::DeliverExternalRequest(const persistence::TaskQueueTask& task) {
  const auto& t = task.task;
  const RunKey source{t.namespace_id(), t.workflow_id(), t.run_id()};
  absl::StatusOr<MutableStateRecord> state = ReadRun(source);
  if (!state.ok()) return state.status();
  auto it = state->external_requests().find(t.scheduled_event_id());
  if (it == state->external_requests().end()) return ConsumeTransferTask(task);
  const ExternalRequestInfo info = it->second;
  const NamespaceRef ns{t.namespace_id(), info.namespace_(), -1};

  absl::Status delivered;
  if (info.is_cancel()) {
    wf::RequestCancelWorkflowExecutionRequest cancel;
    cancel.mutable_workflow_execution()->set_workflow_id(info.workflow_id());
    cancel.mutable_workflow_execution()->set_run_id(info.run_id());
    cancel.set_identity(absl::StrCat("workflow ", t.workflow_id()));
    delivered = any_shard_->RequestCancelWorkflow(ns, cancel);
  } else {
    absl::StatusOr<std::vector<HistoryEvent>> initiated =
        store_.ReadEvents(t.run_id(), t.scheduled_event_id(), t.scheduled_event_id() + 1, 1);
    if (!initiated.ok()) return initiated.status();
    if (initiated->empty()) return absl::InternalError("the initiated event is missing");
    const auto& a = initiated->front().signal_external_workflow_execution_initiated_event_attributes();
    wf::SignalWorkflowExecutionRequest signal;
    signal.mutable_workflow_execution()->set_workflow_id(info.workflow_id());
    signal.mutable_workflow_execution()->set_run_id(info.run_id());
    signal.set_signal_name(info.signal_name());
    *signal.mutable_input() = a.input();
    *signal.mutable_header() = a.header();
    signal.set_identity(absl::StrCat("workflow ", t.workflow_id()));
    signal.set_request_id(absl::StrCat("external:", t.run_id(), ":", t.scheduled_event_id()));
    delivered = any_shard_->SignalWorkflow(ns, signal);
  }
  if (!delivered.ok() && delivered.code() != absl::StatusCode::kNotFound) return delivered;

  absl::Status s = Mutate(ns, source, [&](RunTransaction& tx) -> absl::Status {
    tx.ConsumeTask(task.task_id);
    auto* requests = tx.state().mutable_external_requests();
    if (!tx.IsOpen() || !requests->contains(info.initiated_event_id())) return absl::OkStatus();
    temporal::api::common::v1::WorkflowExecution target;
    target.set_workflow_id(info.workflow_id());
    target.set_run_id(info.run_id());
    if (delivered.ok() && info.is_cancel()) {
      auto* ev = tx.AppendOrBuffer(enums::EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED)
                     .mutable_external_workflow_execution_cancel_requested_event_attributes();
      ev->set_initiated_event_id(info.initiated_event_id());
      ev->set_namespace_(info.namespace_());
      ev->set_namespace_id(t.namespace_id());
      *ev->mutable_workflow_execution() = target;
    } else if (delivered.ok()) {
      auto* ev = tx.AppendOrBuffer(enums::EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED)
                     .mutable_external_workflow_execution_signaled_event_attributes();
      ev->set_initiated_event_id(info.initiated_event_id());
      ev->set_namespace_(info.namespace_());
      ev->set_namespace_id(t.namespace_id());
      *ev->mutable_workflow_execution() = target;
    } else if (info.is_cancel()) {
      auto* ev = tx.AppendOrBuffer(enums::EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED)
                     .mutable_request_cancel_external_workflow_execution_failed_event_attributes();
      ev->set_cause(enums::CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED_CAUSE_EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND);
      ev->set_namespace_(info.namespace_());
      ev->set_namespace_id(t.namespace_id());
      *ev->mutable_workflow_execution() = target;
      ev->set_initiated_event_id(info.initiated_event_id());
    } else {
      auto* ev = tx.AppendOrBuffer(enums::EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED)
                     .mutable_signal_external_workflow_execution_failed_event_attributes();
      ev->set_cause(enums::SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED_CAUSE_EXTERNAL_WORKFLOW_EXECUTION_NOT_FOUND);
      ev->set_namespace_(info.namespace_());
      ev->set_namespace_id(t.namespace_id());
      *ev->mutable_workflow_execution() = target;
      ev->set_initiated_event_id(info.initiated_event_id());
    }
    requests->erase(info.initiated_event_id());
    tx.ScheduleWorkflowTask();
    return absl::OkStatus();
  });
  if (s.code() == absl::StatusCode::kNotFound) return ConsumeTransferTask(task);
  return s;
}

}  // namespace tock::server::history
