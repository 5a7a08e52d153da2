#include "server-core/routing/call_router.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/common/grpc_status.h"
#include "server-core/history/task_token.h"
#include "server-core/matching/worker_registry.h"
#include "server-core/nexus/nexus_task_queues.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::server::routing {
namespace {

namespace wf = temporal::api::workflowservice::v1;
constexpr char kWorkflowService[] = "temporal.api.workflowservice.v1.WorkflowService/";

template <typename Request>
bool ParseRequest(const grpc::ByteBuffer& payload, Request* request) {
  grpc::ByteBuffer copy(payload);
  return grpc::SerializationTraits<Request>::Deserialize(&copy, request).ok();
}

// The answer about `target` of a host that does not own it.
grpc::Status NotOwnedAnswer(const CallRouter::Target& target) {
  return ToGrpcStatus(target.kind == CallRouter::Target::kQueue
                          ? QueueNotOwnedHere(target.task_queue)
                          : history::ShardNotOwnedHere(target.shard));
}

}  // namespace

// One routed call: attempts (here or on the owner) until one is not refused for ownership,
// or the retry budget is spent.
class CallRouter::Call : public std::enable_shared_from_this<Call> {
 public:
  Call(CallRouter& router, const std::string& method, const rpc::CallContext& ctx,
       const grpc::ByteBuffer& payload, std::shared_ptr<const rpc::RawHandler> local,
       rpc::RawResponder respond, Target target)
      : router_(router),
        method_(method),
        ctx_(ctx),
        payload_(payload),
        local_(std::move(local)),
        respond_(std::move(respond)),
        target_(std::move(target)),
        limit_(std::min(ctx.deadline, absl::Now() + kRetryBudget)) {}

  void Attempt() {
    auto self = shared_from_this();
    if (std::optional<std::string> owner = router_.OwnerOf(target_)) {
      // The answer may come (and the call end, taking ctx_ with it) before Forward
      // returns: only what this Call holds itself is used after it.
      std::shared_ptr<rpc::CancellationSignal> cancellation = ctx_.cancellation;
      std::function<void()> cancel = router_.peers_.Forward(
          *owner, method_, payload_, ctx_.deadline,
          [self](const grpc::Status& s, grpc::ByteBuffer* out) {
            self->Finish(s, out, /*remote=*/true);
          });
      cancellation->OnCancel(std::move(cancel));
      return;
    }
    if (!router_.OwnedHere(target_)) {
      // The ring gives it to this host, which has not taken it yet.
      return Finish(NotOwnedAnswer(target_), nullptr, false);
    }
    (*local_)(ctx_, payload_, [self](const grpc::Status& s, grpc::ByteBuffer* out) {
      self->Finish(s, out, /*remote=*/false);
    });
  }

 private:
  void Finish(const grpc::Status& s, grpc::ByteBuffer* out, bool remote) {
    // A peer that cannot be reached (dead, restarting) answers UNAVAILABLE too: the ring
    // drops it after the membership cutoff, and the retry finds the new owner.
    const bool retry = RetryOnOwner(static_cast<absl::StatusCode>(s.error_code()),
                                    s.error_message(), remote);
    // (Deadlines are real time; the timer thread runs on the server's clock.)
    if (!retry || ctx_.cancellation->cancelled() || absl::Now() + backoff_ >= limit_) {
      return respond_(s, out);
    }
    const absl::Time next = router_.clock_.Now() + backoff_;
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
    auto self = shared_from_this();
    router_.timers_.Schedule(next, [self] {
      if (!self->router_.retries_.Run([self] { self->Attempt(); })) {
        self->respond_(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                    "too many calls are waiting for a shard to move; retry"),
                       nullptr);
      }
    });
  }

  CallRouter& router_;
  const std::string method_;
  const rpc::CallContext& ctx_;  // alive until respond_ runs
  const grpc::ByteBuffer payload_;
  const std::shared_ptr<const rpc::RawHandler> local_;
  rpc::RawResponder respond_;
  const Target target_;
  const absl::Time limit_;
  absl::Duration backoff_ = kFirstBackoff;
};

