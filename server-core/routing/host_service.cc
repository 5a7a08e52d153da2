#include "server-core/routing/host_service.h"

#include "absl/strings/str_cat.h"

namespace tock::server::routing {
namespace {

namespace cluster = tock::cluster::v1;

// The serialized response of an operation, or its error.
template <typename Response>
absl::StatusOr<cluster::HistoryResponse> Serialized(absl::StatusOr<Response> result) {
  if (!result.ok()) return result.status();
  cluster::HistoryResponse out;
  result->SerializeToString(out.mutable_response());
  return out;
}

absl::StatusOr<cluster::HistoryResponse> Serialized(const absl::Status& status) {
  if (!status.ok()) return status;
  return cluster::HistoryResponse();
}

absl::StatusOr<cluster::HistoryResponse> Execute(history::HistoryEngine& history,
                                                 const cluster::HistoryRequest& req) {
  const history::NamespaceRef ns = FromWire(req.namespace_ref());
  switch (req.operation_case()) {
    case cluster::HistoryRequest::kStartWorkflowTask:
      return Serialized(history.RecordWorkflowTaskStarted(
          ns, FromWire(req.start_workflow_task().task()), req.start_workflow_task().identity()));
    case cluster::HistoryRequest::kStartActivityTask:
      return Serialized(history.RecordActivityTaskStarted(
          ns, FromWire(req.start_activity_task().task()), req.start_activity_task().identity()));
    case cluster::HistoryRequest::kStartQueryTask:
      return Serialized(history.StartQueryTask(ns, FromWire(req.start_query_task().task())));
    case cluster::HistoryRequest::kStartChild:
      return Serialized(history.StartChildWorkflow(ns, req.start_child()));
    case cluster::HistoryRequest::kChildClosed:
      return Serialized(history.RecordChildClosed(req.child_closed()));
    case cluster::HistoryRequest::kSignal:
      return Serialized(history.SignalWorkflow(ns, req.signal()));
    case cluster::HistoryRequest::kRequestCancel:
      return Serialized(history.RequestCancelWorkflow(ns, req.request_cancel()));
    case cluster::HistoryRequest::kTerminate:
      return Serialized(history.TerminateWorkflow(ns, req.terminate()));
    default:
      return absl::InvalidArgumentError("the history request names no operation");
  }
}

}  // namespace

cluster::QueueTask ToWire(const persistence::TaskQueueTask& task) {
  cluster::QueueTask out;
  out.set_task_id(task.task_id);
  out.set_namespace_id(task.namespace_id);
  out.set_task_queue(task.task_queue);
  out.set_kind(static_cast<int32_t>(task.kind));
  *out.mutable_task() = task.task;
  return out;
}

persistence::TaskQueueTask FromWire(const cluster::QueueTask& task) {
  persistence::TaskQueueTask out;
  out.task_id = task.task_id();
  out.namespace_id = task.namespace_id();
  out.task_queue = task.task_queue();
  out.kind = task.kind() == static_cast<int32_t>(persistence::TaskKind::kActivity)
                 ? persistence::TaskKind::kActivity
                 : persistence::TaskKind::kWorkflow;
  out.task = task.task();
  return out;
}

cluster::NamespaceRef ToWire(const history::NamespaceRef& ns) {
  cluster::NamespaceRef out;
  out.set_id(ns.id);
  out.set_name(ns.name);
  out.set_failover_version(ns.failover_version);
  return out;
}

history::NamespaceRef FromWire(const cluster::NamespaceRef& ns) {
  return history::NamespaceRef{ns.id(), ns.name(), ns.failover_version()};
}

void RegisterHostService(rpc::Dispatcher& dispatcher, history::HistoryEngine& history,
                         matching::MatchingEngine& matching, const Placement& placement) {
  dispatcher.AddUnary<cluster::AddTaskRequest, cluster::AddTaskResponse>(
      kAddTaskMethod,
      [&matching, &placement](const cluster::AddTaskRequest& req,
                              const rpc::CallContext&) -> absl::StatusOr<cluster::AddTaskResponse> {
        const cluster::QueueTask& task = req.task();
        if (placement.QueueOwner(task.namespace_id(), PlacingQueue(task.task_queue(), task.task()))
                .has_value()) {
          return QueueNotOwnedHere(task.task_queue());
        }
        persistence::TaskQueueTask offered = FromWire(task);
        const matching::MatchingEngine::Offered result = matching.Offer(offered);
        cluster::AddTaskResponse answer;
        answer.set_taken(result == matching::MatchingEngine::Offered::kTaken);
        answer.set_worker_gone(result == matching::MatchingEngine::Offered::kWorkerGone);
        return answer;
      });
  dispatcher.AddUnary<cluster::HistoryRequest, cluster::HistoryResponse>(
      kHistoryMethod, [&history](const cluster::HistoryRequest& req, const rpc::CallContext&) {
        return Execute(history, req);
      });
}

}  // namespace tock::server::routing
