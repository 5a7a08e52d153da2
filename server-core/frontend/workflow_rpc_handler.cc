// WorkflowService methods that run workflows: start, the worker's polls and responses,
// and what clients do to runs. Long polls are asynchronous: no thread waits.
#include <mutex>

#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"
#include "server-core/deployments/deployment_registry.h"
#include "server-core/frontend/archived_reads.h"
#include "server-core/frontend/handlers.h"
#include "server-core/history/history_engine.h"
#include "server-core/matching/matching_engine.h"

namespace tock::server::frontend {
namespace {

namespace enums = temporal::api::enums::v1;
constexpr char kService[] = "temporal.api.workflowservice.v1.WorkflowService/";
constexpr absl::Duration kMaxPoll = absl::Seconds(60);
constexpr absl::Duration kPollMargin = absl::Seconds(1);

std::string Method(const char* name) { return std::string(kService) + name; }

}  // namespace

absl::Time PollDeadline(const rpc::CallContext& ctx, absl::Time now) {
  const absl::Time deadline = std::min(ctx.deadline - kPollMargin, now + kMaxPoll);
  return ctx.partition_until ? std::min(deadline, *ctx.partition_until) : deadline;
}

namespace {

// Runs one long poll: waits for a task, starts it in history (a stale task is skipped and
// the poll goes on), and answers the default response when the deadline passes.
template <typename Response>
class LongPoll : public std::enable_shared_from_this<LongPoll<Response>> {
 public:
  // Starts a task in history; answers once, from any thread.
  using Start = std::function<void(const persistence::TaskQueueTask&, history::Answer<Response>)>;
  // Where a task taken and not started goes back to: its queue, through the history engine's
  // sink (with several hosts, the partition of the run's host).
  using GiveBack = std::function<void(persistence::TaskQueueTask)>;
  // `queries_only`: the namespace is a standby here (reference/replication.md §4.3): the
  // poll takes only query tasks, and the queue's workflow and activity tasks wait for a
  // failover (a later poll after it takes them). `ctx`: the poll's call (its preference,
  // CallContext::prefer_run).
  LongPoll(matching::MatchingEngine& matching, std::string namespace_id, std::string queue,
           persistence::TaskKind kind, bool queries_only, const rpc::CallContext& ctx,
           absl::Time deadline, std::string identity, Start start, GiveBack give_back,
           rpc::Responder<Response> respond)
      : matching_(matching),
        namespace_id_(std::move(namespace_id)),
        queue_(std::move(queue)),
        kind_(kind),
        queries_only_(queries_only),
        deadline_(deadline),
        identity_(std::move(identity)),
        start_(std::move(start)),
        give_back_(std::move(give_back)),
        respond_(std::move(respond)) {
    if (ctx.prefer_run) {
      prefer_ = [prefer_run = ctx.prefer_run](const persistence::TaskQueueTask& task) {
        return prefer_run(task.namespace_id, task.task.workflow_id());
      };
    }
  }

  // The worker instance polling (worker_instance_key): its ShutdownWorker ends the poll.
  void SetWorker(std::string worker_key) { worker_key_ = std::move(worker_key); }
  // A versioned worker's version ("deployment:build"): the poll takes only its tasks.
  void SetVersion(std::string version) { version_ = std::move(version); }

  void Run(const std::shared_ptr<rpc::CancellationSignal>& cancellation) {
    auto self = this->shared_from_this();
    cancellation->OnCancel([self] {
      self->cancelled_ = true;
      self->matching_.CancelPoll(self->poll_id_.load());
    });
    Next();
  }

 private:
  // Polls until a task starts, the deadline passes or the caller goes. A stale task makes it
  // poll again; matching may answer inside Poll (a task was waiting), and then that answer's
  // "poll again" is done by the loop of the Next already on the stack, never by a nested
  // call: a long run of stale tasks cannot deepen the stack.
  void Next() {
    std::unique_lock lock(mu_);
    if (in_next_) {
      again_ = true;
      return;
    }
    in_next_ = true;
    do {
      again_ = false;
      lock.unlock();
      auto self = this->shared_from_this();
      poll_id_ = matching_.Poll(
          namespace_id_, queue_, kind_, deadline_, identity_,
          [self](std::optional<persistence::TaskQueueTask> task) { self->OnTask(std::move(task)); },
          queries_only_, worker_key_, prefer_, version_);
      lock.lock();
    } while (again_);
    in_next_ = false;
  }

