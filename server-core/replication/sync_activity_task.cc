#include "server-core/replication/sync_activity_task.h"

namespace tock::server::replication {

void AddSyncActivityTask(const persistence::MutableStateRecord& run, int64_t task_id,
                         const tock::persistence::v1::ReplicationTask& task, SentActivities& sent,
                         tock::admin::v1::ReplicationMessages& out) {
  if (run.execution().status() != temporal::api::enums::v1::WORKFLOW_EXECUTION_STATUS_RUNNING) {
    return;
  }
  auto it = run.activities().find(task.scheduled_event_id());
  if (it == run.activities().end() || it->second.version() != task.version()) return;
  if (!sent.emplace(task.run_id(), task.scheduled_event_id()).second) return;
  tock::admin::v1::HistoryReplicationTask* t = out.add_tasks();
  t->set_task_id(task_id);
  t->set_namespace_id(task.namespace_id());
  t->set_workflow_id(task.workflow_id());
  t->set_run_id(task.run_id());
  const auto& histories = run.version_histories();
  if (histories.histories_size() > 0) {
    *t->mutable_version_history_items() =
        histories.histories(histories.current_version_history_index()).items();
  }
  t->mutable_sync_activity()->set_version(task.version());
  *t->mutable_sync_activity()->mutable_activity() = it->second;
  t->mutable_sync_activity()->mutable_activity()->clear_timers();  // this cluster's rows
}

}  // namespace tock::server::replication
