// Queries through legacy query tasks (reference/sdk_protocol.md §4, rules 1, 2, 4 and 6):
// a query waits while the run has a workflow task scheduled or started, then goes to the
// workflow's task queue as a query task (in memory only: a query is not durable) carrying
// the full history; the worker answers with RespondQueryTaskCompleted.
#include "absl/strings/str_cat.h"
#include "lib/common/ids.h"
#include "lib/common/status.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/task_token.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
constexpr absl::Duration kMaxQueryWait = absl::Seconds(30);

bool Rejects(enums::QueryRejectCondition condition, enums::WorkflowExecutionStatus status) {
  if (status == enums::WORKFLOW_EXECUTION_STATUS_RUNNING) return false;
  return condition == enums::QUERY_REJECT_CONDITION_NOT_OPEN ||
         (condition == enums::QUERY_REJECT_CONDITION_NOT_COMPLETED_CLEANLY &&
          status != enums::WORKFLOW_EXECUTION_STATUS_COMPLETED);
}

}  // namespace

absl::StatusOr<MutableStateRecord> HistoryEngine::ReadRun(const RunKey& key) {
  std::shared_ptr<RunEntry> entry = Entry(key.run_id);
  std::lock_guard lock(entry->mu);
  if (const MutableStateRecord* cached = Cached(*entry)) return *cached;
  absl::StatusOr<MutableStateRecord> loaded =
      store_.GetRun(key.namespace_id, key.workflow_id, key.run_id);
  if (!loaded.ok() && loaded.status().code() == absl::StatusCode::kNotFound) {
    return WithDetail(absl::NotFoundError(absl::StrCat("Workflow execution not found. WorkflowId: ",
                                                       key.workflow_id, ", RunId: ", key.run_id, ".")),
                      temporal::api::errordetails::v1::NotFoundFailure());
  }
  return loaded;
}

uint64_t HistoryEngine::WaitForCommit(const RunKey& key, std::function<void()> wake) {
  const int32_t shard_id = shards_.ShardFor(key.namespace_id, key.workflow_id);
  std::lock_guard lock(waiters_mu_);
  uint64_t id = next_wait_id_++;
  RunWaiters& waiters = history_waiters_[key.run_id];
  waiters.shard_id = shard_id;
  waiters.wakes.emplace(id, std::move(wake));
  return id;
}

void HistoryEngine::DropWait(const std::string& run_id, uint64_t id) {
  std::lock_guard lock(waiters_mu_);
  auto it = history_waiters_.find(run_id);
  if (it == history_waiters_.end()) return;
  it->second.wakes.erase(id);
  if (it->second.wakes.empty()) history_waiters_.erase(it);
}

void HistoryEngine::QueryWorkflow(
    const NamespaceRef& ns, const wf::QueryWorkflowRequest& req, absl::Time deadline,
    std::function<void(absl::StatusOr<wf::QueryWorkflowResponse>)> done) {
  if (req.query().query_type().empty()) {
    return done(absl::InvalidArgumentError("QueryType is not set on request."));
  }
  absl::StatusOr<std::string> run_id =
      ResolveRunId(ns.id, req.execution().workflow_id(), req.execution().run_id());
  if (!run_id.ok()) return done(run_id.status());
  DispatchQuery(ns, {ns.id, req.execution().workflow_id(), *run_id}, req,
                std::min(deadline, clock_.Now() + kMaxQueryWait), std::move(done));
}