  void OnTask(std::optional<persistence::TaskQueueTask> task) {
    if (!task.has_value()) return respond_(Response());
    if (cancelled_) {
      // The caller is gone: give the task back rather than start it for nobody.
      give_back_(std::move(*task));
      return respond_(Response());
    }
    auto self = this->shared_from_this();
    // Kept for a give-back; the start reads it before the answer (which owns it) can run.
    auto held = std::make_shared<persistence::TaskQueueTask>(std::move(*task));
    start_(*held, [self, held](absl::StatusOr<Response> started) {
      if (started.ok()) return self->respond_(std::move(*started));
      if (started.status().code() == absl::StatusCode::kNotFound) return self->Next();
      // Starting it failed (the database): the task stays due, so it goes back to its queue
      // for the next poll (one that already started it is then skipped as stale), and this
      // poll gets the error.
      self->give_back_(std::move(*held));
      self->respond_(started.status());
    });
  }

  matching::MatchingEngine& matching_;
  const std::string namespace_id_, queue_;
  const persistence::TaskKind kind_;
  const bool queries_only_;
  const absl::Time deadline_;
  const std::string identity_;
  std::string worker_key_;
  std::string version_;
  Start start_;
  GiveBack give_back_;
  matching::MatchingEngine::Prefer prefer_;
  rpc::Responder<Response> respond_;
  std::atomic<matching::MatchingEngine::PollId> poll_id_{0};
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  bool in_next_ = false;  // a Next is polling on some thread's stack
  bool again_ = false;    // and must poll once more when its Poll returns
};

history::NamespaceRef Ref(const namespaces::NamespaceEngine::Resolved& r) {
  return history::NamespaceRef{r.id, r.name, r.failover_version};
}

// Registers a unary method whose request names a namespace: resolves it (NOT_FOUND,
// invalid state, not active for a kWrite method), then calls `fn(ns, request)`, which returns the
// response, or only a status for methods whose response is empty.
template <typename Request, typename Response, typename Fn>
void AddNamespaced(rpc::Dispatcher& dispatcher, namespaces::NamespaceEngine& namespaces,
                   const char* name, bool allow_deprecated, namespaces::NamespaceAccess access,
                   Fn fn) {
  dispatcher.AddUnary<Request, Response>(
      Method(name),
      [&namespaces, allow_deprecated, access, fn](
          const Request& req, const rpc::CallContext&) -> absl::StatusOr<Response> {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), allow_deprecated, access);
        if (!ns.ok()) return ns.status();
        if constexpr (std::is_same_v<decltype(fn(Ref(*ns), req)), absl::Status>) {
          if (absl::Status s = fn(Ref(*ns), req); !s.ok()) return s;
          return Response();
        } else {
          return fn(Ref(*ns), req);
        }
      });
}

// AddNamespaced for a method answered without a waiting thread: `fn(ns, request, respond)`
// answers through `respond` (the request stays valid until then: rpc::Dispatcher::AddAsync).
template <typename Request, typename Response, typename Fn>
void AddNamespacedAsync(rpc::Dispatcher& dispatcher, namespaces::NamespaceEngine& namespaces,
                        const char* name, bool allow_deprecated,
                        namespaces::NamespaceAccess access, Fn fn) {
  dispatcher.AddAsync<Request, Response>(
      Method(name),
      [&namespaces, allow_deprecated, access, fn](const Request& req, const rpc::CallContext&,
                                                  rpc::Responder<Response> respond) {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), allow_deprecated, access);
        if (!ns.ok()) return respond(ns.status());
        fn(Ref(*ns), req, std::move(respond));
      });
}

