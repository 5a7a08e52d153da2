// Workflow updates, with Temporal's protocol (temporalio/temporal
// docs/architecture/workflow-update.md; the SDK side: sdk-core's update state machine).
//
// An update request is admitted in memory (AdmittedUpdate, by run) and a workflow task is
// scheduled for it unless one is pending. The task carries every admitted update as a protocol
// message (`<id>/request`, sequenced before the task's WorkflowTaskStarted). The worker
// answers in RespondWorkflowTaskCompleted's messages: an Acceptance (event
// WorkflowExecutionUpdateAccepted, holding the request, so a replay needs no message), a
// Rejection (no event: the update just ends) and a Response (WorkflowExecutionUpdateCompleted
// with the outcome). Accepted updates are in the run's state (MutableState.updates), which
// deduplicates a repeated update id and answers polls after the fact; an admitted update is
// lost with a restart, as in Temporal, and the caller's retry admits it again.
//
// As in Temporal, a task made only to deliver updates to an idle run is speculative
// (SpeculativeTask): shown to the worker but not written. If the worker only rejects, nothing
// is written and the response's reset_history_event_id tells the SDK to forget the task's
// events; otherwise (or when anything else happens to the run meanwhile) it is written exactly
// as shown.
//
// Callers wait without a thread: a wait looks at the update after every commit of its run
// (WaitForCommit) until the stage it wants, a long poll's end (answered with the stage
// reached) or the caller's deadline (DEADLINE_EXCEEDED).
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/ids.h"
#include "lib/common/proto_time.h"
#include "lib/common/status.h"
#include "server-core/history/history_engine.h"
#include "temporal/api/errordetails/v1/message.pb.h"
#include "temporal/api/failure/v1/message.pb.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
namespace update = temporal::api::update::v1;
using temporal::api::protocol::v1::Message;
using Stage = enums::UpdateWorkflowExecutionLifecycleStage;

constexpr Stage kAdmitted = enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED;
constexpr Stage kAccepted = enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED;
constexpr Stage kCompleted = enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED;
// Temporal's LongPollExpirationInterval: a wait longer than this answers the stage reached.
constexpr absl::Duration kLongPoll = absl::Seconds(20);
// The caller's deadline minus this is when a wait gives up, so the answer reaches it in time.
constexpr absl::Duration kDeadlineMargin = absl::Seconds(1);
// From this workflow task attempt on, the run's tasks keep failing: updates are refused.
constexpr int32_t kFailingTaskAttempt = 3;

temporal::api::failure::v1::Failure ServerFailure(const char* message, const char* type) {
  temporal::api::failure::v1::Failure f;
  f.set_message(message);
  f.set_source("Server");
  f.mutable_application_failure_info()->set_type(type);
  f.mutable_application_failure_info()->set_non_retryable(true);
  return f;
}

temporal::api::failure::v1::Failure UnprocessedUpdateFailure() {
  return ServerFailure(
      "Workflow Update is rejected because it wasn't processed by worker. Probably, Workflow "
      "Update is not supported by the worker.",
      "UnprocessedUpdate");
}

temporal::api::failure::v1::Failure AcceptedUpdateCompletedWorkflowFailure() {
  return ServerFailure(
      "Workflow Update failed because the Workflow completed before the Update completed.",
      "AcceptedUpdateCompletedWorkflow");
}

absl::Status InvalidTransition(const std::string& id, const char* message_type, const char* state) {
  return absl::InvalidArgumentError(absl::StrCat("invalid state transition attempted for Update ",
                                                 id, ": received *update.", message_type,
                                                 " message while in state ", state));
}

absl::Status UpdateNotOnServer(const std::string& id) {
  return absl::NotFoundError(absl::StrCat(
      "update ", id,
      " wasn't found on the server. This is most likely a transient error which will be "
      "resolved automatically by retries"));
}

