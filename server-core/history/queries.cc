#include "server-core/history/versioning.h"
#include "server-core/history/queries.h"

#include "absl/strings/str_cat.h"
#include "lib/common/ids.h"
#include "lib/common/status.h"
#include "server-core/history/task_token.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
constexpr absl::Duration kMaxQueryWait = absl::Seconds(30);
constexpr char kNotAnswered[] =
    "the query was not answered in time: is a worker polling the workflow's task queue?";

bool Rejects(enums::QueryRejectCondition condition, enums::WorkflowExecutionStatus status) {
  if (status == enums::WORKFLOW_EXECUTION_STATUS_RUNNING) return false;
  return condition == enums::QUERY_REJECT_CONDITION_NOT_OPEN ||
         (condition == enums::QUERY_REJECT_CONDITION_NOT_COMPLETED_CLEANLY &&
          status != enums::WORKFLOW_EXECUTION_STATUS_COMPLETED);
}

}  // namespace

void QueryDispatcher::Query(const NamespaceRef& ns, const RunKey& key,
                            const wf::QueryWorkflowRequest& req, absl::Time deadline, Done done) {
  Dispatch(ns, key, req, std::min(deadline, clock_.Now() + kMaxQueryWait), std::move(done));
}

void QueryDispatcher::Dispatch(const NamespaceRef& ns, const RunKey& key,
                               const wf::QueryWorkflowRequest& req, absl::Time deadline,
                               Done done) {
  if (engine_.ShuttingDown()) {
    return done(absl::UnavailableError("the server is shutting down; query again"));
  }
  absl::StatusOr<MutableStateRecord> state = engine_.ReadRun(key);
  if (!state.ok()) return done(state.status());
  const auto status = state->execution().status();
  if (Rejects(req.query_reject_condition(), status)) {
    wf::QueryWorkflowResponse out;
    out.mutable_query_rejected()->set_status(status);
    return done(out);
  }
  if (clock_.Now() >= deadline) return done(absl::DeadlineExceededError(kNotAnswered));
  if (state->workflow_task().scheduled_event_id() != 0 || engine_.HasSpeculative(key.run_id) ||
      state->last_completed_workflow_task_started_event_id() == 0) {
    // A workflow task is in flight (or none ever ran): ask again after the next commit.
    engine_.AfterNextCommit(key, state->next_event_id(), deadline,
                            [this, ns, key, req, deadline, done](bool) {
                              Dispatch(ns, key, req, deadline, done);
                            });
    return;
  }
  SendTask(ns, key, *state, req, deadline, std::move(done));
}

void QueryDispatcher::SendTask(const NamespaceRef& ns, const RunKey& key,
                               const MutableStateRecord& state,
                               const wf::QueryWorkflowRequest& req, absl::Time deadline,
                               Done done) {
  const std::string query_id = NewUuid();
  TimerThread::Id timer = timers_.Schedule(deadline, [this, query_id] {
    Done expired;
    {
      std::lock_guard lock(mu_);
      auto it = pending_.find(query_id);
      if (it == pending_.end()) return;
      expired = std::move(it->second.done);
      pending_.erase(it);
    }
    expired(absl::DeadlineExceededError(kNotAnswered));
  });
  {
    std::lock_guard lock(mu_);
    pending_[query_id] = Pending{std::move(done), req.query(), key, timer};
  }
  // To the worker that has the run cached (its sticky queue) when there is one: matching
  // sends it to the normal queue if that worker is gone.
  const auto& exec = state.execution();
  persistence::TaskQueueTask task;
  task.namespace_id = ns.id;
  task.task_queue = exec.sticky_task_queue().empty() ? exec.task_queue() : exec.sticky_task_queue();
  task.kind = persistence::TaskKind::kWorkflow;
  task.task.set_kind(tock::persistence::v1::TransferTask::KIND_QUERY);
  task.task.set_namespace_id(ns.id);
  task.task.set_workflow_id(key.workflow_id);
  task.task.set_run_id(key.run_id);
  task.task.set_task_queue(exec.task_queue());
  task.task.set_sticky(!exec.sticky_task_queue().empty());
  task.task.set_query_id(query_id);
  // Answered by a worker of the run's version (deployments/deployment_routing.h).
  if (EffectiveVersion v = EffectiveVersionOf(exec); !v.version.empty()) {
    task.task.set_deployment_version(std::move(v.version));
    task.task.set_pinned(v.pinned);
  }
  engine_.QueueTask(std::move(task));
}

absl::StatusOr<wf::PollWorkflowTaskQueueResponse> QueryDispatcher::StartTask(
    const NamespaceRef& ns, const persistence::TaskQueueTask& task) {
  temporal::api::query::v1::WorkflowQuery query;
  RunKey key;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(task.task.query_id());
    if (it == pending_.end()) return absl::NotFoundError("Query not found.");
    query = it->second.query;
    key = it->second.key;
  }
  absl::StatusOr<MutableStateRecord> state = engine_.ReadRun(key);
  if (!state.ok()) return state.status();
  absl::StatusOr<std::vector<HistoryEvent>> events = engine_.ReadHistory(*state);
  if (!events.ok()) return events.status();
  const auto& exec = state->execution();
  TaskToken token;
  token.set_namespace_id(ns.id);
  token.set_workflow_id(key.workflow_id);
  token.set_run_id(key.run_id);
  token.set_query_id(task.task.query_id());
  wf::PollWorkflowTaskQueueResponse out;
  out.set_task_token(EncodeTaskToken(token));
  out.mutable_workflow_execution()->set_workflow_id(exec.workflow_id());
  out.mutable_workflow_execution()->set_run_id(exec.run_id());
  out.mutable_workflow_type()->set_name(exec.workflow_type());
  out.set_previous_started_event_id(state->last_completed_workflow_task_started_event_id());
  out.set_started_event_id(0);
  out.set_attempt(1);
  for (auto& e : *events) *out.mutable_history()->add_events() = std::move(e);
  *out.mutable_query() = query;
  out.mutable_workflow_execution_task_queue()->set_name(exec.task_queue());
  out.mutable_workflow_execution_task_queue()->set_kind(enums::TASK_QUEUE_KIND_NORMAL);
  return out;
}

absl::Status QueryDispatcher::Complete(
    const NamespaceRef& ns, const wf::RespondQueryTaskCompletedRequest& req) {
  absl::StatusOr<TaskToken> token = DecodeTaskTokenFor(req.task_token(), ns.id);
  if (!token.ok()) return token.status();
  Pending pending;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(token->query_id());
    if (token->query_id().empty() || it == pending_.end()) {
      return absl::NotFoundError("Query not found.");
    }
    pending = std::move(it->second);
    pending_.erase(it);
  }
  timers_.Cancel(pending.timer);
  if (req.completed_type() == enums::QUERY_RESULT_TYPE_ANSWERED) {
    wf::QueryWorkflowResponse out;
    *out.mutable_query_result() = req.query_result();
    pending.done(out);
  } else {
    temporal::api::errordetails::v1::QueryFailedFailure detail;
    if (req.has_failure()) *detail.mutable_failure() = req.failure();
    pending.done(WithDetail(absl::InvalidArgumentError(req.error_message()), detail));
  }
  return absl::OkStatus();
}

void QueryDispatcher::ReleaseAll() {
  std::vector<Pending> released;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, q] : pending_) released.push_back(std::move(q));
    pending_.clear();
  }
  for (Pending& q : released) {
    timers_.Cancel(q.timer);
    q.done(absl::UnavailableError("the server is shutting down; query again"));
  }
}

}  // namespace tock::server::history
