#include "server-core/history/replication_applier.h"

#include "absl/strings/str_cat.h"
#include "lib/common/retryable.h"
#include "lib/common/status.h"
#include "server-core/history/failover_workflow_task.h"
#include "server-core/history/reapply_parts.h"
#include "server-core/history/replicated_events.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;

VersionItems CurrentItemsOf(const MutableStateRecord& s) {
  const auto& histories = s.version_histories();
  if (histories.histories_size() == 0) return {};
  return ToItems(histories.histories(histories.current_version_history_index()).items());
}

void TakeTasks(RunTransaction& tx, persistence::Commit& commit) {
  commit.new_tasks = std::move(tx.new_tasks());
  commit.new_timers = std::move(tx.new_timers());
  commit.done_timers = std::move(tx.done_timers());
  commit.done_task_ids = std::move(tx.done_task_ids());
}

// The events a losing branch's workflow received from outside (Temporal's
// shouldReapplyEvent): applied again to the winner as new events. A termination the server
// itself wrote (a version conflict's, a reset's) is not: it ended that run only.
bool Reappliable(const HistoryEvent& e) {
  switch (e.event_type()) {
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
      return e.workflow_execution_terminated_event_attributes().identity() != kHistoryServiceIdentity;
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED:
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
      return true;
    default:
      return false;
  }
}

// Adds the reappliable events of `events` to `reapply`.
void AddReappliable(const std::vector<HistoryEvent>& events, std::vector<HistoryEvent>& reapply) {
  for (const HistoryEvent& e : events) {
    if (Reappliable(e)) reapply.push_back(e);
  }
}

// A token no branch of the run has: "b0", "b1", ...
std::string NewBranchToken(const tock::persistence::v1::VersionHistories& histories) {
  for (int n = 0;; ++n) {
    std::string token = absl::StrCat("b", n);
    bool used = false;
    for (const auto& h : histories.histories()) used = used || h.branch_token() == token;
    if (!used) return token;
  }
}

// Whether a run last written at (version, task id) happened after one at (other_version,
// other_task_id): Temporal's HappensAfter (the higher version; at equal versions, one
// cluster wrote both, and its task ids are in order).
bool HappensAfter(int64_t version, int64_t task_id, int64_t other_version, int64_t other_task_id) {
  if (version != other_version) return version > other_version;
  return task_id > other_task_id;
}

// The branch of `histories` that `branch` shares the most events with (the current one on a
// tie), or -1 if none; `lca` receives where they part.
int ChooseBranch(const tock::persistence::v1::VersionHistories& histories,
                 const VersionItems& branch, VersionHistoryItem& lca) {
  const int current_index = histories.current_version_history_index();
  int best = -1;
  for (int i = 0; i < histories.histories_size(); ++i) {
    std::optional<VersionHistoryItem> common =
        LowestCommonAncestor(ToItems(histories.histories(i).items()), branch);
    if (!common.has_value()) continue;
    if (best < 0 || common->event_id() > lca.event_id() ||
        (common->event_id() == lca.event_id() && i == current_index)) {
      best = i;
      lca = *common;
    }
  }
  return best;
}

// The events from `next` on: those the chosen branch does not hold yet.
std::vector<HistoryEvent> EventsFrom(const std::vector<HistoryEvent>& events, int64_t next) {
  std::vector<HistoryEvent> fresh;
  for (const HistoryEvent& e : events) {
    if (e.event_id() >= next) fresh.push_back(e);
  }
  return fresh;
}

// The checks of a replicated batch: consecutive events, all on the source's branch (cut to
// where they end), which is returned.
absl::StatusOr<VersionItems> CheckedBranch(const std::vector<VersionHistoryItem>& items,
                                           const std::vector<HistoryEvent>& events) {
  if (events.empty()) return absl::InvalidArgumentError("event slice is empty");
  if (events.size() > kMaxReplicatedBatch) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", kMaxReplicatedBatch, " events are applied at once"));
  }
  for (size_t i = 1; i < events.size(); ++i) {
    if (events[i].event_id() != events[i - 1].event_id() + 1) {
      return absl::InvalidArgumentError("event ID mismatch");
    }
  }
  const VersionItems branch = TruncatedTo(items, events.back().event_id());
  if (LastEventId(branch) != events.back().event_id()) {
    return absl::InvalidArgumentError("the version history does not reach the task's events");
  }
  for (const HistoryEvent& e : events) {
    if (VersionAt(branch, e.event_id()) != e.version()) {
      return absl::InvalidArgumentError("event version mismatch");
    }
  }
  return branch;
}