// The version a poll serves: "" for an unversioned worker. A versioned one's options are
// checked as Temporal checks them (reference/api_2026.md §3.3.3), and its version registered
// with the queue of a normal (not sticky) poll.
absl::StatusOr<std::string> PollerVersion(deployments::DeploymentRegistry* registry,
                                          const std::string& namespace_id,
                                          const temporal::api::taskqueue::v1::TaskQueue& queue,
                                          persistence::TaskKind kind,
                                          const temporal::api::deployment::v1::WorkerDeploymentOptions& options,
                                          bool has_options) {
  const bool sticky = queue.kind() == enums::TASK_QUEUE_KIND_STICKY;
  if (has_options && sticky && queue.normal_name().empty()) {
    return absl::InvalidArgumentError(
        "NormalName must be set on sticky queue when UseVersioning is true or DeploymentOptions "
        "are set.");
  }
  if (options.worker_versioning_mode() != enums::WORKER_VERSIONING_MODE_VERSIONED) return "";
  if (options.deployment_name().empty() || options.build_id().empty()) {
    return absl::InvalidArgumentError("Deployment name and build id must be set together.");
  }
  if (absl::Status s = deployments::CheckDeploymentName(options.deployment_name()); !s.ok()) return s;
  if (absl::Status s = deployments::CheckBuildId(options.build_id()); !s.ok()) return s;
  if (registry == nullptr) return "";  // no Worker Deployments here: served as unversioned
  if (!sticky) {
    if (absl::Status s = registry->RegisterPoller(namespace_id, queue.name(), kind,
                                                  options.deployment_name(), options.build_id());
        !s.ok()) {
      return s;
    }
  }
  return deployments::VersionName(options.deployment_name(), options.build_id());
}

// Starting runs.
void RegisterStartHandlers(rpc::Dispatcher& dispatcher, namespaces::NamespaceEngine& namespaces,
                           history::HistoryEngine& history) {
  AddNamespaced<wf::StartWorkflowExecutionRequest, wf::StartWorkflowExecutionResponse>(
      dispatcher, namespaces, "StartWorkflowExecution", false, namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::StartWorkflowExecutionRequest& req) {
        return history.StartWorkflow(ns, req);
      });

  AddNamespaced<wf::SignalWithStartWorkflowExecutionRequest,
                wf::SignalWithStartWorkflowExecutionResponse>(
      dispatcher, namespaces, "SignalWithStartWorkflowExecution", false,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::SignalWithStartWorkflowExecutionRequest& req) {
        return history.SignalWithStartWorkflow(ns, req);
      });
}

// The workers' long polls for workflow and activity tasks.
void RegisterPollHandlers(rpc::Dispatcher& dispatcher, namespaces::NamespaceEngine& namespaces,
                          history::HistoryEngine& history, matching::MatchingEngine& matching,
                          Clock& clock, deployments::DeploymentRegistry* deployments) {
  dispatcher.AddAsync<wf::PollWorkflowTaskQueueRequest, wf::PollWorkflowTaskQueueResponse>(
      Method("PollWorkflowTaskQueue"),
      [&, deployments](const wf::PollWorkflowTaskQueueRequest& req, const rpc::CallContext& ctx,
          rpc::Responder<wf::PollWorkflowTaskQueueResponse> respond) {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return respond(ns.status());
        if (req.task_queue().name().empty()) {
          return respond(absl::InvalidArgumentError("TaskQueue is not set on request."));
        }
        history::NamespaceRef ref = Ref(*ns);
        absl::StatusOr<std::string> version =
            PollerVersion(deployments, ref.id, req.task_queue(), persistence::TaskKind::kWorkflow,
                          req.deployment_options(), req.has_deployment_options());
        if (!version.ok()) return respond(version.status());
        std::string identity = req.identity();
        auto poll = std::make_shared<LongPoll<wf::PollWorkflowTaskQueueResponse>>(
            matching, ref.id, req.task_queue().name(), persistence::TaskKind::kWorkflow,
            /*queries_only=*/!ns->active_here, ctx, PollDeadline(ctx, clock.Now()), identity,
            [&history, ref, identity](const persistence::TaskQueueTask& task,
                                      history::Answer<wf::PollWorkflowTaskQueueResponse> done) {
              if (task.task.kind() == tock::persistence::v1::TransferTask::KIND_QUERY) {
                return done(history.any_shard().StartQueryTask(ref, task));
              }
              history.any_shard().RecordWorkflowTaskStartedAsync(ref, task, identity,
                                                                 std::move(done));
            },
            [&history](persistence::TaskQueueTask task) { history.QueueTask(std::move(task)); },
            std::move(respond));
        poll->SetWorker(req.worker_instance_key());
        poll->SetVersion(std::move(*version));
        poll->Run(ctx.cancellation);
      });

  dispatcher.AddAsync<wf::PollActivityTaskQueueRequest, wf::PollActivityTaskQueueResponse>(
      Method("PollActivityTaskQueue"),
      [&, deployments](const wf::PollActivityTaskQueueRequest& req, const rpc::CallContext& ctx,
          rpc::Responder<wf::PollActivityTaskQueueResponse> respond) {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return respond(ns.status());
        if (req.task_queue().name().empty()) {
          return respond(absl::InvalidArgumentError("TaskQueue is not set on request."));
        }
        history::NamespaceRef ref = Ref(*ns);
        absl::StatusOr<std::string> version =
            PollerVersion(deployments, ref.id, req.task_queue(), persistence::TaskKind::kActivity,
                          req.deployment_options(), req.has_deployment_options());
        if (!version.ok()) return respond(version.status());
        std::string identity = req.identity();
        auto poll = std::make_shared<LongPoll<wf::PollActivityTaskQueueResponse>>(
            matching, ref.id, req.task_queue().name(), persistence::TaskKind::kActivity,
            /*queries_only=*/!ns->active_here, ctx, PollDeadline(ctx, clock.Now()), identity,
            [&history, ref, identity](const persistence::TaskQueueTask& task,
                                      history::Answer<wf::PollActivityTaskQueueResponse> done) {
              history.any_shard().RecordActivityTaskStartedAsync(ref, task, identity,
                                                                 std::move(done));
            },
            [&history](persistence::TaskQueueTask task) { history.QueueTask(std::move(task)); },
            std::move(respond));
        poll->SetWorker(req.worker_instance_key());
        poll->SetVersion(std::move(*version));
        poll->Run(ctx.cancellation);
      });
}