// The frontend's checks of an update request (Temporal's messages); fills in the defaults
// (a new update id, wait for COMPLETED).
absl::Status PrepareUpdateRequest(wf::UpdateWorkflowExecutionRequest& req, const Limits& limits) {
  if (absl::Status s = ValidateIdField(req.workflow_execution().workflow_id(), "WorkflowId", limits);
      !s.ok()) {
    return s;
  }
  if (req.workflow_execution().run_id().size() > limits.max_id_length ||
      req.first_execution_run_id().size() > limits.max_id_length) {
    return absl::InvalidArgumentError("RunId exceeds length limit.");
  }
  if (!req.request().has_meta()) return absl::InvalidArgumentError("Update meta is not set on request.");
  auto* meta = req.mutable_request()->mutable_meta();
  if (meta->update_id().size() > limits.max_id_length) {
    return absl::InvalidArgumentError("UpdateId length exceeds limit.");
  }
  if (meta->update_id().empty()) meta->set_update_id(NewUuid());
  if (absl::Status s = ValidateIdField(meta->update_id(), "UpdateId", limits); !s.ok()) return s;
  if (meta->identity().size() > limits.max_id_length) {
    return absl::InvalidArgumentError("Identity exceeds length limit.");
  }
  if (!req.request().has_input()) return absl::InvalidArgumentError("Update input is not set on request.");
  if (req.request().input().name().empty()) {
    return absl::InvalidArgumentError("Update name is not set on request.");
  }
  if (absl::Status s = ValidateIdField(req.request().input().name(), "Update name", limits); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckBlobSize(static_cast<int64_t>(req.request().ByteSizeLong()), limits);
      !s.ok()) {
    return s;
  }
  auto* policy = req.mutable_wait_policy();
  if (policy->lifecycle_stage() == enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_UNSPECIFIED) {
    policy->set_lifecycle_stage(kCompleted);
  }
  if (policy->lifecycle_stage() == kAdmitted) {
    return absl::PermissionDeniedError(
        "UpdateWorkflowExecution issued asynchronously and waiting on update admitted is not "
        "supported.");
  }
  if (!enums::UpdateWorkflowExecutionLifecycleStage_IsValid(policy->lifecycle_stage())) {
    return absl::InvalidArgumentError(
        "WaitPolicy.LifecycleStage must be UNSPECIFIED, ACCEPTED or COMPLETED.");
  }
  return absl::OkStatus();
}

// The error of a multi-operation: one status per operation, the others aborted; its code is
// the first failed operation's.
absl::Status MultiOperationFailure(const absl::Status& start, const absl::Status& update) {
  temporal::api::errordetails::v1::MultiOperationExecutionFailure failure;
  absl::StatusCode code = absl::StatusCode::kInvalidArgument;
  bool code_set = false;
  for (const absl::Status* s : {&start, &update}) {
    auto* status = failure.add_statuses();
    if (s->ok()) {
      status->set_code(static_cast<int32_t>(absl::StatusCode::kAborted));
      status->set_message("Operation was aborted.");
      status->add_details()->PackFrom(temporal::api::failure::v1::MultiOperationExecutionAborted());
      continue;
    }
    if (!code_set) {
      code = s->code();
      code_set = true;
    }
    status->set_code(static_cast<int32_t>(s->code()));
    status->set_message(std::string(s->message()));
    s->ForEachPayload([&](absl::string_view type_url, const absl::Cord& value) {
      if (!absl::StartsWith(type_url, kTypeUrlPrefix)) return;  // internal markers
      auto* any = status->add_details();
      any->set_type_url(std::string(type_url));
      any->set_value(std::string(value));
    });
  }
  return WithDetail(absl::Status(code, "Update-with-Start could not be executed."), failure);
}

// An Update- or PollWorkflowExecutionUpdateResponse (or a multi-operation's update part): where
// the update stands.
template <typename Response, typename Probe>
void FillUpdateResponse(Response& out, Probe& probe, const std::string& workflow_id,
                        const std::string& run_id, const std::string& update_id) {
  auto* ref = out.mutable_update_ref();
  ref->mutable_workflow_execution()->set_workflow_id(workflow_id);
  ref->mutable_workflow_execution()->set_run_id(run_id);
  ref->set_update_id(update_id);
  out.set_stage(probe.stage);
  if (probe.outcome) *out.mutable_outcome() = std::move(*probe.outcome);
}

}  // namespace