// The write of one run's change at the end of a RunTransaction.
void AddRunWrite(RunTransaction& tx, persistence::Commit& commit,
                 persistence::CurrentRunChange change, const std::string& replaced = "") {
  commit.shard_id = tx.shard_id();
  commit.runs.push_back(tx.TakeRunWrite(change, replaced));
  TakeTasks(tx, commit);
}

}  // namespace

// The branch that events leave the current one for (§3.5 step 4), and what they add to it.
struct ReplicationApplier::OtherBranch {
  int best = -1;              // the local branch they share the most events with
  VersionHistoryItem lca;     // where they part from it
  bool extends = false;       // they continue `best` (else they fork after `lca`)
  bool on_stored = false;     // `best` is a stored branch, not the current one
  int64_t next = 0;           // the first event `best` does not hold
  std::vector<HistoryEvent> fresh;  // the events from `next` on
  VersionItems target;        // the branch's items once they are written
  std::string token;          // its branch token
};

absl::StatusOr<std::optional<ReplicationGap>> ReplicationApplier::ApplyEvents(
    const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id,
    const std::vector<VersionHistoryItem>& items, const std::vector<HistoryEvent>& events) {
  absl::StatusOr<VersionItems> branch = CheckedBranch(items, events);
  if (!branch.ok()) return branch.status();
  const RunKey key{namespace_id, workflow_id, run_id};
  // A running current run that loses to this one is suppressed first, outside this run's
  // lock; then the run is applied again (at most twice: a second suppression would mean
  // another run became current meanwhile).
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::StatusOr<Outcome> outcome = ApplyLocked(key, *branch, events);
    if (!outcome.ok()) return outcome.status();
    if (!outcome->reapply.empty()) {
      if (absl::Status s = Reapply(namespace_id, workflow_id, outcome->reapply); !s.ok()) return s;
    }
    if (outcome->flush_buffered) {
      if (absl::Status s = FlushBuffered(key); !s.ok()) return s;
      continue;
    }
    if (outcome->suppress_run_id.empty()) return outcome->gap;
    if (absl::Status s = SuppressRun({namespace_id, workflow_id, outcome->suppress_run_id},
                                     LastVersion(*branch));
        !s.ok()) {
      return s;
    }
  }
  return absl::AbortedError(absl::StrCat("the current run of workflow ", workflow_id,
                                         " kept changing while a replicated run was applied"));
}

absl::StatusOr<ReplicationApplier::Outcome> ReplicationApplier::ApplyLocked(
    const RunKey& key, const VersionItems& branch, const std::vector<HistoryEvent>& events) {
  Outcome outcome;
  absl::Status written = engine_.WriteReplicated(
      key, [&](std::optional<MutableStateRecord>& state, persistence::Commit& commit) {
        if (!state.has_value()) return CreateRun(key, branch, events, commit, outcome);
        if (state->buffered_events_size() > 0) {
          // §3.5 step 3: what arrived while this cluster's worker held a workflow task is
          // written first, as this cluster's (FlushBuffered), then these events are applied.
          outcome.flush_buffered = true;
          return absl::OkStatus();
        }
        return ContinueRun(key, branch, events, *state, commit, outcome);
      });
  if (!written.ok()) return written;
  return outcome;
}