CallRouter::CallRouter(Placement& placement, Peers& peers, history::ShardController& shards,
                       namespaces::NamespaceEngine& namespaces, Clock& clock, TimerThread& timers,
                       absl::Duration partition_wait)
    : placement_(placement),
      peers_(peers),
      shards_(shards),
      namespaces_(namespaces),
      clock_(clock),
      timers_(timers),
      partition_wait_(partition_wait) {}

CallRouter::~CallRouter() { retries_.Stop(); }

std::optional<std::string> CallRouter::OwnerOf(const Target& target) const {
  switch (target.kind) {
    case Target::kShard:
      return placement_.ShardOwner(target.shard);
    case Target::kQueue:
      return placement_.QueueOwner(target.namespace_id, target.task_queue);
    default:
      return std::nullopt;
  }
}

bool CallRouter::OwnedHere(const Target& target) const {
  switch (target.kind) {
    case Target::kShard:
      return shards_.Owns(target.shard);
    case Target::kQueue:
      return !placement_.QueueOwner(target.namespace_id, target.task_queue).has_value();
    default:
      return true;
  }
}

std::string CallRouter::NamespaceId(const std::string& name) {
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(name, true, namespaces::NamespaceAccess::kRead);
  return ns.ok() ? ns->id : std::string();
}

void CallRouter::Route(rpc::Dispatcher& dispatcher, const std::string& method,
                       TargetOf target_of) {
  dispatcher.Wrap(method, [this, target_of = std::move(target_of)](rpc::RawHandler handler) {
    auto local = std::make_shared<const rpc::RawHandler>(std::move(handler));
    return [this, target_of, local](const rpc::CallContext& ctx, const grpc::ByteBuffer& payload,
                                    rpc::RawResponder respond) {
      Target target = target_of(payload);
      // Unroutable (an unknown namespace, a bad token): the handler gives the error.
      if (target.kind == Target::kAnywhere) return (*local)(ctx, payload, std::move(respond));
      // Sent by another host (the one that took it from its client and chose this one as
      // the owner); a client's claim to be one is not believed (peer_credential.h).
      if (peers_.FromPeer(ctx)) {
        if (!OwnedHere(target)) {
          return respond(NotOwnedAnswer(target), nullptr);
        }
        if (!target.polled_queue.empty()) {
          return ServeForwardedPoll(ctx, payload, *local, std::move(respond));
        }
        return (*local)(ctx, payload, std::move(respond));
      }
      if (!target.polled_queue.empty() && partition_wait_ > absl::ZeroDuration() &&
          OwnerOf(target).has_value()) {
        return PollPartition(ctx, payload, local, std::move(respond), std::move(target));
      }
      std::make_shared<Call>(*this, ctx.method, ctx, payload, local, std::move(respond),
                             std::move(target))
          ->Attempt();
    };
  });
}

template <typename Request, typename WorkflowId>
void CallRouter::ByWorkflow(rpc::Dispatcher& dispatcher, const char* method,
                            WorkflowId workflow_id) {
  Route(dispatcher, absl::StrCat(kWorkflowService, method),
        [this, workflow_id](const grpc::ByteBuffer& payload) {
          Request req;
          if (!ParseRequest(payload, &req)) return Target{};
          std::string namespace_id = NamespaceId(req.namespace_());
          if (namespace_id.empty()) return Target{};
          return Target{Target::kShard, shards_.ShardFor(namespace_id, workflow_id(req)), {}, {}};
        });
}

template <typename Request>
void CallRouter::ByTaskToken(rpc::Dispatcher& dispatcher, const char* method) {
  Route(dispatcher, absl::StrCat(kWorkflowService, method),
        [this](const grpc::ByteBuffer& payload) {
          Request req;
          if (!ParseRequest(payload, &req)) return Target{};
          // A token of another namespace than the request's is not routed by: its own
          // namespace's owner is never called, and the handler here refuses it
          // (history::DecodeTaskTokenFor) before anything is read or changed.
          absl::StatusOr<history::TaskToken> token =
              history::DecodeTaskTokenFor(req.task_token(), NamespaceId(req.namespace_()));
          if (!token.ok()) return Target{};
          return Target{Target::kShard,
                        shards_.ShardFor(token->namespace_id(), token->workflow_id()), {}, {}};
        });
}