// One caller waiting for an update's stage: looks again after each commit of the run.
class HistoryEngine::UpdateWait : public std::enable_shared_from_this<UpdateWait> {
 public:
  UpdateWait(HistoryEngine& engine, NamespaceRef ns, RunKey key, std::string update_id,
             Stage wanted, std::optional<wf::UpdateWorkflowExecutionRequest> readmit,
             absl::Time deadline, ProbeDone done)
      : engine_(engine),
        ns_(std::move(ns)),
        key_(std::move(key)),
        update_id_(std::move(update_id)),
        wanted_(wanted),
        readmit_(std::move(readmit)),
        done_(std::move(done)) {
    const absl::Time now = engine_.clock_.Now();
    const absl::Time hard = deadline == absl::InfiniteFuture() ? deadline : deadline - kDeadlineMargin;
    soft_ = now + kLongPoll < hard;
    until_ = std::min(now + kLongPoll, hard);
  }

  void Start() {
    auto self = shared_from_this();
    timer_ = engine_.timers_.Schedule(until_, [self] { self->Expire(); });
    Arm();
  }

 private:
  // Waits for the run's next commit, then looks (after registering: a change in between wakes
  // the wait, so none is missed).
  void Arm() {
    auto self = shared_from_this();
    RunKey key;
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
      key = key_;
    }
    const uint64_t id = engine_.WaitForCommit(key, [self] { self->Arm(); });
    {
      std::lock_guard lock(mu_);
      if (finished_) {
        engine_.DropWait(key.run_id, id);
        return;
      }
      wait_id_ = id;
    }
    Look(key);
  }

  void Look(const RunKey& key) {
    if (engine_.releasing_waiters_.load()) {
      return Finish(absl::UnavailableError("the server is shutting down; update again"));
    }
    absl::StatusOr<UpdateProbe> probe = engine_.ProbeUpdate(key, update_id_, wanted_);
    if (!probe.ok()) return Finish(probe.status());
    if (probe->kind == UpdateProbe::kDone) return Finish(std::move(*probe));
    if (probe->kind == UpdateProbe::kWaiting) return;
    // The run continued before accepting the update: on to the next run.
    engine_.updates_.Withdraw(key.run_id, update_id_);
    RunKey next{key.namespace_id, key.workflow_id, probe->new_run_id};
    if (readmit_) {
      if (absl::Status s = engine_.AdmitUpdate(ns_, next, *readmit_); !s.ok()) return Finish(s);
    }
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
      engine_.DropWait(key.run_id, wait_id_);
      key_ = next;
    }
    Arm();
  }

  void Expire() {
    RunKey key;
    {
      std::lock_guard lock(mu_);
      key = key_;
    }
    if (!soft_) {
      return Finish(absl::DeadlineExceededError(
          "the update did not reach the stage asked for in time: is a worker polling the "
          "workflow's task queue?"));
    }
    // The long poll ends: the stage reached so far, which tells the caller to ask again.
    absl::StatusOr<UpdateProbe> probe = engine_.ProbeUpdate(key, update_id_, wanted_);
    if (probe.ok() && probe->kind == UpdateProbe::kMoved) probe->stage = kAdmitted;
    Finish(std::move(probe));
  }

  void Finish(absl::StatusOr<UpdateProbe> result) {
    RunKey key;
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
      finished_ = true;
      key = key_;
      engine_.DropWait(key.run_id, wait_id_);
    }
    engine_.timers_.Cancel(timer_);
    done_(std::move(result), key.run_id);
  }

  HistoryEngine& engine_;
  const NamespaceRef ns_;
  const std::string update_id_;
  const Stage wanted_;
  const std::optional<wf::UpdateWorkflowExecutionRequest> readmit_;
  const ProbeDone done_;
  bool soft_ = true;        // the wait ends with a long poll's answer, not the caller's deadline
  absl::Time until_;
  TimerThread::Id timer_ = 0;
  std::mutex mu_;
  RunKey key_;              // the run the update is in (moves with continue-as-new)
  uint64_t wait_id_ = 0;
  bool finished_ = false;
};

void HistoryEngine::AwaitUpdate(const NamespaceRef& ns, RunKey key, std::string update_id,
                                Stage wanted, std::optional<wf::UpdateWorkflowExecutionRequest> readmit,
                                absl::Time deadline, ProbeDone done) {
  std::make_shared<UpdateWait>(*this, ns, std::move(key), std::move(update_id), wanted,
                               std::move(readmit), deadline, std::move(done))
      ->Start();
}

