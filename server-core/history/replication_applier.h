// Applies another cluster's events and activity states to this cluster's copy of a run
// (Temporal's history replicator and activity state replicator, reference/replication.md
// §3.5, §3.7), and applies again what a losing branch received from outside (§3.5 step 6).
//
// The applier decides; the engine writes. It needs of the engine (Engine) a replicated write
// under the run's lock and the namespace's activity besides RunAccess (a write of this
// cluster's own, the workflow's current run); and this host's shards (AnyShard) for the
// signals, cancel requests and terminations it applies again.
//
// Thread safety: safe from any thread; a run's changes are serialised by the engine's lock.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "server-core/history/any_shard.h"
#include "server-core/history/mutation.h"
#include "server-core/history/namespace_activity.h"
#include "server-core/history/run_transaction.h"
#include "server-core/history/shard_controller.h"
#include "server-core/history/version_histories.h"
#include "server-core/persistence/execution_store.h"

namespace tock::server::history {

// Events missing before a replicated batch: those strictly between the two points.
struct ReplicationGap {
  int64_t after_event_id = 0;  // 0 (with version 0): from the first event
  int64_t after_version = 0;
  int64_t before_event_id = 0;
  int64_t before_version = 0;
};

// Where a standby sends what a losing branch received from outside (the active cluster's
// AdminService.ReapplyEvents).
using ReapplyForwarder = std::function<absl::Status(
    const std::string& active_cluster, const std::string& namespace_id,
    const std::string& workflow_id, const std::vector<HistoryEvent>& events)>;

class ReplicationApplier {
 public:
  class Engine : public virtual RunAccess {
   public:
    // Under the run's lock, `build` gets the run's state as last committed (none when the
    // run is not here) and fills `commit`; nothing is written when it fails or leaves
    // commit.runs empty. The commit is written as another cluster's (not sent on again), the
    // run's cache updated, and its tasks and timers handed on.
    using ReplicatedBuild = std::function<absl::Status(std::optional<MutableStateRecord>& state,
                                                       persistence::Commit& commit)>;
    virtual absl::Status WriteReplicated(const RunKey& key, const ReplicatedBuild& build) = 0;
    virtual NamespaceActivity Activity(const std::string& namespace_id) = 0;
  };

  ReplicationApplier(persistence::ExecutionStore& store, ShardController& shards, Clock& clock,
                     Logger& logger, Engine& engine, AnyShard& this_host)
      : store_(store), shards_(shards), clock_(clock), logger_(logger), engine_(engine),
        this_host_(this_host) {}

  // Whether a failover version is this cluster's: conflict resolution terminates a losing
  // run last written here, and turns one last written elsewhere into a zombie (§3.5 step 1).
  void SetOwnsVersion(std::function<bool(int64_t version)> owns) { owns_version_ = std::move(owns); }
  // Without a forwarder, a standby does not apply a losing branch's events again (logged).
  void SetReapplyForwarder(ReapplyForwarder forward) { forward_reapply_ = std::move(forward); }

  // HistoryEngine::ApplyReplicated.
  absl::StatusOr<std::optional<ReplicationGap>> ApplyEvents(
      const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id,
      const std::vector<VersionHistoryItem>& items, const std::vector<HistoryEvent>& events);
  // HistoryEngine::ApplySyncActivity (replication_sync_activity.cc).
  absl::StatusOr<std::optional<ReplicationGap>> ApplySyncActivity(
      const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id,
      const std::vector<VersionHistoryItem>& items, int64_t version,
      const tock::persistence::v1::ActivityInfo& activity);
  // HistoryEngine::ReapplyEvents: the receiving end of a forward.
  absl::Status ReapplyEvents(const std::string& namespace_id, const std::string& workflow_id,
                             const std::vector<HistoryEvent>& events);

 private:
  // What one application under the run's lock leaves to do outside it.
  struct Outcome {
    std::optional<ReplicationGap> gap;
    std::string suppress_run_id;          // a running current run to suppress, then retry
    bool flush_buffered = false;          // the run has buffered events: flush, then retry
    std::vector<HistoryEvent> reapply;    // events of a losing branch to apply again
  };
  absl::StatusOr<Outcome> ApplyLocked(const RunKey& key, const VersionItems& branch,
                                      const std::vector<HistoryEvent>& events);
  // A run new here (§3.5 step 1): created current, as a zombie, or after suppressing the
  // current run.
  absl::Status CreateRun(const RunKey& key, const VersionItems& branch,
                         const std::vector<HistoryEvent>& events, persistence::Commit& commit,
                         Outcome& outcome);
  // A run here already: the events continue the current branch or another (§3.5 step 4).
  absl::Status ContinueRun(const RunKey& key, const VersionItems& branch,
                           const std::vector<HistoryEvent>& events, MutableStateRecord& state,
                           persistence::Commit& commit, Outcome& outcome);
  // §3.5 step 5: a branch that beats the current one becomes current, the run's state
  // rebuilt from its whole history.
  struct OtherBranch;
  absl::Status PromoteBranch(const RunKey& key, const OtherBranch& other, MutableStateRecord& state,
                             persistence::Commit& commit);
  absl::Status ApplyOnOtherBranch(const RunKey& key, OtherBranch& other, MutableStateRecord& state,
                                  persistence::Commit& commit, Outcome& outcome);
  absl::Status SuppressRun(const RunKey& key, int64_t by_version);
  // §3.5 step 3: the events buffered while this cluster's worker held a workflow task are
  // written as this cluster's (at the run's last version, replicated) before another
  // cluster's events are applied.
  absl::Status FlushBuffered(const RunKey& key);
  // Applies `events` again here when the namespace is active, else forwards them.
  absl::Status Reapply(const std::string& namespace_id, const std::string& workflow_id,
                       const std::vector<HistoryEvent>& events);
  absl::Status ReapplyHere(const NamespaceActivity& activity, const std::string& namespace_id,
                           const std::string& workflow_id, const std::vector<HistoryEvent>& events);
  absl::Status ReapplyOne(const NamespaceRef& ns, const std::string& workflow_id,
                          const HistoryEvent& e);
  // An update a losing branch admitted or accepted, admitted again on the current run.
  absl::Status ReadmitUpdate(const NamespaceRef& ns, const std::string& workflow_id,
                             const HistoryEvent& e, const std::string& request_id);
  // The last version of the stored run's current branch.
  absl::StatusOr<int64_t> StoredLastVersion(const RunKey& key);

  persistence::ExecutionStore& store_;
  ShardController& shards_;
  Clock& clock_;
  Logger& logger_;
  Engine& engine_;
  AnyShard& this_host_;
  std::function<bool(int64_t)> owns_version_;
  ReapplyForwarder forward_reapply_;
};

}  // namespace tock::server::history
