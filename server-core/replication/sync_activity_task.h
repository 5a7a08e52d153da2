// The sender's side of a SyncActivity replication task (reference/replication.md §3.3):
// the task names a pending activity (sync_activity_tasks.h in server-core/history); what is
// sent is the activity's state as the run holds it now, with the run's current version
// history. Tasks of one activity that wait together in one answer send that state once.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "server-core/persistence/execution_store.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::server::replication {

// The (run id, scheduled event id) of the activities already sent in one answer.
using SentActivities = std::set<std::pair<std::string, int64_t>>;

// Adds the task to `out` unless there is nothing to send (Temporal's rules): the run is
// closed, the activity is gone (its closing event replicates that) or was changed since at
// another version, or `sent` has it already (its state then went with the earlier task).
void AddSyncActivityTask(const persistence::MutableStateRecord& run, int64_t task_id,
                         const tock::persistence::v1::ReplicationTask& task, SentActivities& sent,
                         tock::admin::v1::ReplicationMessages& out);

}  // namespace tock::server::replication