void HistoryEngine::UpdateWorkflow(const NamespaceRef& ns, const wf::UpdateWorkflowExecutionRequest& in,
                                   absl::Time deadline, UpdateDone done) {
  wf::UpdateWorkflowExecutionRequest req = in;
  if (absl::Status s = PrepareUpdateRequest(req, limits_); !s.ok()) return done(s);
  const std::string& workflow_id = req.workflow_execution().workflow_id();
  absl::StatusOr<std::string> run_id = ResolveRunId(ns.id, workflow_id, req.workflow_execution().run_id());
  if (!run_id.ok()) return done(run_id.status());
  RunKey key{ns.id, workflow_id, *run_id};
  if (absl::Status s = AdmitUpdate(ns, key, req); !s.ok()) return done(s);
  const std::string update_id = req.request().meta().update_id();
  const Stage wanted = req.wait_policy().lifecycle_stage();
  AwaitUpdate(ns, key, update_id, wanted, std::move(req), deadline,
              [done, workflow_id, update_id](absl::StatusOr<UpdateProbe> probe,
                                             const std::string& run_id) {
                if (!probe.ok()) return done(probe.status());
                wf::UpdateWorkflowExecutionResponse out;
                FillUpdateResponse(out, *probe, workflow_id, run_id, update_id);
                done(std::move(out));
              });
}

void HistoryEngine::PollWorkflowUpdate(
    const NamespaceRef& ns, const wf::PollWorkflowExecutionUpdateRequest& req, absl::Time deadline,
    std::function<void(absl::StatusOr<wf::PollWorkflowExecutionUpdateResponse>)> done) {
  if (!req.has_update_ref()) return done(absl::InvalidArgumentError("UpdateRef is not set on request."));
  const auto& execution = req.update_ref().workflow_execution();
  if (absl::Status s = ValidateIdField(execution.workflow_id(), "WorkflowId", limits_); !s.ok()) {
    return done(s);
  }
  if (absl::Status s = ValidateIdField(req.update_ref().update_id(), "UpdateId", limits_); !s.ok()) {
    return done(s);
  }
  if (execution.run_id().size() > limits_.max_id_length) {
    return done(absl::InvalidArgumentError("RunId exceeds length limit."));
  }
  absl::StatusOr<std::string> run_id = ResolveRunId(ns.id, execution.workflow_id(), execution.run_id());
  if (!run_id.ok()) return done(run_id.status());
  RunKey key{ns.id, execution.workflow_id(), *run_id};
  // Without a stage, the answer is where the update stands now.
  Stage wanted = req.wait_policy().lifecycle_stage();
  if (!enums::UpdateWorkflowExecutionLifecycleStage_IsValid(wanted) ||
      wanted == enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_UNSPECIFIED) {
    wanted = kAdmitted;
  }
  // An update unknown here is NOT_FOUND at once (Temporal's "update %q not found").
  absl::StatusOr<UpdateProbe> first = ProbeUpdate(key, req.update_ref().update_id(), wanted);
  if (!first.ok()) return done(first.status());
  const std::string workflow_id = execution.workflow_id();
  const std::string update_id = req.update_ref().update_id();
  auto answer = [done, workflow_id, update_id](absl::StatusOr<UpdateProbe> probe,
                                               const std::string& run) {
    if (!probe.ok()) return done(probe.status());
    wf::PollWorkflowExecutionUpdateResponse out;
    FillUpdateResponse(out, *probe, workflow_id, run, update_id);
    done(std::move(out));
  };
  if (first->kind == UpdateProbe::kDone || wanted == kAdmitted) return answer(std::move(first), key.run_id);
  AwaitUpdate(ns, key, update_id, wanted, std::nullopt, deadline, std::move(answer));
}