absl::Status ReplicationApplier::CreateRun(const RunKey& key, const VersionItems& branch,
                                           const std::vector<HistoryEvent>& events,
                                           persistence::Commit& commit, Outcome& outcome) {
  // Its history must start with it.
  if (events.front().event_id() != 1) {
    outcome.gap = ReplicationGap{0, 0, events.front().event_id(), events.front().version()};
    return absl::OkStatus();
  }
  persistence::CurrentRunChange change = persistence::CurrentRunChange::kCreate;
  std::string replaced;
  bool zombie = false;
  absl::StatusOr<persistence::CurrentRun> current =
      store_.GetCurrentRun(key.namespace_id, key.workflow_id);
  if (!current.ok() && !absl::IsNotFound(current.status())) return current.status();
  if (current.ok()) {
    absl::StatusOr<MutableStateRecord> other =
        store_.GetRun(key.namespace_id, key.workflow_id, current->run_id);
    if (!other.ok()) return other.status();
    if (!HappensAfter(LastVersion(branch), events.back().task_id(),
                      LastVersion(CurrentItemsOf(*other)), other->last_event_task_id())) {
      // The current run is newer: this one is kept beside it, not run (a zombie).
      zombie = true;
      change = persistence::CurrentRunChange::kNone;
    } else if (current->status == enums::WORKFLOW_EXECUTION_STATUS_RUNNING &&
               !other->execution().zombie()) {
      outcome.suppress_run_id = current->run_id;
      return absl::OkStatus();
    } else {
      change = persistence::CurrentRunChange::kReplace;
      replaced = current->run_id;
    }
  }
  MutableStateRecord fresh_state;
  auto* exec = fresh_state.mutable_execution();
  exec->set_namespace_id(key.namespace_id);
  exec->set_workflow_id(key.workflow_id);
  exec->set_run_id(key.run_id);
  RunTransaction tx(std::move(fresh_state), clock_.Now(), -1, shards_);
  if (absl::Status s = ApplyReplicatedEvents(tx, events); !s.ok()) return s;
  tx.state().mutable_execution()->set_zombie(zombie);
  AddRunWrite(tx, commit, change, replaced);
  // A zombie's own signals belong to the run that beat it (§3.5 step 1).
  if (zombie) AddReappliable(events, outcome.reapply);
  return absl::OkStatus();
}

absl::Status ReplicationApplier::ContinueRun(const RunKey& key, const VersionItems& branch,
                                             const std::vector<HistoryEvent>& events,
                                             MutableStateRecord& state,
                                             persistence::Commit& commit, Outcome& outcome) {
  // Which of the run's branches these events continue or leave (§3.5 step 4).
  const auto& histories = state.version_histories();
  const int current_index = histories.current_version_history_index();
  OtherBranch other;
  other.best = ChooseBranch(histories, branch, other.lca);
  if (other.best < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the history of run ", key.run_id, " shares no event with the replicated one"));
  }
  const VersionItems local = ToItems(histories.histories(other.best).items());
  other.extends = EndsAt(local, other.lca);
  other.on_stored = other.best != current_index;
  // The events after what the chosen branch already holds.
  other.next = other.extends ? LastEventId(local) + 1 : other.lca.event_id() + 1;
  other.fresh = EventsFrom(events, other.next);
  const bool lost = other.on_stored || state.execution().zombie();
  if (other.fresh.empty()) {
    // All here already. On a losing branch or a zombie, what they received from outside
    // is applied again (each at most once): the first delivery's reapply may have failed
    // after its events were written.
    if (lost) AddReappliable(events, outcome.reapply);
    return absl::OkStatus();
  }
  if (other.fresh.front().event_id() > other.next) {
    outcome.gap = ReplicationGap{other.next - 1,
                                 VersionAt(other.extends ? local : branch, other.next - 1),
                                 other.fresh.front().event_id(), other.fresh.front().version()};
    return absl::OkStatus();
  }
  if (other.extends && !other.on_stored) {
    // The common case: the events continue the current branch. A zombie's own signals
    // belong to the run that beat it (§3.5 step 6, an update as zombie).
    if (lost) AddReappliable(other.fresh, outcome.reapply);
    RunTransaction tx(std::move(state), clock_.Now(), -1, shards_);
    if (absl::Status s = ApplyReplicatedEvents(tx, other.fresh); !s.ok()) return s;
    AddRunWrite(tx, commit, persistence::CurrentRunChange::kNone);
    return absl::OkStatus();
  }
  // Another branch (§3.5 steps 4-6): a stored one continued, or a new fork after `lca`
  // (of the current branch or of a stored one: a third history of the run).
  other.target = TruncatedTo(local, other.next - 1);
  for (const VersionHistoryItem& item : branch) {
    if (item.event_id() < other.next) continue;
    if (!other.target.empty() && other.target.back().version() == item.version()) {
      other.target.back().set_event_id(item.event_id());
    } else {
      other.target.push_back(item);
    }
  }
  return ApplyOnOtherBranch(key, other, state, commit, outcome);
}

