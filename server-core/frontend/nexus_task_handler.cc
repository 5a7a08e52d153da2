// The handler side of Nexus (reference/api_2026.md §4.3): PollNexusTaskQueue (a long poll on
// the in-memory Nexus task queue of its namespace and task queue; no thread waits) and the
// worker's answers RespondNexusTaskCompleted / RespondNexusTaskFailed, by task token, over
// nexus::NexusTaskQueues. With hosts sharing a database the router sends the three to the
// owner of the task queue, where its dispatches wait (the token names its queue).
#include "absl/strings/str_cat.h"
#include "server-core/frontend/handlers.h"
#include "server-core/nexus/nexus_task_queues.h"

namespace tock::server::frontend {
namespace {

constexpr char kService[] = "temporal.api.workflowservice.v1.WorkflowService/";

}  // namespace

void RegisterNexusTaskHandlers(rpc::Dispatcher& dispatcher, namespaces::NamespaceEngine& namespaces,
                               nexus::NexusTaskQueues& queues, Clock& clock) {
  dispatcher.AddAsync<wf::PollNexusTaskQueueRequest, wf::PollNexusTaskQueueResponse>(
      absl::StrCat(kService, "PollNexusTaskQueue"),
      [&](const wf::PollNexusTaskQueueRequest& req, const rpc::CallContext& ctx,
          rpc::Responder<wf::PollNexusTaskQueueResponse> respond) {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return respond(ns.status());
        if (req.task_queue().name().empty()) {
          return respond(absl::InvalidArgumentError("TaskQueue is not set on request."));
        }
        const absl::Time deadline = PollDeadline(ctx, clock.Now());
        auto shared = std::make_shared<rpc::Responder<wf::PollNexusTaskQueueResponse>>(std::move(respond));
        const uint64_t id = queues.Poll(
            ns->id, req.task_queue().name(), req.identity(), req.worker_instance_key(), deadline,
            [shared](absl::StatusOr<wf::PollNexusTaskQueueResponse> out) { (*shared)(std::move(out)); });
        if (ctx.cancellation) ctx.cancellation->OnCancel([&queues, id] { queues.CancelPoll(id); });
      });

  dispatcher.AddUnary<wf::RespondNexusTaskCompletedRequest, wf::RespondNexusTaskCompletedResponse>(
      absl::StrCat(kService, "RespondNexusTaskCompleted"),
      [&](const wf::RespondNexusTaskCompletedRequest& req,
          const rpc::CallContext&) -> absl::StatusOr<wf::RespondNexusTaskCompletedResponse> {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return ns.status();
        if (req.task_token().empty()) return absl::InvalidArgumentError("Task token not set on request.");
        if (!req.has_response()) return absl::InvalidArgumentError("response not set on request");
        if (absl::Status s = queues.Complete(ns->id, req.task_token(), req.response()); !s.ok()) {
          return s;
        }
        return wf::RespondNexusTaskCompletedResponse();
      });

  dispatcher.AddUnary<wf::RespondNexusTaskFailedRequest, wf::RespondNexusTaskFailedResponse>(
      absl::StrCat(kService, "RespondNexusTaskFailed"),
      [&](const wf::RespondNexusTaskFailedRequest& req,
          const rpc::CallContext&) -> absl::StatusOr<wf::RespondNexusTaskFailedResponse> {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return ns.status();
        if (req.task_token().empty()) return absl::InvalidArgumentError("Task token not set on request.");
        if (!req.has_failure() && !req.has_error()) {
          return absl::InvalidArgumentError("request must contain error or failure");
        }
        temporal::api::failure::v1::Failure failure = req.failure();
        if (!req.has_failure()) {
          // The deprecated HandlerError (workers without temporal_failure_responses).
          failure.set_message(req.error().failure().message());
          auto* info = failure.mutable_nexus_handler_failure_info();
          info->set_type(req.error().error_type());
          info->set_retry_behavior(req.error().retry_behavior());
        } else if (!failure.has_nexus_handler_failure_info()) {
          return absl::InvalidArgumentError(
              "the failure must carry nexus_handler_failure_info (a Nexus handler error)");
        }
        if (absl::Status s = queues.Fail(ns->id, req.task_token(), failure); !s.ok()) return s;
        return wf::RespondNexusTaskFailedResponse();
      });
}

}  // namespace tock::server::frontend