void HistoryEngine::ExecuteMultiOperation(
    const NamespaceRef& ns, const wf::ExecuteMultiOperationRequest& req, absl::Time deadline,
    std::function<void(absl::StatusOr<wf::ExecuteMultiOperationResponse>)> done) {
  if (req.operations_size() != 2 || !req.operations(0).has_start_workflow() ||
      !req.operations(1).has_update_workflow()) {
    return done(absl::InvalidArgumentError("Operations have to be exactly [Start, Update]."));
  }
  wf::StartWorkflowExecutionRequest start = req.operations(0).start_workflow();
  wf::UpdateWorkflowExecutionRequest update = req.operations(1).update_workflow();
  const absl::Time now = clock_.Now();
  absl::Status start_error, update_error;
  if (!start.namespace_().empty() && start.namespace_() != ns.name) {
    start_error = absl::InvalidArgumentError("Operation namespace did not match request's namespace.");
  } else if (!start.cron_schedule().empty()) {
    start_error = absl::InvalidArgumentError("CronSchedule is not allowed.");
  } else if (start.request_eager_execution()) {
    start_error = absl::InvalidArgumentError("RequestEagerExecution is not supported.");
  } else if (start.workflow_start_delay().seconds() > 0 || start.workflow_start_delay().nanos() > 0) {
    start_error = absl::InvalidArgumentError("WorkflowStartDelay is not supported.");
  } else if (absl::StatusOr<absl::Duration> checked = ValidateStart(ns, start, now); !checked.ok()) {
    start_error = checked.status();
  }
  if (!update.namespace_().empty() && update.namespace_() != ns.name) {
    update_error = absl::InvalidArgumentError("Operation namespace did not match request's namespace.");
  } else if (absl::Status s = PrepareUpdateRequest(update, limits_); !s.ok()) {
    update_error = s;
  } else if (!update.first_execution_run_id().empty()) {
    update_error = absl::InvalidArgumentError("FirstExecutionRunId is not allowed.");
  } else if (!update.workflow_execution().run_id().empty()) {
    update_error = absl::InvalidArgumentError("RunId is not allowed.");
  } else if (start_error.ok() && update.workflow_execution().workflow_id() != start.workflow_id()) {
    update_error = absl::InvalidArgumentError("WorkflowId is not consistent with previous operation(s).");
  }
  if (!start_error.ok() || !update_error.ok()) {
    return done(MultiOperationFailure(start_error, update_error));
  }

  absl::StatusOr<wf::StartWorkflowExecutionResponse> started;
  {
    std::shared_ptr<std::mutex> id_lock = IdLock(ns.id, start.workflow_id());
    std::lock_guard lock(*id_lock);
    started = StartLocked(ns, start, std::nullopt, nullptr, now, absl::ZeroDuration(),
                          &update.request());
  }
  if (!started.ok()) return done(MultiOperationFailure(started.status(), absl::OkStatus()));
  RunKey key{ns.id, start.workflow_id(), started->run_id()};
  if (!started->started()) {
    // The workflow runs already (USE_EXISTING, or this very start retried): the update goes
    // to that run, deduplicated by its id.
    if (absl::Status s = AdmitUpdate(ns, key, update); !s.ok()) {
      return done(MultiOperationFailure(absl::OkStatus(), s));
    }
  }
  const std::string workflow_id = start.workflow_id();
  const std::string update_id = update.request().meta().update_id();
  const Stage wanted = update.wait_policy().lifecycle_stage();
  wf::StartWorkflowExecutionResponse start_response = *started;
  AwaitUpdate(ns, key, update_id, wanted, std::move(update), deadline,
              [done, workflow_id, update_id, start_response](absl::StatusOr<UpdateProbe> probe,
                                                             const std::string& run_id) {
                if (!probe.ok()) return done(MultiOperationFailure(absl::OkStatus(), probe.status()));
                wf::ExecuteMultiOperationResponse out;
                *out.add_responses()->mutable_start_workflow() = start_response;
                FillUpdateResponse(*out.add_responses()->mutable_update_workflow(), *probe,
                                   workflow_id, run_id, update_id);
                done(std::move(out));
              });
}

