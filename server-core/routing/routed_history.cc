#include "server-core/routing/routed_history.h"

#include <thread>

#include "lib/common/grpc_status.h"
#include "server-core/routing/host_service.h"

namespace tock::server::routing {
namespace {

namespace cluster = tock::cluster::v1;
constexpr absl::Duration kCallTimeout = absl::Seconds(10);

template <typename Response>
absl::StatusOr<Response> Parsed(absl::Status status, const std::string& bytes) {
  if (!status.ok()) return status;
  Response out;
  if (!out.ParseFromString(bytes)) {
    return absl::InternalError("another host answered with a response that cannot be parsed");
  }
  return out;
}

cluster::HistoryRequest WithNamespace(const history::NamespaceRef& ns) {
  cluster::HistoryRequest req;
  *req.mutable_namespace_ref() = ToWire(ns);
  return req;
}

cluster::StartTask StartOf(const persistence::TaskQueueTask& task, const std::string& identity) {
  cluster::StartTask start;
  *start.mutable_task() = ToWire(task);
  start.set_identity(identity);
  return start;
}

}  // namespace

RoutedHistory::RoutedHistory(history::HistoryEngine& local, history::ShardController& shards,
                             Placement& placement, Peers& peers)
    : local_(local), shards_(shards), placement_(placement), peers_(peers) {}

RoutedHistory::~RoutedHistory() { Stop(); }

void RoutedHistory::Stop() { stopping_ = true; }

absl::Status RoutedHistory::Remote(const std::string& owner, const cluster::HistoryRequest& request,
                                   std::string* response) {
  grpc::ClientContext context;
  peers_.Prepare(context, absl::Now() + kCallTimeout);
  cluster::HistoryResponse answer;
  grpc::Status s = peers_.HostService(owner).History(&context, request, &answer);
  if (!s.ok()) return FromGrpcStatus(s);
  *response = std::move(*answer.mutable_response());
  return absl::OkStatus();
}

template <typename Response, typename Local>
absl::StatusOr<Response> RoutedHistory::OnOwner(const std::string& namespace_id,
                                                const std::string& workflow_id,
                                                const cluster::HistoryRequest& request,
                                                Local local) {
  const int32_t shard = shards_.ShardFor(namespace_id, workflow_id);
  const absl::Time limit = absl::Now() + kRetryBudget;
  absl::Duration backoff = kFirstBackoff;
  for (;;) {
    std::optional<std::string> owner = placement_.ShardOwner(shard);
    absl::StatusOr<Response> result;
    if (!owner.has_value()) {
      if constexpr (std::is_same_v<Response, std::string>) {
        absl::Status s = local();
        result = s.ok() ? absl::StatusOr<std::string>(std::string()) : s;
      } else {
        result = local();
      }
    } else {
      std::string bytes;
      absl::Status s = Remote(*owner, request, &bytes);
      if constexpr (std::is_same_v<Response, std::string>) {
        result = s.ok() ? absl::StatusOr<std::string>(std::move(bytes)) : s;
      } else {
        result = Parsed<Response>(std::move(s), bytes);
      }
    }
    // No retries once the host is stopping: they would hold its shutdown.
    if (result.ok() || stopping_ ||
        !RetryOnOwner(result.status().code(), result.status().message(), owner.has_value()) ||
        absl::Now() + backoff >= limit) {
      return result;
    }
    std::this_thread::sleep_for(absl::ToChronoNanoseconds(backoff));
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

absl::StatusOr<wf::PollWorkflowTaskQueueResponse> RoutedHistory::RecordWorkflowTaskStarted(
    const history::NamespaceRef& ns, const persistence::TaskQueueTask& task,
    const std::string& identity) {
  cluster::HistoryRequest req = WithNamespace(ns);
  *req.mutable_start_workflow_task() = StartOf(task, identity);
  return OnOwner<wf::PollWorkflowTaskQueueResponse>(
      ns.id, task.task.workflow_id(), req,
      [&] { return local_.RecordWorkflowTaskStarted(ns, task, identity); });
}

absl::StatusOr<wf::PollActivityTaskQueueResponse> RoutedHistory::RecordActivityTaskStarted(
    const history::NamespaceRef& ns, const persistence::TaskQueueTask& task,
    const std::string& identity) {
  cluster::HistoryRequest req = WithNamespace(ns);
  *req.mutable_start_activity_task() = StartOf(task, identity);
  return OnOwner<wf::PollActivityTaskQueueResponse>(
      ns.id, task.task.workflow_id(), req,
      [&] { return local_.RecordActivityTaskStarted(ns, task, identity); });
}

template <typename Response, typename LocalAsync, typename Waiting>
void RoutedHistory::StartOnOwner(const std::string& namespace_id, const std::string& workflow_id,
                                 LocalAsync local_async, Waiting waiting,
                                 history::Answer<Response> done) {
  if (placement_.ShardOwner(shards_.ShardFor(namespace_id, workflow_id)).has_value()) {
    return done(waiting());
  }
  local_async([this, waiting, done = std::move(done)](absl::StatusOr<Response> result) {
    if (result.ok() || stopping_ ||
        !RetryOnOwner(result.status().code(), result.status().message(), false)) {
      return done(std::move(result));
    }
    // The shard is moving: the waiting form retries, here or on its new owner.
    done(waiting());
  });
}

void RoutedHistory::RecordWorkflowTaskStartedAsync(
    const history::NamespaceRef& ns, const persistence::TaskQueueTask& task,
    const std::string& identity, history::Answer<wf::PollWorkflowTaskQueueResponse> done) {
  StartOnOwner<wf::PollWorkflowTaskQueueResponse>(
      ns.id, task.task.workflow_id(),
      [this, ns, task, identity](history::Answer<wf::PollWorkflowTaskQueueResponse> answer) {
        local_.RecordWorkflowTaskStartedAsync(ns, task, identity, std::move(answer));
      },
      [this, ns, task, identity] { return RecordWorkflowTaskStarted(ns, task, identity); },
      std::move(done));
}

void RoutedHistory::RecordActivityTaskStartedAsync(
    const history::NamespaceRef& ns, const persistence::TaskQueueTask& task,
    const std::string& identity, history::Answer<wf::PollActivityTaskQueueResponse> done) {
  StartOnOwner<wf::PollActivityTaskQueueResponse>(
      ns.id, task.task.workflow_id(),
      [this, ns, task, identity](history::Answer<wf::PollActivityTaskQueueResponse> answer) {
        local_.RecordActivityTaskStartedAsync(ns, task, identity, std::move(answer));
      },
      [this, ns, task, identity] { return RecordActivityTaskStarted(ns, task, identity); },
      std::move(done));
}

absl::StatusOr<wf::PollWorkflowTaskQueueResponse> RoutedHistory::StartQueryTask(
    const history::NamespaceRef& ns, const persistence::TaskQueueTask& task) {
  cluster::HistoryRequest req = WithNamespace(ns);
  *req.mutable_start_query_task() = StartOf(task, "");
  return OnOwner<wf::PollWorkflowTaskQueueResponse>(
      ns.id, task.task.workflow_id(), req, [&] { return local_.StartQueryTask(ns, task); });
}

absl::StatusOr<wf::StartWorkflowExecutionResponse> RoutedHistory::StartChildWorkflow(
    const history::NamespaceRef& ns, const cluster::StartChild& child) {
  cluster::HistoryRequest req = WithNamespace(ns);
  *req.mutable_start_child() = child;
  return OnOwner<wf::StartWorkflowExecutionResponse>(
      ns.id, child.start().workflow_id(), req,
      [&] { return local_.StartChildWorkflow(ns, child); });
}

absl::Status RoutedHistory::RecordChildClosed(const cluster::ChildClosed& closed) {
  const auto& p = closed.parent();
  cluster::HistoryRequest req = WithNamespace({p.namespace_id(), p.namespace_(), -1});
  *req.mutable_child_closed() = closed;
  return OnOwner<std::string>(p.namespace_id(), p.workflow_id(), req,
                              [&] { return local_.RecordChildClosed(closed); })
      .status();
}

absl::Status RoutedHistory::SignalWorkflow(const history::NamespaceRef& ns,
                                           const wf::SignalWorkflowExecutionRequest& signal) {
  cluster::HistoryRequest req = WithNamespace(ns);
  *req.mutable_signal() = signal;
  return OnOwner<std::string>(ns.id, signal.workflow_execution().workflow_id(), req,
                              [&] { return local_.SignalWorkflow(ns, signal); })
      .status();
}

absl::Status RoutedHistory::RequestCancelWorkflow(
    const history::NamespaceRef& ns, const wf::RequestCancelWorkflowExecutionRequest& cancel) {
  cluster::HistoryRequest req = WithNamespace(ns);
  *req.mutable_request_cancel() = cancel;
  return OnOwner<std::string>(ns.id, cancel.workflow_execution().workflow_id(), req,
                              [&] { return local_.RequestCancelWorkflow(ns, cancel); })
      .status();
}

absl::Status RoutedHistory::TerminateWorkflow(
    const history::NamespaceRef& ns, const wf::TerminateWorkflowExecutionRequest& terminate) {
  cluster::HistoryRequest req = WithNamespace(ns);
  *req.mutable_terminate() = terminate;
  return OnOwner<std::string>(ns.id, terminate.workflow_execution().workflow_id(), req,
                              [&] { return local_.TerminateWorkflow(ns, terminate); })
      .status();
}

}  // namespace tock::server::routing