// What workers answer to the tasks they took (by task token).
void RegisterTaskResponseHandlers(rpc::Dispatcher& dispatcher,
                                  namespaces::NamespaceEngine& namespaces,
                                  history::HistoryEngine& history) {
  AddNamespacedAsync<wf::RespondWorkflowTaskCompletedRequest,
                     wf::RespondWorkflowTaskCompletedResponse>(
      dispatcher, namespaces, "RespondWorkflowTaskCompleted", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::RespondWorkflowTaskCompletedRequest& req,
          rpc::Responder<wf::RespondWorkflowTaskCompletedResponse> respond) {
        history.RespondWorkflowTaskCompletedAsync(ns, req, std::move(respond));
      });
  AddNamespaced<wf::RespondWorkflowTaskFailedRequest, wf::RespondWorkflowTaskFailedResponse>(
      dispatcher, namespaces, "RespondWorkflowTaskFailed", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::RespondWorkflowTaskFailedRequest& req) {
        return history.RespondWorkflowTaskFailed(ns, req);
      });
  AddNamespacedAsync<wf::RespondActivityTaskCompletedRequest,
                     wf::RespondActivityTaskCompletedResponse>(
      dispatcher, namespaces, "RespondActivityTaskCompleted", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::RespondActivityTaskCompletedRequest& req,
          rpc::Responder<wf::RespondActivityTaskCompletedResponse> respond) {
        history.RespondActivityTaskCompletedAsync(
            ns, req.task_token(), req.result(), req.identity(),
            [respond = std::move(respond)](absl::Status s) {
              if (!s.ok()) return respond(s);
              respond(wf::RespondActivityTaskCompletedResponse());
            });
      });
  AddNamespaced<wf::RespondActivityTaskFailedRequest, wf::RespondActivityTaskFailedResponse>(
      dispatcher, namespaces, "RespondActivityTaskFailed", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::RespondActivityTaskFailedRequest& req) {
        return history.RespondActivityTaskFailed(ns, req);
      });
  AddNamespaced<wf::RespondActivityTaskCanceledRequest, wf::RespondActivityTaskCanceledResponse>(
      dispatcher, namespaces, "RespondActivityTaskCanceled", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::RespondActivityTaskCanceledRequest& req)
          -> absl::StatusOr<wf::RespondActivityTaskCanceledResponse> {
        if (absl::Status s = history.RespondActivityTaskCanceled(ns, req.task_token(),
                                                                 req.details(), req.identity());
            !s.ok()) {
          return s;
        }
        return wf::RespondActivityTaskCanceledResponse();
      });
  AddNamespaced<wf::RecordActivityTaskHeartbeatRequest, wf::RecordActivityTaskHeartbeatResponse>(
      dispatcher, namespaces, "RecordActivityTaskHeartbeat", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::RecordActivityTaskHeartbeatRequest& req) {
        return history.RecordActivityTaskHeartbeat(ns, req.task_token(), req.details());
      });
  AddNamespaced<wf::RespondQueryTaskCompletedRequest, wf::RespondQueryTaskCompletedResponse>(
      dispatcher, namespaces, "RespondQueryTaskCompleted", true, namespaces::NamespaceAccess::kRead,
      [&](const history::NamespaceRef& ns, const wf::RespondQueryTaskCompletedRequest& req) {
        return history.RespondQueryTaskCompleted(ns, req);
      });
}