absl::Status HistoryEngine::AdmitUpdate(const NamespaceRef& ns, const RunKey& key,
                                        const wf::UpdateWorkflowExecutionRequest& req) {
  const std::string& id = req.request().meta().update_id();
  bool admitted_here = false;
  std::optional<persistence::TaskQueueTask> speculative;  // the task to queue, if one was made
  absl::Status s = Mutate(ns, key, [&](RunTransaction& tx) -> absl::Status {
    const MutableStateRecord& state = tx.state();
    if (!req.first_execution_run_id().empty() &&
        state.execution().first_execution_run_id() != req.first_execution_run_id()) {
      return absl::NotFoundError("workflow execution not found");
    }
    if (state.updates().contains(id)) return NothingToWrite();  // accepted already
    absl::Status admitted =
        updates_.Admit(key.run_id, req.request(),
                       [&](const UpdateRegistry::Seen& seen) { return CheckAdmission(tx, seen); });
    if (!admitted.ok()) return admitted;
    admitted_here = true;
    // A pending task carries it when it starts; a started one is followed by another.
    if (tx.WorkflowTaskPending()) return NothingToWrite();
    if (state.last_completed_workflow_task_started_event_id() != 0) {
      speculative = MakeSpeculative(ns, tx);
      return NothingToWrite();
    }
    tx.ScheduleWorkflowTask();  // the run's first task is still to come (a start delay)
    return absl::OkStatus();
  });
  if (s.ok() && speculative) task_sink_(std::move(*speculative));
  // The task that would have carried it was not written: the update was never admitted.
  if (!s.ok() && admitted_here) updates_.Withdraw(key.run_id, id);
  return s;
}

absl::Status HistoryEngine::CheckAdmission(const RunTransaction& tx,
                                           const UpdateRegistry::Seen& seen) {
  const MutableStateRecord& state = tx.state();
  if (seen.admitted) return NothingToWrite();
  if (!tx.IsOpen()) {
    // A closed run keeps answering for the updates it had; a new one is refused.
    if (seen.rejected) return NothingToWrite();
    return absl::NotFoundError("workflow execution already completed");
  }
  if (state.workflow_task().attempt() >= kFailingTaskAttempt) {
    return WithDetail(absl::FailedPreconditionError(
                          "Unable to perform workflow execution update due to Workflow Task in "
                          "failed state."),
                      temporal::api::errordetails::v1::WorkflowNotReadyFailure());
  }
  size_t in_flight = seen.admitted_in_run;
  for (const auto& [_, info] : state.updates()) in_flight += info.completed_event_id() == 0;
  if (in_flight >= static_cast<size_t>(limits_.in_flight_updates)) {
    temporal::api::errordetails::v1::ResourceExhaustedFailure detail;
    detail.set_cause(enums::RESOURCE_EXHAUSTED_CAUSE_CONCURRENT_LIMIT);
    detail.set_scope(enums::RESOURCE_EXHAUSTED_SCOPE_NAMESPACE);
    return WithDetail(absl::ResourceExhaustedError(absl::StrCat(
                          "limit on number of concurrent in-flight updates has been reached (",
                          limits_.in_flight_updates, ")")),
                      detail);
  }
  if (state.updates_size() + seen.admitted_in_run >= static_cast<size_t>(limits_.total_updates)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "The limit on the total number of distinct updates in this workflow has been reached (",
        limits_.total_updates,
        "). Make sure any duplicate updates share an Update ID so the server can deduplicate "
        "them, and consider rejecting updates that you aren't going to process. You can also "
        "Continue-as-New to avoid this; we recommend you check Continue-as-New Suggested in "
        "your Workflow."));
  }
  return absl::OkStatus();
}

