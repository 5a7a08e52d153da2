// The passive side of history replication (Temporal's mutable_state_rebuilder,
// reference/replication.md §3.5 steps 1 and 6): a standby cluster applies the events a run
// wrote on the active cluster to its own copy of the run, so that its mutable state becomes
// what the active cluster's was after writing them.
//
// Nothing is renumbered: event ids, task ids, event times and versions stay the source's.
// The state changes are those the active code makes when it writes each event type, and the
// same tasks and timers are generated (workflow and activity dispatch, timeouts, user timers,
// child starts, external requests, the close task): a standby's processors verify rather
// than execute them while the namespace is standby. A task the active side consumed in the
// same step (a workflow task started, an activity closed) is dropped when both its creation
// and its consumption are in one call.
//
// What events do not carry cannot be rebuilt from them: activity retries and heartbeats
// (attempt, stamp, last failure, heartbeat details and the timers of a retried or started
// attempt: Temporal sends those as SyncActivity tasks, §3.7), the start request id, the
// request id of a cancellation, the link from a reset run's base to the new run.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "server-core/history/run_transaction.h"

namespace tock::server::history {

// At most this many events in one call (a batch is one active transaction's events; a
// resend of a whole history is paged by the caller).
inline constexpr size_t kMaxReplicatedBatch = 100000;

// Applies `batch` to the run of `tx`, in order: each event is appended as it is
// (RunTransaction::AppendReplicated: its id must be the run's next event id, its version not
// lower than the run's last) and then changes the state as the active side's writing of it
// did. The first event of a run must be WorkflowExecutionStarted (on a state holding only
// the execution's keys), and nothing follows a closing event.
//
// INVALID_ARGUMENT, naming the event's type and id, for an event type this server does not
// apply, an event referring to something the run does not have (an activity, timer, child,
// external request or update, a workflow task other than the pending one), an id gap, a
// lower version; FAILED_PRECONDITION when the run holds buffered events (it was active
// here: they must be flushed first). On any error `tx` is partly changed and must be
// dropped, not committed.
absl::Status ApplyReplicatedEvents(RunTransaction& tx, const std::vector<HistoryEvent>& batch);

}  // namespace tock::server::history