void CallRouter::PollPartition(const rpc::CallContext& ctx, const grpc::ByteBuffer& payload,
                               std::shared_ptr<const rpc::RawHandler> local,
                               rpc::RawResponder respond, Target target) {
  auto key = std::make_tuple(target.namespace_id, target.polled_queue, ctx.method);
  // One poll at a time goes on to the root as soon as this partition has no task for it;
  // the others wait here first.
  const bool forwarded = TakeForwardSlot(key);
  auto answer = [this, key, forwarded, respond = std::move(respond)](const grpc::Status& s,
                                                                      grpc::ByteBuffer* out) {
    if (forwarded) ReleaseForwardSlot(key);
    respond(s, out);
  };
  // The handler reads its context until it answers: a copy lives that long.
  auto partition_ctx = std::make_shared<rpc::CallContext>(ctx);
  partition_ctx->partition_until = clock_.Now() + (forwarded ? absl::ZeroDuration() : partition_wait_);
  (*local)(*partition_ctx, payload,
           [this, partition_ctx, &ctx, payload, local, target,
            answer = std::move(answer)](const grpc::Status& s, grpc::ByteBuffer* out) mutable {
             // An empty answer (no task here in time) goes on at the root (or wherever
             // ownership moved), as any routed call; a task, an error or a caller that left
             // is answered.
             const bool empty = s.ok() && (out == nullptr || out->Length() == 0);
             if (!empty || ctx.cancellation->cancelled() ||
                 absl::Now() + kLeastForwardedPoll >= ctx.deadline) {
               return answer(s, out);
             }
             std::make_shared<Call>(*this, ctx.method, ctx, payload, local, std::move(answer),
                                    target)
                 ->Attempt();
           });
}

void CallRouter::ServeForwardedPoll(const rpc::CallContext& ctx, const grpc::ByteBuffer& payload,
                                    const rpc::RawHandler& local, rpc::RawResponder respond) {
  std::optional<std::string> origin = peers_.Origin(ctx);
  if (!origin.has_value()) return local(ctx, payload, std::move(respond));
  // The handler reads its context until it answers: a copy lives that long.
  auto poll_ctx = std::make_shared<rpc::CallContext>(ctx);
  poll_ctx->prefer_run = [this, origin = std::move(*origin)](const std::string& namespace_id,
                                                             const std::string& workflow_id) {
    std::optional<std::string> owner =
        placement_.ShardOwner(shards_.ShardFor(namespace_id, workflow_id));
    return owner.has_value() && *owner == origin;
  };
  local(*poll_ctx, payload,
        [poll_ctx, respond = std::move(respond)](const grpc::Status& s, grpc::ByteBuffer* out) {
          respond(s, out);
        });
}

bool CallRouter::TakeForwardSlot(const std::tuple<std::string, std::string, std::string>& key) {
  std::lock_guard lock(forwarded_mu_);
  int& forwarded = forwarded_[key];
  if (forwarded >= kForwardedPolls) return false;
  ++forwarded;
  return true;
}

void CallRouter::ReleaseForwardSlot(const std::tuple<std::string, std::string, std::string>& key) {
  std::lock_guard lock(forwarded_mu_);
  auto it = forwarded_.find(key);
  if (it != forwarded_.end() && --it->second <= 0) forwarded_.erase(it);
}

template <typename Request>
void CallRouter::ByQueue(rpc::Dispatcher& dispatcher, const char* method, bool poll) {
  Route(dispatcher, absl::StrCat(kWorkflowService, method),
        [this, poll](const grpc::ByteBuffer& payload) {
          Request req;
          if (!ParseRequest(payload, &req)) return Target{};
          std::string namespace_id = NamespaceId(req.namespace_());
          // A sticky queue is served by the owner of its worker's normal queue, with the
          // worker's other polls, where its ShutdownWorker (routed by the normal queue) ends
          // them all.
          const auto& queue = req.task_queue();
          const std::string& name =
              queue.kind() == temporal::api::enums::v1::TASK_QUEUE_KIND_STICKY &&
                      !queue.normal_name().empty()
                  ? queue.normal_name()
                  : queue.name();
          if (namespace_id.empty() || name.empty()) return Target{};
          return Target{Target::kQueue, 0, std::move(namespace_id), name,
                        poll ? queue.name() : std::string()};
        });
}