absl::StatusOr<HistoryEngine::UpdateProbe> HistoryEngine::ProbeUpdate(const RunKey& key,
                                                                      const std::string& id,
                                                                      Stage wanted) {
  absl::StatusOr<MutableStateRecord> state = ReadRun(key);
  if (!state.ok()) return state.status();
  const bool running = state->execution().status() == enums::WORKFLOW_EXECUTION_STATUS_RUNNING;
  UpdateProbe probe;
  if (auto it = state->updates().find(id); it != state->updates().end()) {
    if (const int64_t completed = it->second.completed_event_id(); completed != 0) {
      absl::StatusOr<std::vector<HistoryEvent>> events =
          store_.ReadEvents(key.run_id, completed, completed + 1, 1);
      if (!events.ok()) return events.status();
      if (events->empty()) return absl::InternalError("the update's completion event is missing");
      probe.kind = UpdateProbe::kDone;
      probe.stage = kCompleted;
      probe.outcome = events->front().workflow_execution_update_completed_event_attributes().outcome();
      return probe;
    }
    probe.stage = kAccepted;
    if (!running) {
      probe.kind = UpdateProbe::kDone;
      probe.stage = kCompleted;
      *probe.outcome.emplace().mutable_failure() = AcceptedUpdateCompletedWorkflowFailure();
      return probe;
    }
    probe.kind = wanted <= kAccepted ? UpdateProbe::kDone : UpdateProbe::kWaiting;
    return probe;
  }
  UpdateRegistry::Standing standing = updates_.StandingOf(key.run_id, id);
  if (standing.rejection.has_value()) {
    probe.kind = UpdateProbe::kDone;
    probe.stage = kCompleted;
    *probe.outcome.emplace().mutable_failure() = std::move(*standing.rejection);
    return probe;
  }
  if (standing.admitted) {
    probe.stage = kAdmitted;
    if (running) {
      probe.kind = wanted <= kAdmitted ? UpdateProbe::kDone : UpdateProbe::kWaiting;
      return probe;
    }
    if (!state->execution().new_execution_run_id().empty()) {
      probe.kind = UpdateProbe::kMoved;
      probe.new_run_id = state->execution().new_execution_run_id();
      return probe;
    }
    return absl::NotFoundError("workflow update was aborted by closing workflow");
  }
  if (!running) return absl::NotFoundError("workflow execution already completed");
  return absl::NotFoundError(absl::StrCat("update \"", id, "\" not found"));
}

absl::Status HistoryEngine::ApplyUpdateMessage(RunTransaction& tx, const Message& m,
                                               UpdateEffects& effects) {
  const std::string& id = m.protocol_instance_id();
  if (absl::Status s = ValidateIdField(id, "ProtocolInstanceId", limits_); !s.ok()) return s;
  if (absl::Status s = CheckBlobSize(static_cast<int64_t>(m.body().ByteSizeLong()), limits_); !s.ok()) {
    return s;
  }
  auto* updates = tx.state().mutable_updates();
  const bool adds_event = m.body().Is<update::Acceptance>() || m.body().Is<update::Response>();
  if (adds_event && !tx.IsOpen()) {
    return absl::InvalidArgumentError(
        "an update message follows the command that closed the workflow; close commands must be "
        "last");
  }
  if (m.body().Is<update::Acceptance>()) {
    update::Acceptance acceptance;
    if (!m.body().UnpackTo(&acceptance)) return absl::InvalidArgumentError("unable to unmarshal update.Acceptance");
    if (acceptance.accepted_request_message_id().empty()) {
      return absl::InvalidArgumentError("invalid *update.Acceptance: accepted_request_message_id is not set");
    }
    if (acceptance.accepted_request_sequencing_event_id() == 0) {
      return absl::InvalidArgumentError(
          "invalid *update.Acceptance: accepted_request_sequencing_event_id is not set");
    }
    if (updates->contains(id) || effects.rejected.contains(id)) {
      return InvalidTransition(id, "Acceptance", "Accepted");
    }
    std::optional<update::Request> request = updates_.Admitted(tx.execution().run_id(), id);
    if (!request.has_value()) {
      if (!acceptance.has_accepted_request()) return UpdateNotOnServer(id);
      request = acceptance.accepted_request();  // lost here (a restart): the worker has it
    }
    HistoryEvent& e = tx.Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
    auto* attrs = e.mutable_workflow_execution_update_accepted_event_attributes();
    attrs->set_protocol_instance_id(id);
    attrs->set_accepted_request_message_id(absl::StrCat(id, "/request"));
    attrs->set_accepted_request_sequencing_event_id(acceptance.accepted_request_sequencing_event_id());
    *attrs->mutable_accepted_request() = std::move(*request);
    (*updates)[id].set_accepted_event_id(e.event_id());
    effects.accepted.insert(id);
    return absl::OkStatus();
  }
  if (m.body().Is<update::Rejection>()) {
    update::Rejection rejection;
    if (!m.body().UnpackTo(&rejection)) return absl::InvalidArgumentError("unable to unmarshal update.Rejection");
    if (updates->contains(id)) return InvalidTransition(id, "Rejection", "Accepted");
    effects.rejected[id] = rejection.failure();
    return absl::OkStatus();
  }
  if (m.body().Is<update::Response>()) {
    update::Response response;
    if (!m.body().UnpackTo(&response)) return absl::InvalidArgumentError("unable to unmarshal update.Response");
    if (response.meta().update_id() != id) {
      return absl::InvalidArgumentError("invalid *update.Response: meta.update_id != protocol_instance_id");
    }
    if (!response.has_outcome()) return absl::InvalidArgumentError("invalid *update.Response: outcome is not set");
    auto it = updates->find(id);
    if (it == updates->end()) {
      if (updates_.Admitted(tx.execution().run_id(), id).has_value()) {
        return InvalidTransition(id, "Response", "Sent");
      }
      return UpdateNotOnServer(id);
    }
    if (it->second.completed_event_id() != 0) return InvalidTransition(id, "Response", "Completed");
    HistoryEvent& e = tx.Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
    auto* attrs = e.mutable_workflow_execution_update_completed_event_attributes();
    *attrs->mutable_meta() = response.meta();
    attrs->set_accepted_event_id(it->second.accepted_event_id());
    *attrs->mutable_outcome() = response.outcome();
    it->second.set_completed_event_id(e.event_id());
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unsupported protocol message body ", absl::ClippedSubstr(m.body().type_url(), 0, 200),
      ": only update messages are"));
}