void HistoryEngine::DispatchQuery(
    const NamespaceRef& ns, const RunKey& key, const wf::QueryWorkflowRequest& req,
    absl::Time deadline, std::function<void(absl::StatusOr<wf::QueryWorkflowResponse>)> done) {
  if (releasing_waiters_.load()) {
    return done(absl::UnavailableError("the server is shutting down; query again"));
  }
  absl::StatusOr<MutableStateRecord> state = ReadRun(key);
  if (!state.ok()) return done(state.status());
  const auto status = state->execution().status();
  if (Rejects(req.query_reject_condition(), status)) {
    wf::QueryWorkflowResponse out;
    out.mutable_query_rejected()->set_status(status);
    return done(out);
  }
  if (clock_.Now() >= deadline) {
    return done(absl::DeadlineExceededError(
        "the query was not answered in time: is a worker polling the workflow's task queue?"));
  }
  if (state->workflow_task().scheduled_event_id() != 0 || HasSpeculative(key.run_id) ||
      state->last_completed_workflow_task_started_event_id() == 0) {
    // A workflow task is in flight (or none ever ran): ask again after the next commit.
    auto once = std::make_shared<std::atomic<bool>>(false);
    auto wait_id = std::make_shared<std::atomic<uint64_t>>(0);
    auto again = [this, ns, key, req, deadline, done, once, wait_id] {
      if (once->exchange(true)) return;
      DropWait(key.run_id, wait_id->load());
      DispatchQuery(ns, key, req, deadline, done);
    };
    *wait_id = WaitForCommit(key, again);
    timers_.Schedule(deadline, again);
    // A commit between the read above and the registration would be missed: look again.
    absl::StatusOr<MutableStateRecord> now = ReadRun(key);
    if (now.ok() && now->next_event_id() != state->next_event_id()) again();
    return;
  }

  const std::string query_id = NewUuid();
  TimerThread::Id timer = timers_.Schedule(deadline, [this, query_id] {
    std::function<void(absl::StatusOr<wf::QueryWorkflowResponse>)> expired;
    {
      std::lock_guard lock(queries_mu_);
      auto it = queries_.find(query_id);
      if (it == queries_.end()) return;
      expired = std::move(it->second.done);
      queries_.erase(it);
    }
    expired(absl::DeadlineExceededError(
        "the query was not answered in time: is a worker polling the workflow's task queue?"));
  });
  {
    std::lock_guard lock(queries_mu_);
    queries_[query_id] = PendingQuery{std::move(done), req.query(), key, timer};
  }
  persistence::TaskQueueTask task;
  task.namespace_id = ns.id;
  task.task_queue = state->execution().task_queue();
  task.kind = persistence::TaskKind::kWorkflow;
  task.task.set_kind(tock::persistence::v1::TransferTask::KIND_QUERY);
  task.task.set_namespace_id(ns.id);
  task.task.set_workflow_id(key.workflow_id);
  task.task.set_run_id(key.run_id);
  task.task.set_query_id(query_id);
  task_sink_(std::move(task));
}

absl::StatusOr<wf::PollWorkflowTaskQueueResponse> HistoryEngine::StartQueryTask(
    const NamespaceRef& ns, const persistence::TaskQueueTask& task) {
  temporal::api::query::v1::WorkflowQuery query;
  RunKey key;
  {
    std::lock_guard lock(queries_mu_);
    auto it = queries_.find(task.task.query_id());
    if (it == queries_.end()) return absl::NotFoundError("Query not found.");
    query = it->second.query;
    key = it->second.key;
  }
  absl::StatusOr<MutableStateRecord> state = ReadRun(key);
  if (!state.ok()) return state.status();
  absl::StatusOr<std::vector<HistoryEvent>> events = ReadHistory(*state);
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

absl::Status HistoryEngine::RespondQueryTaskCompleted(
    const NamespaceRef& ns, const wf::RespondQueryTaskCompletedRequest& req) {
  absl::StatusOr<TaskToken> token = DecodeTaskTokenFor(req.task_token(), ns.id);
  if (!token.ok()) return token.status();
  PendingQuery pending;
  {
    std::lock_guard lock(queries_mu_);
    auto it = queries_.find(token->query_id());
    if (token->query_id().empty() || it == queries_.end()) {
      return absl::NotFoundError("Query not found.");
    }
    pending = std::move(it->second);
    queries_.erase(it);
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

}  // namespace tock::server::history