template <typename Request>
void CallRouter::ByNexusToken(rpc::Dispatcher& dispatcher, const char* method) {
  Route(dispatcher, absl::StrCat(kWorkflowService, method), [](const grpc::ByteBuffer& payload) {
    Request req;
    if (!ParseRequest(payload, &req)) return Target{};
    auto queue = nexus::NexusTaskQueues::QueueOfToken(req.task_token());
    if (!queue.has_value()) return Target{};  // the handler answers the error
    return Target{Target::kQueue, 0, std::move(queue->first), std::move(queue->second)};
  });
}

template <typename Request>
void CallRouter::ByWorkerRegistry(rpc::Dispatcher& dispatcher, const char* method) {
  Route(dispatcher, absl::StrCat(kWorkflowService, method), [this](const grpc::ByteBuffer& payload) {
    Request req;
    if (!ParseRequest(payload, &req)) return Target{};
    std::string namespace_id = NamespaceId(req.namespace_());
    if (namespace_id.empty()) return Target{};
    return Target{Target::kQueue, 0, std::move(namespace_id), matching::WorkerRegistry::kRegistryQueue};
  });
}

void CallRouter::Install(rpc::Dispatcher& d) {
  auto id = [](const auto& r) -> const std::string& { return r.workflow_id(); };
  auto execution = [](const auto& r) -> const std::string& {
    return r.execution().workflow_id();
  };
  auto workflow_execution = [](const auto& r) -> const std::string& {
    return r.workflow_execution().workflow_id();
  };
  ByWorkflow<wf::StartWorkflowExecutionRequest>(d, "StartWorkflowExecution", id);
  ByWorkflow<wf::SignalWithStartWorkflowExecutionRequest>(d, "SignalWithStartWorkflowExecution",
                                                          id);
  ByWorkflow<wf::SignalWorkflowExecutionRequest>(d, "SignalWorkflowExecution",
                                                 workflow_execution);
  ByWorkflow<wf::RequestCancelWorkflowExecutionRequest>(d, "RequestCancelWorkflowExecution",
                                                        workflow_execution);
  ByWorkflow<wf::TerminateWorkflowExecutionRequest>(d, "TerminateWorkflowExecution",
                                                    workflow_execution);
  ByWorkflow<wf::DeleteWorkflowExecutionRequest>(d, "DeleteWorkflowExecution",
                                                 workflow_execution);
  ByWorkflow<wf::ResetWorkflowExecutionRequest>(d, "ResetWorkflowExecution", workflow_execution);
  ByWorkflow<wf::ResetStickyTaskQueueRequest>(d, "ResetStickyTaskQueue", execution);
  ByWorkflow<wf::DescribeWorkflowExecutionRequest>(d, "DescribeWorkflowExecution", execution);
  ByWorkflow<wf::GetWorkflowExecutionHistoryRequest>(d, "GetWorkflowExecutionHistory",
                                                     execution);
  ByWorkflow<wf::GetWorkflowExecutionHistoryReverseRequest>(
      d, "GetWorkflowExecutionHistoryReverse", execution);
  ByWorkflow<wf::QueryWorkflowRequest>(d, "QueryWorkflow", execution);
  ByWorkflow<wf::UpdateWorkflowExecutionRequest>(d, "UpdateWorkflowExecution", workflow_execution);
  ByWorkflow<wf::PollWorkflowExecutionUpdateRequest>(
      d, "PollWorkflowExecutionUpdate",
      [](const auto& r) -> const std::string& { return r.update_ref().workflow_execution().workflow_id(); });
  // Update-with-start: the workflow id of its start (the update must name the same).
  ByWorkflow<wf::ExecuteMultiOperationRequest>(
      d, "ExecuteMultiOperation", [](const auto& r) -> const std::string& {
        static const std::string kNone;  // malformed: any host answers the error
        return r.operations().empty() ? kNone : r.operations(0).start_workflow().workflow_id();
      });
  ByWorkflow<wf::RespondActivityTaskCompletedByIdRequest>(d, "RespondActivityTaskCompletedById",
                                                          id);
  ByWorkflow<wf::RespondActivityTaskFailedByIdRequest>(d, "RespondActivityTaskFailedById", id);
  ByWorkflow<wf::RespondActivityTaskCanceledByIdRequest>(d, "RespondActivityTaskCanceledById",
                                                         id);
  ByWorkflow<wf::RecordActivityTaskHeartbeatByIdRequest>(d, "RecordActivityTaskHeartbeatById",
                                                         id);

  ByTaskToken<wf::RespondWorkflowTaskCompletedRequest>(d, "RespondWorkflowTaskCompleted");
  ByTaskToken<wf::RespondWorkflowTaskFailedRequest>(d, "RespondWorkflowTaskFailed");
  ByTaskToken<wf::RespondActivityTaskCompletedRequest>(d, "RespondActivityTaskCompleted");
  ByTaskToken<wf::RespondActivityTaskFailedRequest>(d, "RespondActivityTaskFailed");
  ByTaskToken<wf::RespondActivityTaskCanceledRequest>(d, "RespondActivityTaskCanceled");
  ByTaskToken<wf::RecordActivityTaskHeartbeatRequest>(d, "RecordActivityTaskHeartbeat");
  ByTaskToken<wf::RespondQueryTaskCompletedRequest>(d, "RespondQueryTaskCompleted");

  ByQueue<wf::PollWorkflowTaskQueueRequest>(d, "PollWorkflowTaskQueue", /*poll=*/true);
  ByQueue<wf::PollActivityTaskQueueRequest>(d, "PollActivityTaskQueue", /*poll=*/true);
  ByQueue<wf::DescribeTaskQueueRequest>(d, "DescribeTaskQueue");
  // Nexus tasks wait in memory on their queue's owner; polls and answers go there.
  ByQueue<wf::PollNexusTaskQueueRequest>(d, "PollNexusTaskQueue");
  ByNexusToken<wf::RespondNexusTaskCompletedRequest>(d, "RespondNexusTaskCompleted");
  ByNexusToken<wf::RespondNexusTaskFailedRequest>(d, "RespondNexusTaskFailed");
  // A worker's shutdown ends its polls, which wait on the owner of its queue.
  Route(d, absl::StrCat(kWorkflowService, "ShutdownWorker"),
        [this](const grpc::ByteBuffer& payload) {
          wf::ShutdownWorkerRequest req;
          if (!ParseRequest(payload, &req)) return Target{};
          std::string namespace_id = NamespaceId(req.namespace_());
          if (namespace_id.empty() || req.task_queue().empty()) return Target{};
          return Target{Target::kQueue, 0, std::move(namespace_id), req.task_queue()};
        });

  // A namespace's worker heartbeats are kept, listed and counted on one host.
  ByWorkerRegistry<wf::RecordWorkerHeartbeatRequest>(d, "RecordWorkerHeartbeat");
  ByWorkerRegistry<wf::ListWorkersRequest>(d, "ListWorkers");
  ByWorkerRegistry<wf::CountWorkersRequest>(d, "CountWorkers");
  ByWorkerRegistry<wf::DescribeWorkerRequest>(d, "DescribeWorker");

  // Events another cluster forwards to apply again (replication): to the workflow's owner.
  Route(d, "tock.admin.v1.AdminService/ReapplyEvents", [this](const grpc::ByteBuffer& payload) {
    tock::admin::v1::ReapplyEventsRequest req;
    if (!ParseRequest(payload, &req) || req.workflow_id().empty()) return Target{};
    return Target{Target::kShard, shards_.ShardFor(req.namespace_id(), req.workflow_id()), {}, {}};
  });
}

}  // namespace tock::server::routing
