#include "server-core/history/failover_workflow_task.h"

#include "server-core/history/history_engine.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;

// The version of event `event_id` on the run's current branch: that of the first item
// reaching it; -1 when the branch is shorter.
int64_t VersionOfEvent(const MutableStateRecord& s, int64_t event_id) {
  const auto& histories = s.version_histories();
  if (histories.histories_size() == 0) return -1;
  for (const auto& item : histories.histories(histories.current_version_history_index()).items()) {
    if (item.event_id() >= event_id) return item.version();
  }
  return -1;
}

}  // namespace

bool WorkflowTaskStartedElsewhere(const RunTransaction& tx, int64_t version_increment) {
  if (!tx.IsOpen() || !tx.WorkflowTaskStarted() || tx.version() <= 0) return false;
  const int64_t started = VersionOfEvent(tx.state(), tx.state().workflow_task().started_event_id());
  // -1: the started event is not in the history yet (a speculative task, never replicated).
  if (started < 0 || started >= tx.version()) return false;
  if (version_increment > 0 && started % version_increment == tx.version() % version_increment) {
    return false;
  }
  return true;
}

void FailWorkflowTaskForFailover(RunTransaction& tx) {
  auto* wft = tx.state().mutable_workflow_task();
  tx.RetireTimer(wft->timeout_timer());
  HistoryEvent& failed = tx.Append(enums::EVENT_TYPE_WORKFLOW_TASK_FAILED);
  auto* attrs = failed.mutable_workflow_task_failed_event_attributes();
  attrs->set_scheduled_event_id(wft->scheduled_event_id());
  attrs->set_started_event_id(wft->started_event_id());
  attrs->set_cause(enums::WORKFLOW_TASK_FAILED_CAUSE_FAILOVER_CLOSE_COMMAND);
  attrs->set_identity(kHistoryServiceIdentity);
  tx.state().clear_workflow_task();
  tx.FlushBuffered();
  tx.ScheduleWorkflowTask();
}

}  // namespace tock::server::history
