// AdminService.DescribeMutableState (Temporal's admin call of the same name): what operators
// see of a run's stored mutable state. The engine reads the run (HistoryEngine::
// DescribeMutableState); turning the state into the answer is this pure function.
#pragma once

#include "server-core/persistence/execution_store.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::server::history {

// The answer for `state`: ids, status and Temporal's execution state, every branch (its
// version history, its token as hex, which one is current), the last write version (the
// version of the current branch's last item), the pending work counted, and the whole
// state as protobuf JSON. `is_current_run`: the workflow id's current-run pointer names it.
tock::admin::v1::DescribeMutableStateResponse DescribeMutableStateOf(
    const persistence::MutableStateRecord& state, bool is_current_run);

// Temporal's execution state of a run: "ZOMBIE", "COMPLETED" (closed), "CREATED" (no
// workflow task started yet) or "RUNNING".
std::string ExecutionStateOf(const persistence::MutableStateRecord& state);

}  // namespace tock::server::history
