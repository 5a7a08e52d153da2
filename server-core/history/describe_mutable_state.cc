#include "server-core/history/describe_mutable_state.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/common/ids.h"
#include "lib/common/status.h"
#include "server-core/history/history_engine.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock::server::history {
namespace {

namespace adm = tock::admin::v1;
namespace enums = temporal::api::enums::v1;

}  // namespace

std::string ExecutionStateOf(const persistence::MutableStateRecord& state) {
  if (state.execution().zombie()) return "ZOMBIE";
  if (state.execution().status() != enums::WORKFLOW_EXECUTION_STATUS_RUNNING) return "COMPLETED";
  // Temporal moves a run from CREATED to RUNNING when its first workflow task starts: one
  // completed, one started now, or one that started and failed or timed out (its retry is
  // attempt 2 or more).
  const auto& task = state.workflow_task();
  const bool task_started = state.last_completed_workflow_task_started_event_id() > 0 ||
                            task.started_event_id() > 0 || task.attempt() > 1;
  return task_started ? "RUNNING" : "CREATED";
}

adm::DescribeMutableStateResponse DescribeMutableStateOf(
    const persistence::MutableStateRecord& state, bool is_current_run) {
  const auto& exec = state.execution();
  adm::DescribeMutableStateResponse out;
  out.set_namespace_id(exec.namespace_id());
  out.set_workflow_id(exec.workflow_id());
  out.set_run_id(exec.run_id());
  out.set_is_current_run(is_current_run);
  out.set_status(exec.status());
  out.set_zombie(exec.zombie());
  out.set_state(ExecutionStateOf(state));
  out.set_next_event_id(state.next_event_id());
  out.set_last_event_task_id(state.last_event_task_id());
  out.set_db_version(state.db_version());
  const auto& histories = state.version_histories();
  const int current = histories.current_version_history_index();
  out.set_current_branch_index(current);
  for (int i = 0; i < histories.histories_size(); ++i) {
    const auto& history = histories.histories(i);
    adm::HistoryBranch* branch = out.add_branches();
    branch->set_branch_token(absl::BytesToHexString(history.branch_token()));
    *branch->mutable_items() = history.items();
    branch->set_is_current(i == current);
    if (i == current && !history.items().empty()) {
      out.set_last_write_version(history.items(history.items_size() - 1).version());
    }
  }
  if (state.workflow_task().scheduled_event_id() > 0) {
    const auto& task = state.workflow_task();
    adm::PendingWorkflowTaskSummary* summary = out.mutable_workflow_task();
    summary->set_scheduled_event_id(task.scheduled_event_id());
    summary->set_started_event_id(task.started_event_id());
    summary->set_attempt(task.attempt());
    summary->set_task_queue(task.task_queue());
    if (task.has_scheduled_time()) *summary->mutable_scheduled_time() = task.scheduled_time();
    if (task.has_started_time()) *summary->mutable_started_time() = task.started_time();
  }
  out.set_pending_activities(state.activities_size());
  out.set_pending_timers(state.timers_size());
  out.set_pending_children(state.children_size());
  out.set_buffered_events(state.buffered_events_size());
  std::string json;
  // A state this server wrote always converts; should it not, the summary still answers.
  if (google::protobuf::util::MessageToJsonString(state, &json).ok()) {
    out.set_mutable_state_json(std::move(json));
  }
  return out;
}

absl::StatusOr<adm::DescribeMutableStateResponse> HistoryEngine::DescribeMutableState(
    const NamespaceRef& ns, const adm::DescribeMutableStateRequest& req) {
  // Temporal's admin handler accepts only a UUID as a run id.
  if (!req.run_id().empty() && !IsUuid(req.run_id())) {
    return absl::InvalidArgumentError("Invalid RunId.");
  }
  absl::StatusOr<std::string> run_id = ResolveRunId(ns.id, req.workflow_id(), req.run_id());
  if (!run_id.ok()) return run_id.status();
  absl::StatusOr<MutableStateRecord> state = ReadRun({ns.id, req.workflow_id(), *run_id});
  if (!state.ok()) return state.status();
  // Runs are cached by run id alone: a run id of another workflow or namespace is not found
  // here, as in the store.
  if (state->execution().namespace_id() != ns.id ||
      state->execution().workflow_id() != req.workflow_id()) {
    return WithDetail(absl::NotFoundError(absl::StrCat("Workflow execution not found. WorkflowId: ",
                                                       req.workflow_id(), ", RunId: ", *run_id, ".")),
                      temporal::api::errordetails::v1::NotFoundFailure());
  }
  bool is_current_run = req.run_id().empty();
  if (!is_current_run) {
    absl::StatusOr<persistence::CurrentRun> current =
        store_.GetCurrentRun(ns.id, req.workflow_id());
    if (!current.ok() && current.status().code() != absl::StatusCode::kNotFound) {
      return current.status();
    }
    is_current_run = current.ok() && current->run_id == *run_id;
  }
  return DescribeMutableStateOf(*state, is_current_run);
}

}  // namespace tock::server::history
