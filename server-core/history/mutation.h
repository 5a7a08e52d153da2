// A change of one run as the engine's parts ask for it (HistoryEngine::Mutate): the run's
// ids, the function that builds the change on a RunTransaction under the run's lock, and
// the statuses with which that function says what to do with it.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "server-core/history/any_shard.h"
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

// What the engine's parts (replication applier, queries, reset) need to read and change a
// run: implemented by HistoryEngine.
class RunAccess {
 public:
  virtual ~RunAccess() = default;
  // The run's state as last committed (NOT_FOUND with Temporal's message).
  virtual absl::StatusOr<MutableStateRecord> ReadRun(const RunKey& key) = 0;
  // The id of the run `run_id` names: itself when set, else the workflow's current run.
  virtual absl::StatusOr<std::string> ResolveRunId(const std::string& namespace_id,
                                                   const std::string& workflow_id,
                                                   const std::string& run_id) = 0;
  // Loads the run under its lock, applies `mutate`, commits (HistoryEngine::Mutate): a change
  // of this cluster's own, sent on to the other clusters.
  virtual absl::Status MutateRun(const NamespaceRef& ns, const RunKey& key,
                                 const Mutation& mutate) = 0;
};

// The identity the history service records on events it writes itself (Temporal's).
inline constexpr char kHistoryServiceIdentity[] = "history-service";

}  // namespace tock::server::history
