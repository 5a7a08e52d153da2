// A change of one run as the engine's parts ask for it (HistoryEngine::Mutate): the run's
// ids, the function that builds the change on a RunTransaction under the run's lock, and
// the statuses with which that function says what to do with it.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "server-core/history/run_transaction.h"

namespace tock::server::history {

// A run by its ids.
struct RunKey {
  std::string namespace_id, workflow_id, run_id;
};

using Mutation = std::function<absl::Status(RunTransaction&)>;

// The status a Mutation returns to commit its change and still fail the call.
absl::Status CommitThenFail(absl::Status status);
// The status a Mutation returns when it found nothing to change: nothing is written and the
// call succeeds.
absl::Status NothingToWrite();

// The identity the history service records on events it writes itself (Temporal's).
inline constexpr char kHistoryServiceIdentity[] = "history-service";

}  // namespace tock::server::history
