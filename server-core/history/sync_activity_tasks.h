// The SyncActivity replication tasks a change of a run of a global namespace writes
// (reference/replication.md §3.1): a pending activity's state that no event holds (started,
// heartbeat details and time, attempt, last failure) changed, so the other clusters must get
// it to retry the activity with it after a failover (Temporal's TestActivityHeartbeatFailover).
//
// Found by comparing each pending activity before and after the change (HistoryEngine::
// Mutate), so every path that changes one (a poll that starts it, a heartbeat, a retry after
// a failure or a timeout) is covered without each having to say so. One task per activity
// changed, in the change's transaction; the task names the activity only, and the sender
// reads its state when sending (sync_activity_task.h in server-core/replication), so several
// tasks of one activity waiting in the queue send its latest state once.
#pragma once

#include <cstdint>
#include <vector>

#include "server-core/history/run_transaction.h"

namespace tock::server::history {

// What a change may alter of a pending activity without an event.
struct ActivityMark {
  int64_t scheduled_event_id = 0;
  int64_t attempt = 0;
  int64_t stamp = 0;
  int64_t started_ns = 0;         // 0: not started
  int64_t last_heartbeat_ns = 0;  // 0: none
};
using ActivityMarks = std::vector<ActivityMark>;

// The marks of the run's pending activities, by scheduled event id.
ActivityMarks MarkActivities(const MutableStateRecord& state);

// After the change: each activity pending before and after whose mark changed gets the
// change's version (ActivityInfo.version) and a SyncActivity task in `out` (an activity the
// change scheduled has none: its ActivityTaskScheduled event replicates it).
void AddSyncActivityTasks(const ActivityMarks& before, RunTransaction& tx,
                          std::vector<persistence::ReplicationTaskRow>& out);

}  // namespace tock::server::history