// Changes to a run named by its workflow id (and run id).
void RegisterRunChangeHandlers(rpc::Dispatcher& dispatcher, namespaces::NamespaceEngine& namespaces,
                               history::HistoryEngine& history) {
  AddNamespaced<wf::SignalWorkflowExecutionRequest, wf::SignalWorkflowExecutionResponse>(
      dispatcher, namespaces, "SignalWorkflowExecution", true, namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::SignalWorkflowExecutionRequest& req) {
        return history.SignalWorkflow(ns, req);
      });
  AddNamespaced<wf::RequestCancelWorkflowExecutionRequest,
                wf::RequestCancelWorkflowExecutionResponse>(
      dispatcher, namespaces, "RequestCancelWorkflowExecution", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::RequestCancelWorkflowExecutionRequest& req) {
        return history.RequestCancelWorkflow(ns, req);
      });
  AddNamespaced<wf::TerminateWorkflowExecutionRequest, wf::TerminateWorkflowExecutionResponse>(
      dispatcher, namespaces, "TerminateWorkflowExecution", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::TerminateWorkflowExecutionRequest& req) {
        return history.TerminateWorkflow(ns, req);
      });
  AddNamespaced<wf::ResetWorkflowExecutionRequest, wf::ResetWorkflowExecutionResponse>(
      dispatcher, namespaces, "ResetWorkflowExecution", false, namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::ResetWorkflowExecutionRequest& req) {
        return history.ResetWorkflow(ns, req);
      });
  AddNamespaced<wf::DeleteWorkflowExecutionRequest, wf::DeleteWorkflowExecutionResponse>(
      dispatcher, namespaces, "DeleteWorkflowExecution", true, namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::DeleteWorkflowExecutionRequest& req) {
        return history.DeleteWorkflow(ns, req);
      });
  AddNamespaced<wf::ResetStickyTaskQueueRequest, wf::ResetStickyTaskQueueResponse>(
      // A read for the namespace check, as Temporal's standby serves it: stickiness is set only
      // where the namespace is active, so a standby's runs have none to clear.
      dispatcher, namespaces, "ResetStickyTaskQueue", true, namespaces::NamespaceAccess::kRead,
      [&](const history::NamespaceRef& ns, const wf::ResetStickyTaskQueueRequest& req) {
        return history.ResetStickyTaskQueue(ns, req.execution());
      });
}