bool HistoryEngine::FinishUpdateMessages(RunTransaction& tx, int64_t started_id, bool heartbeat,
                                         UpdateEffects& effects) {
  const UpdateRegistry::Unanswered unanswered =
      updates_.UnansweredBy(tx.execution().run_id(), started_id, effects);
  if (!heartbeat && tx.IsOpen()) {
    // Delivered and not answered: an SDK without updates. (A closing run aborts them.)
    for (const std::string& id : unanswered.delivered) effects.rejected[id] = UnprocessedUpdateFailure();
  }
  return unanswered.undelivered && tx.IsOpen();
}

void HistoryEngine::PublishUpdateEffects(const std::string& run_id, const UpdateEffects& effects) {
  if (effects.accepted.empty() && effects.rejected.empty()) return;
  updates_.Publish(run_id, effects);
  // The waiters looked when the commit woke them, before the registry knew: again.
  NotifyHistoryWaiters(run_id);
}

persistence::TaskQueueTask HistoryEngine::MakeSpeculative(const NamespaceRef& ns,
                                                          RunTransaction& tx) {
  // To the sticky queue when the run has one, as any workflow task. The change that makes it
  // is not written, so neither is the durable schedule-to-start timer it comes with: an
  // in-memory one (the task's `timeout` until a worker takes it) writes the task when it is
  // due, and the durable timer written with it (MaterializeSpeculative), due by then, moves
  // it to the normal queue.
  tx.ScheduleWorkflowTask(1);
  SpeculativeTask task;
  task.scheduled = tx.new_events().back();
  task.info = tx.state().workflow_task();
  persistence::TaskQueueTask queued =
      task.info.sticky() ? tx.memory_tasks().back() : tx.new_tasks().back();
  queued.task.set_speculative(true);
  if (task.info.sticky()) {
    const RunKey key{tx.execution().namespace_id(), tx.execution().workflow_id(),
                     tx.execution().run_id()};
    task.timeout = timers_.Schedule(
        tx.now() + FromProtoDuration(tx.execution().sticky_schedule_to_start_timeout()),
        [this, ns, key] { TimeOutSpeculative(ns, key); });
  }
  tx.KeepSpeculative(std::move(task));
  return queued;
}

void HistoryEngine::TimeOutSpeculative(const NamespaceRef& ns, const RunKey& key) {
  absl::Status s = Mutate(ns, key, [](RunTransaction& tx) {
    return tx.speculative_used() ? absl::OkStatus() : NothingToWrite();
  });
  if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
    // Not written (the database): try again shortly, or the task would never time out.
    timers_.Schedule(clock_.Now() + absl::Seconds(1), [this, ns, key] { TimeOutSpeculative(ns, key); });
  }
}

}  // namespace tock::server::history