absl::Status ReplicationApplier::ApplyOnOtherBranch(const RunKey& key, OtherBranch& other,
                                                    MutableStateRecord& state,
                                                    persistence::Commit& commit,
                                                    Outcome& outcome) {
  const auto& histories = state.version_histories();
  const int64_t target_version = LastVersion(other.target);
  const int64_t current_version = LastVersion(CurrentItemsOf(state));
  if (target_version == current_version) {
    return absl::InvalidArgumentError(
        "ConflictResolver encountered replication task version == current branch last "
        "write version");
  }
  other.token = other.extends ? histories.histories(other.best).branch_token()
                              : NewBranchToken(histories);
  if (target_version > current_version) return PromoteBranch(key, other, state, commit);

  // The branch loses: its events are kept on it; the run's state stays as it is, and what
  // the workflow received from outside on it is applied again to the run.
  const std::string forked_from =
      other.on_stored ? histories.histories(other.best).branch_token() : "";
  RunTransaction tx(std::move(state), clock_.Now(), -1, shards_);
  auto* histories_out = tx.state().mutable_version_histories();
  if (other.extends) {
    histories_out->mutable_histories(other.best)->mutable_items()->Assign(other.target.begin(),
                                                                          other.target.end());
  } else {
    auto* added = histories_out->add_histories();
    added->set_branch_token(other.token);
    added->mutable_items()->Assign(other.target.begin(), other.target.end());
  }
  commit.shard_id = tx.shard_id();
  persistence::RunWrite write = tx.TakeRunWrite(persistence::CurrentRunChange::kNone);
  if (!other.extends) {
    write.branch_forks.push_back({other.token, other.lca.event_id(), forked_from});
  }
  write.branch_appends.push_back(persistence::BranchAppend{other.token, other.fresh});
  commit.runs.push_back(std::move(write));
  AddReappliable(other.fresh, outcome.reapply);
  return absl::OkStatus();
}