// Reads of a run and the calls that wait on it: describe, history, queries and updates.
void RegisterRunReadHandlers(rpc::Dispatcher& dispatcher, namespaces::NamespaceEngine& namespaces,
                             history::HistoryEngine& history, archiver::ArchiveRegistry* archives) {
  AddNamespaced<wf::DescribeWorkflowExecutionRequest, wf::DescribeWorkflowExecutionResponse>(
      dispatcher, namespaces, "DescribeWorkflowExecution", true, namespaces::NamespaceAccess::kRead,
      [&](const history::NamespaceRef& ns, const wf::DescribeWorkflowExecutionRequest& req) {
        return history.DescribeWorkflow(ns, req);
      });
  dispatcher.AddAsyncSerialized<wf::GetWorkflowExecutionHistoryRequest>(
      Method("GetWorkflowExecutionHistory"),
      [&, archives](const wf::GetWorkflowExecutionHistoryRequest& req, const rpc::CallContext& ctx,
                    std::function<void(absl::StatusOr<WireBytes>)> respond) {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return respond(ns.status());
        // A waiting caller that goes away is answered (the dispatcher ignores the later
        // answer of the wait itself).
        ctx.cancellation->OnCancel(
            [respond] { respond(absl::CancelledError("the caller cancelled the history poll")); });
        if (archives == nullptr || !ShouldReadArchivedHistory(*archives, req)) {
          return history.GetWorkflowHistory(Ref(*ns), req, ctx.deadline, respond);
        }
        // A run that is gone (deleted after its retention) is read from the archive, on the
        // archives' own threads.
        history.GetWorkflowHistory(
            Ref(*ns), req, ctx.deadline,
            [&namespaces, archives, req, respond](absl::StatusOr<WireBytes> page) {
              if (page.ok() || page.status().code() != absl::StatusCode::kNotFound) {
                return respond(std::move(page));
              }
              absl::Status queued = archives->RunBlocking([&namespaces, archives, req, respond] {
                absl::StatusOr<wf::GetWorkflowExecutionHistoryResponse> archived =
                    ReadArchivedHistory(namespaces, *archives, req);
                if (!archived.ok()) return respond(archived.status());
                WireBytes bytes;
                archived->SerializeToString(&bytes.buffer);
                respond(std::move(bytes));
              });
              if (!queued.ok()) respond(queued);
            });
      });
  dispatcher.AddAsync<wf::QueryWorkflowRequest, wf::QueryWorkflowResponse>(
      Method("QueryWorkflow"), [&](const wf::QueryWorkflowRequest& req, const rpc::CallContext& ctx,
                                   rpc::Responder<wf::QueryWorkflowResponse> respond) {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return respond(ns.status());
        ctx.cancellation->OnCancel(
            [respond] { respond(absl::CancelledError("the caller cancelled the query")); });
        history.QueryWorkflow(Ref(*ns), req, ctx.deadline, respond);
      });
  // Updates wait (without a thread) for the stage asked for, at most a long poll.
  dispatcher.AddAsync<wf::UpdateWorkflowExecutionRequest, wf::UpdateWorkflowExecutionResponse>(
      Method("UpdateWorkflowExecution"),
      [&](const wf::UpdateWorkflowExecutionRequest& req, const rpc::CallContext& ctx,
          rpc::Responder<wf::UpdateWorkflowExecutionResponse> respond) {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kWrite);
        if (!ns.ok()) return respond(ns.status());
        history.UpdateWorkflow(Ref(*ns), req, ctx.deadline, respond);
      });
  dispatcher
      .AddAsync<wf::PollWorkflowExecutionUpdateRequest, wf::PollWorkflowExecutionUpdateResponse>(
          Method("PollWorkflowExecutionUpdate"),
          [&](const wf::PollWorkflowExecutionUpdateRequest& req, const rpc::CallContext& ctx,
              rpc::Responder<wf::PollWorkflowExecutionUpdateResponse> respond) {
            absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
                namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
            if (!ns.ok()) return respond(ns.status());
            history.PollWorkflowUpdate(Ref(*ns), req, ctx.deadline, respond);
          });
  dispatcher.AddAsync<wf::ExecuteMultiOperationRequest, wf::ExecuteMultiOperationResponse>(
      Method("ExecuteMultiOperation"),
      [&](const wf::ExecuteMultiOperationRequest& req, const rpc::CallContext& ctx,
          rpc::Responder<wf::ExecuteMultiOperationResponse> respond) {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kWrite);
        if (!ns.ok()) return respond(ns.status());
        history.ExecuteMultiOperation(Ref(*ns), req, ctx.deadline, respond);
      });
  AddNamespaced<wf::GetWorkflowExecutionHistoryReverseRequest,
                wf::GetWorkflowExecutionHistoryReverseResponse>(
      dispatcher, namespaces, "GetWorkflowExecutionHistoryReverse", true,
      namespaces::NamespaceAccess::kRead,
      [&](const history::NamespaceRef& ns,
          const wf::GetWorkflowExecutionHistoryReverseRequest& req) {
        return history.GetWorkflowHistoryReverse(ns, req);
      });
}

