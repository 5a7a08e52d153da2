// What clients do to a run from outside: signal, cancel, terminate, describe, read history.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "lib/common/status.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/task_token.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
// One page carries up to 10,000 events: fewer round trips for long histories (a page stays
// well under the 128 MiB message limit the SDKs accept).
constexpr int32_t kMaxHistoryPage = 10000;
constexpr absl::Duration kHistoryLongPoll = absl::Seconds(20);

absl::Status Closed() {
  return WithDetail(absl::NotFoundError("Workflow execution already completed."),
                    temporal::api::errordetails::v1::NotFoundFailure());
}

absl::Status CheckFirstRun(const RunTransaction& tx, const std::string& first_execution_run_id) {
  if (!first_execution_run_id.empty() &&
      tx.execution().first_execution_run_id() != first_execution_run_id) {
    return WithDetail(absl::NotFoundError("Workflow execution not found for that first run id."),
                      temporal::api::errordetails::v1::NotFoundFailure());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status HistoryEngine::SignalWorkflow(const NamespaceRef& ns,
                                           const wf::SignalWorkflowExecutionRequest& req) {
  if (absl::Status s = ValidateSignalFields(req.signal_name(), req.input(), req.header(), limits_);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> run_id =
      ResolveRunId(ns.id, req.workflow_execution().workflow_id(), req.workflow_execution().run_id());
  if (!run_id.ok()) return run_id.status();
  return Mutate(ns, {ns.id, req.workflow_execution().workflow_id(), *run_id},
                [&](RunTransaction& tx) -> absl::Status {
    if (!tx.IsOpen()) {
      // A retry of a signal the run took before it closed (its answer was lost, e.g. to a
      // restart) succeeded then; any other signal is too late. Nothing is written.
      if (SeenRequest(tx.state(), req.request_id())) return NothingToWrite();
      return Closed();
    }
    if (SeenRequest(tx.state(), req.request_id())) return absl::OkStatus();
    HistoryEvent& e = tx.AppendOrBuffer(enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    auto* attrs = e.mutable_workflow_execution_signaled_event_attributes();
    attrs->set_signal_name(req.signal_name());
    *attrs->mutable_input() = req.input();
    attrs->set_identity(req.identity());
    *attrs->mutable_header() = req.header();
    attrs->set_request_id(req.request_id());
    tx.ScheduleWorkflowTask();
    return absl::OkStatus();
  });
}

absl::Status HistoryEngine::RequestCancelWorkflow(
    const NamespaceRef& ns, const wf::RequestCancelWorkflowExecutionRequest& req) {
  absl::StatusOr<std::string> run_id =
      ResolveRunId(ns.id, req.workflow_execution().workflow_id(), req.workflow_execution().run_id());
  if (!run_id.ok()) return run_id.status();
  return Mutate(ns, {ns.id, req.workflow_execution().workflow_id(), *run_id},
                [&](RunTransaction& tx) -> absl::Status {
    if (absl::Status s = CheckFirstRun(tx, req.first_execution_run_id()); !s.ok()) return s;
    if (!tx.IsOpen()) return Closed();
    if (tx.execution().cancel_requested()) return absl::OkStatus();  // idempotent
    HistoryEvent& e = tx.AppendOrBuffer(enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED);
    auto* attrs = e.mutable_workflow_execution_cancel_requested_event_attributes();
    attrs->set_cause(req.reason());
    attrs->set_identity(req.identity());
    tx.state().mutable_execution()->set_cancel_requested(true);
    tx.state().mutable_execution()->set_cancel_request_id(req.request_id());
    tx.ScheduleWorkflowTask();
    return absl::OkStatus();
  });
}

absl::Status HistoryEngine::TerminateWorkflow(const NamespaceRef& ns,
                                              const wf::TerminateWorkflowExecutionRequest& req) {
  absl::StatusOr<std::string> run_id =
      ResolveRunId(ns.id, req.workflow_execution().workflow_id(), req.workflow_execution().run_id());
  if (!run_id.ok()) return run_id.status();
  return Mutate(ns, {ns.id, req.workflow_execution().workflow_id(), *run_id},
                [&](RunTransaction& tx) -> absl::Status {
    if (absl::Status s = CheckFirstRun(tx, req.first_execution_run_id()); !s.ok()) return s;
    if (!tx.IsOpen()) return Closed();
    tx.Terminate(req.reason(), req.details(), req.identity());
    return absl::OkStatus();
  });
}

absl::Status HistoryEngine::ResetStickyTaskQueue(
    const NamespaceRef& ns, const temporal::api::common::v1::WorkflowExecution& execution) {
  if (execution.workflow_id().empty()) {
    return absl::InvalidArgumentError("WorkflowId is not set on request.");
  }
  absl::StatusOr<std::string> run_id =
      ResolveRunId(ns.id, execution.workflow_id(), execution.run_id());
  if (!run_id.ok()) return run_id.status();
  return Mutate(ns, {ns.id, execution.workflow_id(), *run_id}, [](RunTransaction& tx) {
    if (tx.execution().sticky_task_queue().empty()) return NothingToWrite();
    tx.ClearSticky();
    return absl::OkStatus();
  });
}

absl::Status HistoryEngine::DeleteWorkflow(const NamespaceRef& ns,
                                           const wf::DeleteWorkflowExecutionRequest& req) {
  absl::StatusOr<std::string> run_id = ResolveRunId(ns.id, req.workflow_execution().workflow_id(),
                                                    req.workflow_execution().run_id());
  if (!run_id.ok()) return run_id.status();
  const RunKey key{ns.id, req.workflow_execution().workflow_id(), *run_id};
  absl::StatusOr<MutableStateRecord> state = ReadRun(key);
  if (!state.ok()) return state.status();
  if (state->execution().status() == enums::WORKFLOW_EXECUTION_STATUS_RUNNING) {
    wf::TerminateWorkflowExecutionRequest terminate;
    *terminate.mutable_workflow_execution() = req.workflow_execution();
    terminate.mutable_workflow_execution()->set_run_id(*run_id);
    terminate.set_reason("deleted");
    terminate.set_identity("tock-server delete");
    if (absl::Status s = TerminateWorkflow(ns, terminate); !s.ok()) return s;
  }
  std::shared_ptr<RunEntry> entry = Entry(*run_id);
  // Fenced like a commit (WriteCommit): only the shard's owner, with the run's turn,
  // deletes, so its cache never keeps serving a run another host deleted. UNAVAILABLE
  // elsewhere.
  WaitTurn(*entry);
  const int32_t shard_id = shards_.ShardFor(key.namespace_id, key.workflow_id);
  absl::Status s;
  int64_t range_id;
  {
    ShardController::RangeHold hold = shards_.HoldRange(shard_id);
    range_id = hold.range_id();
    if (range_id != ShardController::kNotOwned) {
      s = store_.DeleteRun(shard_id, range_id, key.namespace_id, key.workflow_id, key.run_id);
    }
  }
  if (s.ok() && range_id != ShardController::kNotOwned) {
    std::lock_guard lock(entry->mu);
    Uncache(*run_id, *entry);
  }
  ReleaseTurn(*entry);
  if (range_id == ShardController::kNotOwned) return ShardNotOwnedHere(shard_id);
  if (s.code() == absl::StatusCode::kFailedPrecondition) {
    shards_.Lost(shard_id, range_id);
    return ShardNotOwnedHere(shard_id);
  }
  return s;
}

absl::StatusOr<std::string> HistoryEngine::ActivityTokenById(const NamespaceRef& ns,
                                                             const std::string& workflow_id,
                                                             const std::string& run_id,
                                                             const std::string& activity_id) {
  absl::StatusOr<std::string> resolved = ResolveRunId(ns.id, workflow_id, run_id);
  if (!resolved.ok()) return resolved.status();
  absl::StatusOr<MutableStateRecord> state = ReadRun({ns.id, workflow_id, *resolved});
  if (!state.ok()) return state.status();
  for (const auto& [id, a] : state->activities()) {
    if (a.activity_id() == activity_id && a.has_started_time()) {
      return EncodeTaskToken(MakeActivityTaskToken(*state, a));
    }
  }
  return absl::NotFoundError(absl::StrCat("Activity ", activity_id, " of workflow ", workflow_id,
                                          " is not running."));
}

absl::StatusOr<wf::GetWorkflowExecutionHistoryReverseResponse> HistoryEngine::GetWorkflowHistoryReverse(
    const NamespaceRef& ns, const wf::GetWorkflowExecutionHistoryReverseRequest& req) {
  absl::StatusOr<std::string> run_id =
      ResolveRunId(ns.id, req.execution().workflow_id(), req.execution().run_id());
  if (!run_id.ok()) return run_id.status();
  absl::StatusOr<MutableStateRecord> state = ReadRun({ns.id, req.execution().workflow_id(), *run_id});
  if (!state.ok()) return state.status();
  int64_t end = state->next_event_id();  // exclusive
  if (!req.next_page_token().empty()) {
    try {
      end = std::stoll(req.next_page_token());
    } catch (...) {
      return absl::InvalidArgumentError("the next_page_token is not one this server issued");
    }
  }
  const int32_t page = req.maximum_page_size() > 0 ? std::min(req.maximum_page_size(), kMaxHistoryPage)
                                                   : kMaxHistoryPage;
  const int64_t begin = std::max<int64_t>(1, end - page);
  auto events = store_.ReadEvents(*run_id, begin, end, page);
  if (!events.ok()) return events.status();
  wf::GetWorkflowExecutionHistoryReverseResponse out;
  for (auto it = events->rbegin(); it != events->rend(); ++it) *out.mutable_history()->add_events() = *it;
  if (begin > 1) out.set_next_page_token(std::to_string(begin));
  return out;
}

absl::StatusOr<wf::DescribeWorkflowExecutionResponse> HistoryEngine::DescribeWorkflow(
    const NamespaceRef& ns, const wf::DescribeWorkflowExecutionRequest& req) {
  absl::StatusOr<std::string> run_id =
      ResolveRunId(ns.id, req.execution().workflow_id(), req.execution().run_id());
  if (!run_id.ok()) return run_id.status();
  absl::StatusOr<MutableStateRecord> read = ReadRun({ns.id, req.execution().workflow_id(), *run_id});
  if (!read.ok()) return read.status();
  const MutableStateRecord& state = *read;
  const auto& exec = state.execution();
  wf::DescribeWorkflowExecutionResponse out;
  *out.mutable_workflow_execution_info() = ExecutionSummary(state);
  auto* extended = out.mutable_workflow_extended_info();
  if (exec.has_workflow_execution_expiration_time()) {
    *extended->mutable_execution_expiration_time() = exec.workflow_execution_expiration_time();
  }
  if (exec.has_workflow_run_expiration_time()) {
    *extended->mutable_run_expiration_time() = exec.workflow_run_expiration_time();
  }
  extended->set_cancel_requested(exec.cancel_requested());
  *extended->mutable_original_start_time() = exec.start_time();
  if (exec.has_last_reset_time()) *extended->mutable_last_reset_time() = exec.last_reset_time();
  extended->set_reset_run_id(exec.reset_run_id());
  auto* config = out.mutable_execution_config();
  config->mutable_task_queue()->set_name(exec.task_queue());
  config->mutable_task_queue()->set_kind(enums::TASK_QUEUE_KIND_NORMAL);
  *config->mutable_workflow_execution_timeout() = exec.workflow_execution_timeout();
  *config->mutable_workflow_run_timeout() = exec.workflow_run_timeout();
  *config->mutable_default_workflow_task_timeout() = exec.default_workflow_task_timeout();
  for (const auto& [id, a] : state.activities()) {
    auto* p = out.add_pending_activities();
    p->set_activity_id(a.activity_id());
    p->mutable_activity_type()->set_name(a.activity_type());
    p->set_state(a.cancel_requested() ? enums::PENDING_ACTIVITY_STATE_CANCEL_REQUESTED
                 : a.has_started_time() ? enums::PENDING_ACTIVITY_STATE_STARTED
                                        : enums::PENDING_ACTIVITY_STATE_SCHEDULED);
    if (a.has_heartbeat_details()) *p->mutable_heartbeat_details() = a.heartbeat_details();
    if (a.has_last_heartbeat_time()) *p->mutable_last_heartbeat_time() = a.last_heartbeat_time();
    if (a.has_started_time()) *p->mutable_last_started_time() = a.started_time();
    p->set_attempt(a.attempt());
    p->set_maximum_attempts(a.retry_policy().maximum_attempts());
    *p->mutable_scheduled_time() = a.current_attempt_scheduled_time();
    if (a.has_last_failure()) *p->mutable_last_failure() = a.last_failure();
    p->set_last_worker_identity(a.started_identity());
  }
  for (const auto& [id, c] : state.children()) {
    auto* p = out.add_pending_children();
    p->set_workflow_id(c.workflow_id());
    p->set_run_id(c.run_id());
    p->set_workflow_type_name(c.workflow_type());
    p->set_initiated_id(c.initiated_event_id());
    p->set_parent_close_policy(c.parent_close_policy());
  }
  if (state.workflow_task().scheduled_event_id() != 0) {
    const auto& wft = state.workflow_task();
    auto* p = out.mutable_pending_workflow_task();
    p->set_state(wft.started_event_id() != 0 ? enums::PENDING_WORKFLOW_TASK_STATE_STARTED
                                             : enums::PENDING_WORKFLOW_TASK_STATE_SCHEDULED);
    *p->mutable_scheduled_time() = wft.scheduled_time();
    if (wft.has_started_time()) *p->mutable_started_time() = wft.started_time();
    p->set_attempt(wft.attempt());
  }
  return out;
}

void HistoryEngine::GetWorkflowHistory(const NamespaceRef& ns,
                                       const wf::GetWorkflowExecutionHistoryRequest& req,
                                       absl::Time deadline,
                                       std::function<void(absl::StatusOr<WireBytes>)> done_bytes) {
  auto done = [&done_bytes](absl::StatusOr<wf::GetWorkflowExecutionHistoryResponse> r) {
    if (!r.ok()) return done_bytes(r.status());
    done_bytes(WireBytes{r->SerializeAsString()});
  };
  absl::StatusOr<std::string> run_id =
      ResolveRunId(ns.id, req.execution().workflow_id(), req.execution().run_id());
  if (!run_id.ok()) return done(run_id.status());
  absl::StatusOr<MutableStateRecord> read = ReadRun({ns.id, req.execution().workflow_id(), *run_id});
  if (!read.ok()) return done(read.status());
  const MutableStateRecord& state = *read;
  const bool open = state.execution().status() == enums::WORKFLOW_EXECUTION_STATUS_RUNNING;
  const int64_t next_event_id = state.next_event_id();
  int64_t from = 1;
  if (!req.next_page_token().empty()) {
    try {
      from = std::stoll(req.next_page_token());
    } catch (...) {
      return done(absl::InvalidArgumentError("the next_page_token is not one this server issued"));
    }
  }
  const bool close_only =
      req.history_event_filter_type() == enums::HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT;
  const bool must_wait = req.wait_new_event() && open && (close_only || from >= next_event_id);
  if (must_wait) {
    // The run's commits happen on its shard's owner: a wait here is woken by none when this
    // host does not own the shard (any more: it moved; WaitForCommit's waits are woken when
    // it goes). "Not owned" sends the caller to the owner (routing/call_router.h).
    const int32_t shard_id = shards_.ShardFor(ns.id, req.execution().workflow_id());
    if (!shards_.Owns(shard_id)) return done(ShardNotOwnedHere(shard_id));
    const absl::Time limit = std::min(deadline - absl::Seconds(1), clock_.Now() + kHistoryLongPoll);
    // At shutdown a waiting caller gets its empty page at once instead of the rest of its wait.
    if (clock_.Now() >= limit || releasing_waiters_.load()) {
      wf::GetWorkflowExecutionHistoryResponse empty;
      empty.mutable_history();
      if (!close_only) empty.set_next_page_token(req.next_page_token().empty() ? std::to_string(from) : req.next_page_token());
      return done(empty);
    }
    // Wait for the next commit of this run, then answer afresh (bounded by `limit`). Runs
    // after this call has returned: it answers through its own copy of done_bytes (`done`
    // refers to this frame's parameter, gone by then).
    AfterNextCommit({ns.id, req.execution().workflow_id(), *run_id}, next_event_id, limit,
                    [this, ns, req, deadline, done_bytes](bool expired) {
                      if (!expired) return GetWorkflowHistory(ns, req, deadline, done_bytes);
                      // Nothing new in time: an empty page (the caller asks again from the
                      // same place).
                      wf::GetWorkflowExecutionHistoryResponse empty;
                      empty.mutable_history();
                      if (req.history_event_filter_type() !=
                          enums::HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT) {
                        empty.set_next_page_token(
                            req.next_page_token().empty() ? "1" : req.next_page_token());
                      }
                      done_bytes(WireBytes{empty.SerializeAsString()});
                    });
    return;
  }

  wf::GetWorkflowExecutionHistoryResponse out;
  auto* history = out.mutable_history();
  if (close_only) {
    if (!open) {
      auto last = store_.ReadEvents(*run_id, next_event_id - 1, next_event_id, 1);
      if (!last.ok()) return done(last.status());
      for (auto& e : *last) *history->add_events() = std::move(e);
    }
    return done(out);
  }
  int32_t page = req.maximum_page_size() > 0 ? std::min(req.maximum_page_size(), kMaxHistoryPage)
                                             : kMaxHistoryPage;
  // The response on the wire, built around the stored bytes as they come out of the store:
  // field 3 (next_page_token) first (field order does not matter to a parser), then field 1
  // (history) holding repeated field 1 (events). The history's length is known only at the
  // end, so room for its tag and length is left in front of the events.
  constexpr size_t kPrefixRoom = 32;  // token (tag, length, up to 20 digits), history tag, length
  WireBytes wire;
  std::string& buffer = wire.buffer;
  buffer.reserve(kPrefixRoom + 64 * 1024);
  buffer.resize(kPrefixRoom);
  absl::StatusOr<int64_t> count =
      store_.VisitEventBytes(*run_id, from, next_event_id, page, [&buffer](std::string_view e) {
        buffer.push_back('\x0a');
        AppendVarint(buffer, e.size());
        buffer.append(e);
      });
  if (!count.ok()) return done(count.status());
  // Event ids are dense, so the page's last id follows from its size.
  const int64_t last = from - 1 + *count;
  std::string head;  // token field, then the history tag and length
  if (last + 1 < next_event_id || (req.wait_new_event() && open)) {
    const std::string token = std::to_string(last + 1);  // a follower asks again from here
    head.push_back('\x1a');
    AppendVarint(head, token.size());
    head += token;
  }
  head.push_back('\x0a');
  AppendVarint(head, buffer.size() - kPrefixRoom);
  if (head.size() <= kPrefixRoom) {
    wire.begin = kPrefixRoom - head.size();
    buffer.replace(wire.begin, head.size(), head);
  } else {  // cannot happen for a decimal event id; stay correct anyway
    buffer.replace(0, kPrefixRoom, head);
  }
  return done_bytes(std::move(wire));
}

}  // namespace tock::server::history