absl::Status ReplicationApplier::PromoteBranch(const RunKey& key, const OtherBranch& other,
                                               MutableStateRecord& state,
                                               persistence::Commit& commit) {
  const auto& histories = state.version_histories();
  const int current_index = histories.current_version_history_index();
  const VersionItems current_branch = CurrentItemsOf(state);
  // The old current branch is kept under a token; the run's state is rebuilt from the new
  // one's whole history: the stored prefix, a promoted stored branch's events, `fresh`.
  const int64_t common =
      other.on_stored
          ? LowestCommonAncestor(current_branch, ToItems(histories.histories(other.best).items()))
                ->event_id()
          : other.lca.event_id();
  absl::StatusOr<std::vector<HistoryEvent>> prefix =
      store_.ReadEvents(key.run_id, 1, common + 1, static_cast<int32_t>(common));
  if (!prefix.ok()) return prefix.status();
  std::vector<HistoryEvent> history = std::move(*prefix);
  if (other.on_stored) {
    absl::StatusOr<std::vector<HistoryEvent>> stored = store_.ReadBranchEvents(
        key.run_id, histories.histories(other.best).branch_token(), common + 1, other.next,
        static_cast<int32_t>(other.next - common));
    if (!stored.ok()) return stored.status();
    for (HistoryEvent& e : *stored) history.push_back(std::move(e));
  }
  // Written to the history: what the promoted stored branch does not bring (a fork of a
  // stored branch brings nothing: its part after `common` is written again).
  const size_t first_written = other.extends ? history.size() : static_cast<size_t>(common);
  for (const HistoryEvent& e : other.fresh) history.push_back(e);
  if (static_cast<int64_t>(history.size()) != LastEventId(other.target)) {
    return absl::DataLossError(absl::StrCat("the stored branches of run ", key.run_id,
                                            " miss events; the run cannot be rebuilt"));
  }
  tock::persistence::v1::VersionHistories updated = histories;
  std::string retire_as = histories.histories(current_index).branch_token();
  if (retire_as.empty()) {
    retire_as = NewBranchToken(updated);
    updated.mutable_histories(current_index)->set_branch_token(retire_as);
  }
  int best = other.best;
  if (!other.extends) {
    updated.add_histories()->set_branch_token(NewBranchToken(updated));
    best = updated.histories_size() - 1;
  }
  updated.mutable_histories(best)->mutable_items()->Assign(other.target.begin(),
                                                           other.target.end());
  updated.set_current_version_history_index(best);

  MutableStateRecord rebuilt;
  rebuilt.mutable_execution()->set_namespace_id(key.namespace_id);
  rebuilt.mutable_execution()->set_workflow_id(key.workflow_id);
  rebuilt.mutable_execution()->set_run_id(key.run_id);
  rebuilt.set_db_version(state.db_version());
  RunTransaction tx(std::move(rebuilt), clock_.Now(), -1, shards_);
  if (absl::Status s = ApplyReplicatedEvents(tx, history); !s.ok()) return s;
  tx.state().mutable_execution()->set_zombie(state.execution().zombie());
  *tx.state().mutable_version_histories() = updated;
  tx.VisibilityChanged();
  commit.shard_id = tx.shard_id();
  persistence::RunWrite write = tx.TakeRunWrite(persistence::CurrentRunChange::kNone);
  write.events.erase(write.events.begin(),  // replayed, not written: stored already
                     write.events.begin() + static_cast<std::ptrdiff_t>(first_written));
  // The promoted branch's stored events move to the history; `fresh` follows them.
  write.branch_switch =
      persistence::BranchSwitch{retire_as, common, other.extends ? other.token : ""};
  commit.runs.push_back(std::move(write));
  TakeTasks(tx, commit);
  logger_.Info("replication: a newer branch of a run became its current one",
               {{"workflow_id", key.workflow_id}, {"run_id", key.run_id},
                {"fork_event_id", absl::StrCat(common)},
                {"version", absl::StrCat(LastVersion(other.target))},
                {"previous_version", absl::StrCat(LastVersion(current_branch))}});
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ReplicationApplier::StoredLastVersion(const RunKey& key) {
  absl::StatusOr<MutableStateRecord> run =
      store_.GetRun(key.namespace_id, key.workflow_id, key.run_id);
  if (!run.ok()) return run.status();
  return LastVersion(CurrentItemsOf(*run));
}

absl::Status ReplicationApplier::FlushBuffered(const RunKey& key) {
  absl::StatusOr<int64_t> last_version = StoredLastVersion(key);
  if (!last_version.ok()) return last_version.status();
  if (!owns_version_ || !owns_version_(*last_version)) {
    return absl::InternalError(
        "Workflow encountered workflow with buffered events but last write not from current "
        "cluster");
  }
  // Written as this cluster's last write (as a suppression's termination is): the other
  // clusters receive the events and, where the namespace is active, apply the signals
  // again to the branch that wins.
  NamespaceRef ns;
  ns.id = key.namespace_id;
  ns.failover_version = *last_version;
  ns.conflict_resolution = true;
  return engine_.MutateRun(ns, key, [&](RunTransaction& tx) -> absl::Status {
    if (tx.state().buffered_events_size() == 0) return NothingToWrite();
    if (tx.WorkflowTaskStarted()) {
      FailWorkflowTaskForFailover(tx);
    } else {
      tx.FlushBuffered();
      tx.ScheduleWorkflowTask();
    }
    return absl::OkStatus();
  });
}

absl::Status ReplicationApplier::SuppressRun(const RunKey& key, int64_t by_version) {
  absl::StatusOr<int64_t> last_version = StoredLastVersion(key);
  if (!last_version.ok()) return last_version.status();
  if (!owns_version_ || !owns_version_(*last_version)) {
    // Last written by another cluster: that cluster decides its end; here it becomes a
    // zombie.
    return engine_.WriteReplicated(
        key, [&](std::optional<MutableStateRecord>& state, persistence::Commit& commit) {
          if (!state.has_value()) return absl::OkStatus();  // gone meanwhile: nothing to do
          RunTransaction tx(std::move(*state), clock_.Now(), -1, shards_);
          tx.state().mutable_execution()->set_zombie(true);
          AddRunWrite(tx, commit, persistence::CurrentRunChange::kNone);
          return absl::OkStatus();
        });
  }
  // Last written here: this cluster ends it, as its own write at that version, which the
  // other clusters receive like any other (§3.5 step 1, Temporal's SuppressBy).
  NamespaceRef ns;
  ns.id = key.namespace_id;
  ns.failover_version = *last_version;
  ns.conflict_resolution = true;
  temporal::api::common::v1::Payloads details;
  auto* payload = details.add_payloads();
  (*payload->mutable_metadata())["encoding"] = "json/plain";
  payload->set_data(absl::StrCat("\"terminated by version: ", by_version, "\""));
  absl::Status s = engine_.MutateRun(ns, key, [&](RunTransaction& tx) {
    if (tx.IsOpen()) {
      tx.Terminate("Terminate Workflow Due To Version Conflict.", details, kHistoryServiceIdentity);
    }
    return absl::OkStatus();
  });
  if (s.ok()) {
    logger_.Info("replication: a run that lost a version conflict was terminated",
                 {{"workflow_id", key.workflow_id}, {"run_id", key.run_id},
                  {"by_version", absl::StrCat(by_version)}});
  }
  return s;
}

absl::Status ReplicationApplier::Reapply(const std::string& namespace_id,
                                         const std::string& workflow_id,
                                         const std::vector<HistoryEvent>& events) {
  const NamespaceActivity activity = engine_.Activity(namespace_id);
  if (activity.unknown) return NamespaceStateUnknown(namespace_id);
  if (activity.active) return ReapplyHere(activity, namespace_id, workflow_id, events);
  if (!forward_reapply_) {
    logger_.Warn("replication: events of a losing branch are not applied again (the namespace "
                 "is not active here and there is no cluster to forward them to)",
                 {{"workflow_id", workflow_id}, {"events", absl::StrCat(events.size())}});
    return absl::OkStatus();
  }
  // `events` are reappliable ones (ApplyLocked chose them).
  for (const std::vector<HistoryEvent>& part : ReapplyParts(events)) {
    absl::Status s = forward_reapply_(activity.active_cluster, namespace_id, workflow_id, part);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("forwarding ", part.size(),
                                                 " events of a losing branch to cluster ",
                                                 activity.active_cluster, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status ReplicationApplier::ReapplyEvents(const std::string& namespace_id,
                                               const std::string& workflow_id,
                                               const std::vector<HistoryEvent>& events) {
  if (events.size() > kMaxReapplyEvents) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", kMaxReapplyEvents, " events are applied again at once"));
  }
  if (workflow_id.empty()) return absl::InvalidArgumentError("WorkflowId is not set on request.");
  const NamespaceActivity activity = engine_.Activity(namespace_id);
  if (activity.unknown) return NamespaceStateUnknown(namespace_id);
  if (!activity.active) {
    return NamespaceNotActiveError(activity.name, activity.active_cluster,
                                   activity.current_cluster);
  }
  return ReapplyHere(activity, namespace_id, workflow_id, events);
}

absl::Status ReplicationApplier::ReapplyHere(const NamespaceActivity& activity,
                                             const std::string& namespace_id,
                                             const std::string& workflow_id,
                                             const std::vector<HistoryEvent>& events) {
  NamespaceRef ns;
  ns.id = namespace_id;
  ns.name = activity.name;
  ns.failover_version = activity.failover_version;
  absl::Status retry;  // the first error worth another delivery
  for (const HistoryEvent& e : events) {
    if (!Reappliable(e)) continue;
    absl::Status s = ReapplyOne(ns, workflow_id, e);
    if (s.ok()) continue;
    logger_.Warn("replication: an event of a losing branch could not be applied again",
                 {{"workflow_id", workflow_id},
                  {"event", enums::EventType_Name(e.event_type())},
                  {"error", std::string(s.message().substr(0, 300))}});
    // A run that ended or a refused event stays so; a store or ownership that cannot take
    // the write now is tried again with the task's next delivery.
    if (retry.ok() && (IsRetryable(s.code()) || absl::IsFailedPrecondition(s))) retry = s;
  }
  return retry;
}

absl::Status ReplicationApplier::ReapplyOne(const NamespaceRef& ns, const std::string& workflow_id,
                                            const HistoryEvent& e) {
  // One request id per replicated event: applied once however often it arrives.
  const std::string request_id =
      absl::StrCat("reapply:", e.event_id(), ":", e.version(), ":", e.task_id());
  temporal::api::common::v1::WorkflowExecution execution;
  execution.set_workflow_id(workflow_id);  // the current run
  switch (e.event_type()) {
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED: {
      const auto& a = e.workflow_execution_signaled_event_attributes();
      wf::SignalWorkflowExecutionRequest req;
      *req.mutable_workflow_execution() = execution;
      req.set_signal_name(a.signal_name());
      *req.mutable_input() = a.input();
      *req.mutable_header() = a.header();
      req.set_identity(a.identity());
      req.set_request_id(request_id);
      return this_host_.SignalWorkflow(ns, req);
    }
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED: {
      const auto& a = e.workflow_execution_cancel_requested_event_attributes();
      wf::RequestCancelWorkflowExecutionRequest req;
      *req.mutable_workflow_execution() = execution;
      req.set_reason(a.cause());
      req.set_identity(a.identity());
      req.set_request_id(request_id);
      return this_host_.RequestCancelWorkflow(ns, req);
    }
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED: {
      const auto& a = e.workflow_execution_terminated_event_attributes();
      wf::TerminateWorkflowExecutionRequest req;
      *req.mutable_workflow_execution() = execution;
      req.set_reason(a.reason());
      *req.mutable_details() = a.details();
      req.set_identity(a.identity());
      return this_host_.TerminateWorkflow(ns, req);
    }
    default:
      return ReadmitUpdate(ns, workflow_id, e, request_id);
  }
}

absl::Status ReplicationApplier::ReadmitUpdate(const NamespaceRef& ns,
                                               const std::string& workflow_id,
                                               const HistoryEvent& e,
                                               const std::string& request_id) {
  const temporal::api::update::v1::Request& request =
      e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED
          ? e.workflow_execution_update_admitted_event_attributes().request()
          : e.workflow_execution_update_accepted_event_attributes().accepted_request();
  const std::string& update_id = request.meta().update_id();
  absl::StatusOr<std::string> run_id = engine_.ResolveRunId(ns.id, workflow_id, "");
  if (!run_id.ok()) return run_id.status();
  return engine_.MutateRun(ns, {ns.id, workflow_id, *run_id}, [&](RunTransaction& tx) -> absl::Status {
    if (!tx.IsOpen()) return absl::NotFoundError("Workflow execution already completed.");
    // The winner has an update of that id already: Temporal does not reapply it.
    if (tx.state().updates().count(update_id) > 0) return absl::OkStatus();
    if (SeenRequest(tx.state(), request_id)) return absl::OkStatus();
    // Admitted again (origin REAPPLY, as a reset does): the worker accepts or rejects it anew.
    HistoryEvent& admitted = tx.AppendOrBuffer(enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED);
    auto* attrs = admitted.mutable_workflow_execution_update_admitted_event_attributes();
    *attrs->mutable_request() = request;
    attrs->set_origin(enums::UPDATE_ADMITTED_EVENT_ORIGIN_REAPPLY);
    tx.ScheduleWorkflowTask();
    return absl::OkStatus();
  });
}

}  // namespace tock::server::history