// The *ById variants (async activity completion) find the activity's token, then take the
// token path.
void RegisterActivityByIdHandlers(rpc::Dispatcher& dispatcher,
                                  namespaces::NamespaceEngine& namespaces,
                                  history::HistoryEngine& history) {
  AddNamespaced<wf::RespondActivityTaskCompletedByIdRequest,
                wf::RespondActivityTaskCompletedByIdResponse>(
      dispatcher, namespaces, "RespondActivityTaskCompletedById", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::RespondActivityTaskCompletedByIdRequest& req)
          -> absl::StatusOr<wf::RespondActivityTaskCompletedByIdResponse> {
        auto token =
            history.ActivityTokenById(ns, req.workflow_id(), req.run_id(), req.activity_id());
        if (!token.ok()) return token.status();
        if (absl::Status s =
                history.RespondActivityTaskCompleted(ns, *token, req.result(), req.identity());
            !s.ok()) {
          return s;
        }
        return wf::RespondActivityTaskCompletedByIdResponse();
      });
  AddNamespaced<wf::RespondActivityTaskFailedByIdRequest,
                wf::RespondActivityTaskFailedByIdResponse>(
      dispatcher, namespaces, "RespondActivityTaskFailedById", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::RespondActivityTaskFailedByIdRequest& req)
          -> absl::StatusOr<wf::RespondActivityTaskFailedByIdResponse> {
        auto token =
            history.ActivityTokenById(ns, req.workflow_id(), req.run_id(), req.activity_id());
        if (!token.ok()) return token.status();
        wf::RespondActivityTaskFailedRequest failed;
        failed.set_task_token(*token);
        *failed.mutable_failure() = req.failure();
        failed.set_identity(req.identity());
        *failed.mutable_last_heartbeat_details() = req.last_heartbeat_details();
        if (absl::Status s = history.RespondActivityTaskFailed(ns, failed); !s.ok()) return s;
        return wf::RespondActivityTaskFailedByIdResponse();
      });
  AddNamespaced<wf::RespondActivityTaskCanceledByIdRequest,
                wf::RespondActivityTaskCanceledByIdResponse>(
      dispatcher, namespaces, "RespondActivityTaskCanceledById", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::RespondActivityTaskCanceledByIdRequest& req)
          -> absl::StatusOr<wf::RespondActivityTaskCanceledByIdResponse> {
        auto token =
            history.ActivityTokenById(ns, req.workflow_id(), req.run_id(), req.activity_id());
        if (!token.ok()) return token.status();
        if (absl::Status s =
                history.RespondActivityTaskCanceled(ns, *token, req.details(), req.identity());
            !s.ok()) {
          return s;
        }
        return wf::RespondActivityTaskCanceledByIdResponse();
      });
  AddNamespaced<wf::RecordActivityTaskHeartbeatByIdRequest,
                wf::RecordActivityTaskHeartbeatByIdResponse>(
      dispatcher, namespaces, "RecordActivityTaskHeartbeatById", true,
      namespaces::NamespaceAccess::kWrite,
      [&](const history::NamespaceRef& ns, const wf::RecordActivityTaskHeartbeatByIdRequest& req)
          -> absl::StatusOr<wf::RecordActivityTaskHeartbeatByIdResponse> {
        auto token =
            history.ActivityTokenById(ns, req.workflow_id(), req.run_id(), req.activity_id());
        if (!token.ok()) return token.status();
        auto beat = history.RecordActivityTaskHeartbeat(ns, *token, req.details());
        if (!beat.ok()) return beat.status();
        wf::RecordActivityTaskHeartbeatByIdResponse out;
        out.set_cancel_requested(beat->cancel_requested());
        return out;
      });
}

// The workers themselves: shutdown, sticky queues, the pollers of a queue.
void RegisterWorkerHandlers(rpc::Dispatcher& dispatcher, namespaces::NamespaceEngine& namespaces,
                            matching::MatchingEngine& matching, nexus::NexusTaskQueues* nexus_tasks) {
  // The worker's waiting polls (Nexus ones too) answer empty now (namespace capability
  // worker_poll_complete_on_shutdown), and the workflow tasks waiting on its sticky queue go
  // to their normal queues (so do later ones: no worker polls it any more). The router sends
  // the call to the owner of `task_queue`, where the worker's polls and its sticky queue are.
  AddNamespaced<wf::ShutdownWorkerRequest, wf::ShutdownWorkerResponse>(
      dispatcher, namespaces, "ShutdownWorker", true, namespaces::NamespaceAccess::kRead,
      [&matching, nexus_tasks](const history::NamespaceRef& ns, const wf::ShutdownWorkerRequest& req) {
        matching.ReleaseWorkerPolls(ns.id, req.worker_instance_key());
        if (nexus_tasks != nullptr) nexus_tasks->ReleaseWorkerPolls(ns.id, req.worker_instance_key());
        matching.ReleaseStickyQueue(ns.id, req.sticky_task_queue());
        return absl::OkStatus();
      });
  AddNamespaced<wf::DescribeTaskQueueRequest, wf::DescribeTaskQueueResponse>(
      dispatcher, namespaces, "DescribeTaskQueue", true, namespaces::NamespaceAccess::kRead,
      // (`nexus_tasks` by value: this function's parameter is gone when the call comes.)
      [&matching, nexus_tasks](const history::NamespaceRef& ns, const wf::DescribeTaskQueueRequest& req)
          -> absl::StatusOr<wf::DescribeTaskQueueResponse> {
        if (req.task_queue_type() == enums::TASK_QUEUE_TYPE_NEXUS) {
          // Nexus queues live in memory on this host (the queue's owner: the call is routed).
          wf::DescribeTaskQueueResponse out;
          if (nexus_tasks == nullptr) return out;
          for (const auto& [identity, last] : nexus_tasks->Pollers(ns.id, req.task_queue().name())) {
            auto* poller = out.add_pollers();
            poller->set_identity(identity);
            *poller->mutable_last_access_time() = ToProtoTime(last);
          }
          if (req.report_stats()) {
            out.mutable_stats()->set_approximate_backlog_count(static_cast<int64_t>(
                nexus_tasks->WaitingDispatches(ns.id, req.task_queue().name())));
          }
          return out;
        }
        auto kind = req.task_queue_type() == enums::TASK_QUEUE_TYPE_ACTIVITY
                        ? persistence::TaskKind::kActivity
                        : persistence::TaskKind::kWorkflow;
        wf::DescribeTaskQueueResponse out;
        for (const auto& p : matching.Pollers(ns.id, req.task_queue().name(), kind)) {
          auto* poller = out.add_pollers();
          poller->set_identity(p.identity);
          *poller->mutable_last_access_time() = ToProtoTime(p.last_access_time);
        }
        // The backlog this host (the queue's root: the call is routed to it) holds in memory:
        // approximate, as Temporal's is (at most the paging window; other hosts' partitions
        // hold their own shards' tasks).
        if (req.report_stats()) {
          out.mutable_stats()->set_approximate_backlog_count(
              static_cast<int64_t>(matching.Backlog(ns.id, req.task_queue().name(), kind)));
        }
        return out;
      });
}

}  // namespace

void RegisterWorkflowRpcHandlers(rpc::Dispatcher& dispatcher,
                                 namespaces::NamespaceEngine& namespaces,
                                 history::HistoryEngine& history,
                                 matching::MatchingEngine& matching, Clock& clock,
                                 archiver::ArchiveRegistry* archives,
                                 deployments::DeploymentRegistry* deployments,
                                 nexus::NexusTaskQueues* nexus_tasks) {
  RegisterStartHandlers(dispatcher, namespaces, history);
  RegisterPollHandlers(dispatcher, namespaces, history, matching, clock, deployments);
  RegisterTaskResponseHandlers(dispatcher, namespaces, history);
  RegisterRunChangeHandlers(dispatcher, namespaces, history);
  RegisterRunReadHandlers(dispatcher, namespaces, history, archives);
  RegisterActivityByIdHandlers(dispatcher, namespaces, history);
  RegisterWorkerHandlers(dispatcher, namespaces, matching, nexus_tasks);
}

}  // namespace tock::server::frontend
