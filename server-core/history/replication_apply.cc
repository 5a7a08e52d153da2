// Applying another cluster's events to this cluster's copy of a run (reference/replication.md
// §3.5), and keeping a standby's own timers and follow-up work from running until the
// namespace is active here (§4.4, §4.5).
//
#include "absl/strings/str_cat.h"
#include "lib/common/status.h"
#include "server-core/history/failover_workflow_task.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/reapply_parts.h"
#include "server-core/history/replicated_events.h"
#include "server-core/history/version_histories.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;

constexpr absl::Duration kParkedCheckInterval = absl::Seconds(1);


const google::protobuf::RepeatedPtrField<VersionHistoryItem>& CurrentItemsOf(
    const MutableStateRecord& s) {
  static const auto* none = new google::protobuf::RepeatedPtrField<VersionHistoryItem>();
  const auto& histories = s.version_histories();
  if (histories.histories_size() == 0) return *none;
  return histories.histories(histories.current_version_history_index()).items();
}

void TakeTasks(RunTransaction& tx, persistence::Commit& commit) {
  commit.new_tasks = std::move(tx.new_tasks());
  commit.new_timers = std::move(tx.new_timers());
  commit.done_timers = std::move(tx.done_timers());
  commit.done_task_ids = std::move(tx.done_task_ids());
}

}  // namespace

absl::Status HistoryEngine::NamespaceStateUnknown(const std::string& namespace_id) {
  return absl::UnavailableError(absl::StrCat(
      "whether namespace ", namespace_id.substr(0, 64),
      " is active on this cluster could not be read from the store; retry"));
}

bool HistoryEngine::ParkIfStandby(const std::string& namespace_id,
                                  const persistence::TimerTaskRow* timer,
                                  const persistence::TaskQueueTask* transfer) {
  if (!activity_of_ || activity_of_(namespace_id).active) return false;
  std::lock_guard lock(parked_mu_);
  if (timer != nullptr) parked_timers_.push_back(*timer);
  if (transfer != nullptr) parked_transfers_.push_back(*transfer);
  if (!parked_check_scheduled_) {
    parked_check_scheduled_ = true;
    timers_.Schedule(clock_.Now() + kParkedCheckInterval, [this] { CheckParked(); });
  }
  return true;
}

size_t HistoryEngine::parked() const {
  std::lock_guard lock(parked_mu_);
  return parked_timers_.size() + parked_transfers_.size();
}

void HistoryEngine::CheckParked() {
  std::vector<persistence::TimerTaskRow> timers;
  std::vector<persistence::TaskQueueTask> transfers;
  {
    std::lock_guard lock(parked_mu_);
    std::erase_if(parked_timers_, [&](const persistence::TimerTaskRow& row) {
      if (!activity_of_(row.task.namespace_id()).active) return false;
      timers.push_back(row);
      return true;
    });
    std::erase_if(parked_transfers_, [&](const persistence::TaskQueueTask& task) {
      if (!activity_of_(task.task.namespace_id()).active) return false;
      transfers.push_back(task);
      return true;
    });
    parked_check_scheduled_ = !parked_timers_.empty() || !parked_transfers_.empty();
    if (parked_check_scheduled_) {
      timers_.Schedule(clock_.Now() + kParkedCheckInterval, [this] { CheckParked(); });
    }
  }
  // The namespace failed over to here: what waited runs now, as the active cluster's.
  for (const persistence::TimerTaskRow& row : timers) ArmTimer(row);
  for (const persistence::TaskQueueTask& task : transfers) ProcessTransferTask(task);
}

absl::StatusOr<std::optional<HistoryEngine::ReplicationGap>> HistoryEngine::ApplyReplicated(
    const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id,
    const std::vector<VersionHistoryItem>& items, const std::vector<HistoryEvent>& events) {
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
  // The source's branch as far as these events go; every event must be on it.
  const VersionItems branch = TruncatedTo(
      items.empty() ? VersionItems{} : ToItems(items), events.back().event_id());
  if (LastEventId(branch) != events.back().event_id()) {
    return absl::InvalidArgumentError("the version history does not reach the task's events");
  }
  for (const HistoryEvent& e : events) {
    if (VersionAt(branch, e.event_id()) != e.version()) {
      return absl::InvalidArgumentError("event version mismatch");
    }
  }
  // A running current run that loses to this one is suppressed first, outside this run's
  // lock; then the run is applied again (at most twice: a second suppression would mean
  // another run became current meanwhile).
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::StatusOr<ReplicatedOutcome> outcome =
        ApplyReplicatedLocked(namespace_id, workflow_id, run_id, branch, events);
    if (!outcome.ok()) return outcome.status();
    if (!outcome->reapply.empty()) {
      if (absl::Status s = Reapply(namespace_id, workflow_id, outcome->reapply); !s.ok()) {
        return s;
      }
    }
    if (outcome->flush_buffered) {
      if (absl::Status s = FlushBufferedForReplication(namespace_id, workflow_id, run_id); !s.ok()) {
        return s;
      }
      continue;
    }
    if (outcome->suppress_run_id.empty()) return outcome->gap;
    if (absl::Status s = SuppressRun(namespace_id, workflow_id, outcome->suppress_run_id,
                                     LastVersion(branch));
        !s.ok()) {
      return s;
    }
  }
  return absl::AbortedError(absl::StrCat("the current run of workflow ", workflow_id,
                                         " kept changing while a replicated run was applied"));
}

namespace {

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

// The run's state: the cached copy, else the stored one; none if the run is new here.
absl::StatusOr<std::optional<MutableStateRecord>> LoadRunState(
    persistence::ExecutionStore& store, const MutableStateRecord* cached,
    const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id) {
  std::optional<MutableStateRecord> state;
  if (cached != nullptr) {
    state = *cached;
  } else {
    absl::StatusOr<MutableStateRecord> loaded = store.GetRun(namespace_id, workflow_id, run_id);
    if (loaded.ok()) {
      state = std::move(*loaded);
    } else if (!absl::IsNotFound(loaded.status())) {
      return loaded.status();
    }
  }
  return state;
}

// The branch of `histories` that `branch` shares the most events with (the current one on a
// tie), or -1 if none; `lca` receives where they part.
int ChooseBranch(const tock::persistence::v1::VersionHistories& histories,
                 const std::vector<VersionHistoryItem>& branch, VersionHistoryItem& lca) {
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

// The events continue a branch that loses to the current one: they are kept on it; the run's
// state stays as it is, and what the workflow received from outside on it is applied again.
void WriteLosingBranch(ShardController& shards, Clock& clock, MutableStateRecord& state, int best,
                       bool extends, bool on_stored, const std::string& token,
                       const VersionItems& target, const VersionHistoryItem& lca,
                       const std::vector<HistoryEvent>& fresh, persistence::Commit& commit,
                       std::vector<HistoryEvent>& reapply) {
  const auto& histories = state.version_histories();
  persistence::BranchAppend append{token, fresh};
  RunTransaction tx(std::move(state), clock.Now(), -1, shards);
  auto* histories_out = tx.state().mutable_version_histories();
  if (extends) {
    histories_out->mutable_histories(best)->mutable_items()->Assign(target.begin(),
                                                                    target.end());
  } else {
    auto* added = histories_out->add_histories();
    added->set_branch_token(token);
    added->mutable_items()->Assign(target.begin(), target.end());
  }
  commit.shard_id = tx.shard_id();
  persistence::RunWrite write = tx.TakeRunWrite(persistence::CurrentRunChange::kNone);
  if (!extends) {
    write.branch_forks.push_back(
        {token, lca.event_id(), on_stored ? histories.histories(best).branch_token() : ""});
  }
  write.branch_appends.push_back(std::move(append));
  commit.runs.push_back(std::move(write));
  AddReappliable(fresh, reapply);
}

// §3.5 steps 4-6: the events leave the current branch. `best` is the branch they share the
// most with, `lca` where they part; the losing or winning branch is written into `commit`.
absl::Status ApplyOnOtherBranch(persistence::ExecutionStore& store, ShardController& shards,
                                Clock& clock, Logger& logger, const std::string& namespace_id,
                                const std::string& workflow_id, const std::string& run_id,
                                const std::vector<VersionHistoryItem>& branch,
                                MutableStateRecord& state, int best, const VersionHistoryItem& lca,
                                int64_t next, const std::vector<HistoryEvent>& fresh,
                                persistence::Commit& commit, std::vector<HistoryEvent>& reapply) {
  const auto& histories = state.version_histories();
  const int current_index = histories.current_version_history_index();
  const VersionItems local = ToItems(histories.histories(best).items());
  const VersionItems current_branch = ToItems(histories.histories(current_index).items());
  const bool extends = EndsAt(local, lca);
  // Another branch (§3.5 steps 4-6): a stored one continued, or a new fork after `lca`
  // (of the current branch or of a stored one: a third history of the run).
  const bool on_stored = best != current_index;
  VersionItems target = TruncatedTo(local, next - 1);
  for (const VersionHistoryItem& item : branch) {
    if (item.event_id() < next) continue;
    if (!target.empty() && target.back().version() == item.version()) {
      target.back().set_event_id(item.event_id());
    } else {
      target.push_back(item);
    }
  }
  const int64_t target_version = LastVersion(target);
  const int64_t current_version = LastVersion(current_branch);
  if (target_version == current_version) {
    return absl::InvalidArgumentError(
        "ConflictResolver encountered replication task version == current branch last "
        "write version");
  }
  tock::persistence::v1::VersionHistories updated = histories;
  std::string token = extends ? histories.histories(best).branch_token()
                              : NewBranchToken(histories);
  if (target_version < current_version) {
    // The branch loses: its events are kept on it; the run's state stays as it is, and
    // what the workflow received from outside on it is applied again to the run.
    WriteLosingBranch(shards, clock, state, best, extends, on_stored, token, target, lca, fresh,
                      commit, reapply);
  } else {
    // The branch wins: it becomes the current one and the run's state is rebuilt from
    // its whole history (§3.5 step 5); the old current branch is kept under a token.
    const int64_t common = on_stored
                               ? LowestCommonAncestor(current_branch, local)->event_id()
                               : lca.event_id();
    std::vector<HistoryEvent> history;
    absl::StatusOr<std::vector<HistoryEvent>> prefix =
        store.ReadEvents(run_id, 1, common + 1, static_cast<int32_t>(common));
    if (!prefix.ok()) return prefix.status();
    history = std::move(*prefix);
    if (on_stored) {
      absl::StatusOr<std::vector<HistoryEvent>> stored = store.ReadBranchEvents(
          run_id, histories.histories(best).branch_token(), common + 1, next,
          static_cast<int32_t>(next - common));
      if (!stored.ok()) return stored.status();
      for (HistoryEvent& e : *stored) history.push_back(std::move(e));
    }
    // Written to the history: what the promoted stored branch does not bring (a fork of
    // a stored branch brings nothing: its part after `common` is written again).
    const size_t first_written = extends ? history.size() : static_cast<size_t>(common);
    for (const HistoryEvent& e : fresh) history.push_back(e);
    if (static_cast<int64_t>(history.size()) != LastEventId(target)) {
      return absl::DataLossError(absl::StrCat("the stored branches of run ", run_id,
                                              " miss events; the run cannot be rebuilt"));
    }
    std::string retire_as = histories.histories(current_index).branch_token();
    if (retire_as.empty()) {
      retire_as = NewBranchToken(updated);
      updated.mutable_histories(current_index)->set_branch_token(retire_as);
    }
    if (!extends) {
      token = NewBranchToken(updated);
      auto* added = updated.add_histories();
      added->set_branch_token(token);
      best = updated.histories_size() - 1;
    }
    updated.mutable_histories(best)->mutable_items()->Assign(target.begin(), target.end());
    updated.set_current_version_history_index(best);

    MutableStateRecord rebuilt;
    rebuilt.mutable_execution()->set_namespace_id(namespace_id);
    rebuilt.mutable_execution()->set_workflow_id(workflow_id);
    rebuilt.mutable_execution()->set_run_id(run_id);
    rebuilt.set_db_version(state.db_version());
    const bool zombie = state.execution().zombie();
    RunTransaction tx(std::move(rebuilt), clock.Now(), -1, shards);
    if (absl::Status s = ApplyReplicatedEvents(tx, history); !s.ok()) return s;
    tx.state().mutable_execution()->set_zombie(zombie);
    *tx.state().mutable_version_histories() = updated;
    tx.VisibilityChanged();
    commit.shard_id = tx.shard_id();
    persistence::RunWrite write = tx.TakeRunWrite(persistence::CurrentRunChange::kNone);
    write.events.erase(write.events.begin(),  // replayed, not written: stored already
                       write.events.begin() + static_cast<std::ptrdiff_t>(first_written));
    // The promoted branch's stored events move to the history; `fresh` follows them.
    write.branch_switch = persistence::BranchSwitch{retire_as, common, extends ? token : ""};
    commit.runs.push_back(std::move(write));
    TakeTasks(tx, commit);
    logger.Info("replication: a newer branch of a run became its current one",
                 {{"workflow_id", workflow_id}, {"run_id", run_id},
                  {"fork_event_id", absl::StrCat(common)},
                  {"version", absl::StrCat(target_version)},
                  {"previous_version", absl::StrCat(current_version)}});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HistoryEngine::ReplicatedOutcome> HistoryEngine::ApplyReplicatedLocked(
    const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id,
    const std::vector<VersionHistoryItem>& branch, const std::vector<HistoryEvent>& events) {
  ReplicatedOutcome outcome;
  persistence::Commit commit;
  std::shared_ptr<RunEntry> entry = Entry(run_id);
  std::unique_lock lock(entry->mu);
  absl::StatusOr<std::optional<MutableStateRecord>> loaded =
      LoadRunState(store_, Cached(*entry), namespace_id, workflow_id, run_id);
  if (!loaded.ok()) return loaded.status();
  std::optional<MutableStateRecord> state = std::move(*loaded);

  if (!state.has_value()) {
    // A run new here (§3.5 step 1): its history must start with it.
    if (events.front().event_id() != 1) {
      outcome.gap = ReplicationGap{0, 0, events.front().event_id(), events.front().version()};
      return outcome;
    }
    persistence::CurrentRunChange change = persistence::CurrentRunChange::kCreate;
    std::string replaced;
    bool zombie = false;
    absl::StatusOr<persistence::CurrentRun> current = store_.GetCurrentRun(namespace_id, workflow_id);
    if (!current.ok() && !absl::IsNotFound(current.status())) return current.status();
    if (current.ok()) {
      absl::StatusOr<MutableStateRecord> other =
          store_.GetRun(namespace_id, workflow_id, current->run_id);
      if (!other.ok()) return other.status();
      const VersionItems other_branch = ToItems(CurrentItemsOf(*other));
      if (!HappensAfter(LastVersion(branch), events.back().task_id(), LastVersion(other_branch),
                        other->last_event_task_id())) {
        // The current run is newer: this one is kept beside it, not run (a zombie).
        zombie = true;
        change = persistence::CurrentRunChange::kNone;
      } else if (current->status == enums::WORKFLOW_EXECUTION_STATUS_RUNNING &&
                 !other->execution().zombie()) {
        outcome.suppress_run_id = current->run_id;
        return outcome;
      } else {
        change = persistence::CurrentRunChange::kReplace;
        replaced = current->run_id;
      }
    }
    MutableStateRecord fresh_state;
    auto* exec = fresh_state.mutable_execution();
    exec->set_namespace_id(namespace_id);
    exec->set_workflow_id(workflow_id);
    exec->set_run_id(run_id);
    RunTransaction tx(std::move(fresh_state), clock_.Now(), -1, shards_);
    if (absl::Status s = ApplyReplicatedEvents(tx, events); !s.ok()) return s;
    tx.state().mutable_execution()->set_zombie(zombie);
    commit.shard_id = tx.shard_id();
    commit.runs.push_back(tx.TakeRunWrite(change, replaced));
    TakeTasks(tx, commit);
    // A zombie's own signals belong to the run that beat it (§3.5 step 1).
    if (zombie) AddReappliable(events, outcome.reapply);
  } else if (state->buffered_events_size() > 0) {
    // §3.5 step 3: what arrived while this cluster's worker held a workflow task is written
    // first, as this cluster's (FlushBufferedForReplication), then these events are applied.
    outcome.flush_buffered = true;
    return outcome;
  } else {
    // Which of the run's branches these events continue or leave (§3.5 step 4).
    const auto& histories = state->version_histories();
    const int current_index = histories.current_version_history_index();
    VersionHistoryItem lca;
    int best = ChooseBranch(histories, branch, lca);
    if (best < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the history of run ", run_id, " shares no event with the replicated one"));
    }
    const VersionItems local = ToItems(histories.histories(best).items());
    const bool extends = EndsAt(local, lca);
    // The events after what the chosen branch already holds.
    const int64_t next = extends ? LastEventId(local) + 1 : lca.event_id() + 1;
    const std::vector<HistoryEvent> fresh = EventsFrom(events, next);
    const bool lost = best != current_index || state->execution().zombie();
    if (fresh.empty()) {
      // All here already. On a losing branch or a zombie, what they received from outside
      // is applied again (each at most once): the first delivery's reapply may have failed
      // after its events were written.
      if (lost) AddReappliable(events, outcome.reapply);
      return outcome;
    }
    if (fresh.front().event_id() > next) {
      outcome.gap = ReplicationGap{next - 1, VersionAt(extends ? local : branch, next - 1),
                                   fresh.front().event_id(), fresh.front().version()};
      return outcome;
    }
    if (extends && best == current_index) {
      // The common case: the events continue the current branch. A zombie's own signals
      // belong to the run that beat it (§3.5 step 6, an update as zombie).
      if (lost) AddReappliable(fresh, outcome.reapply);
      RunTransaction tx(std::move(*state), clock_.Now(), -1, shards_);
      if (absl::Status s = ApplyReplicatedEvents(tx, fresh); !s.ok()) return s;
      commit.shard_id = tx.shard_id();
      commit.runs.push_back(tx.TakeRunWrite(persistence::CurrentRunChange::kNone));
      TakeTasks(tx, commit);
    } else {
      if (absl::Status s = ApplyOnOtherBranch(store_, shards_, clock_, logger_, namespace_id,
                                              workflow_id, run_id, branch, *state, best, lca,
                                              next, fresh, commit, outcome.reapply);
          !s.ok()) {
        return s;
      }
    }
  }
  MarkClosingRunsForArchival(commit, namespace_id);
  IndexSearchAttributes(commit, namespace_id);
  if (absl::Status w = WriteCommit(commit, /*replicated=*/true); !w.ok()) {
    Uncache(run_id, *entry);
    return w;
  }
  CountClosedRuns(commit);
  Cache(run_id, *entry, std::move(commit.runs.front().state), commit);
  lock.unlock();  // publishing hands tasks on, which may come back to this run
  Publish(commit, run_id);
  return outcome;
}

absl::Status HistoryEngine::FlushBufferedForReplication(const std::string& namespace_id,
                                                        const std::string& workflow_id,
                                                        const std::string& run_id) {
  absl::StatusOr<MutableStateRecord> run = store_.GetRun(namespace_id, workflow_id, run_id);
  if (!run.ok()) return run.status();
  const int64_t last_version = LastVersion(ToItems(CurrentItemsOf(*run)));
  if (!owns_version_ || !owns_version_(last_version)) {
    return absl::InternalError(
        "Workflow encountered workflow with buffered events but last write not from current "
        "cluster");
  }
  // Written as this cluster's last write (as a suppression's termination is): the other
  // clusters receive the events and, where the namespace is active, apply the signals
  // again to the branch that wins.
  NamespaceRef ns;
  ns.id = namespace_id;
  ns.failover_version = last_version;
  ns.conflict_resolution = true;
  return Mutate(ns, {namespace_id, workflow_id, run_id}, [&](RunTransaction& tx) -> absl::Status {
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

absl::Status HistoryEngine::SuppressRun(const std::string& namespace_id,
                                        const std::string& workflow_id, const std::string& run_id,
                                        int64_t by_version) {
  absl::StatusOr<MutableStateRecord> run = store_.GetRun(namespace_id, workflow_id, run_id);
  if (!run.ok()) return run.status();
  const int64_t last_version = LastVersion(ToItems(CurrentItemsOf(*run)));
  if (owns_version_ && owns_version_(last_version)) {
    // Last written here: this cluster ends it, as its own write at that version, which the
    // other clusters receive like any other (§3.5 step 1, Temporal's SuppressBy).
    NamespaceRef ns;
    ns.id = namespace_id;
    ns.failover_version = last_version;
    ns.conflict_resolution = true;
    temporal::api::common::v1::Payloads details;
    auto* payload = details.add_payloads();
    (*payload->mutable_metadata())["encoding"] = "json/plain";
    payload->set_data(absl::StrCat("\"terminated by version: ", by_version, "\""));
    absl::Status s = Mutate(ns, {namespace_id, workflow_id, run_id}, [&](RunTransaction& tx) {
      if (tx.IsOpen()) {
        tx.Terminate("Terminate Workflow Due To Version Conflict.", details, kHistoryServiceIdentity);
      }
      return absl::OkStatus();
    });
    if (s.ok()) {
      logger_.Info("replication: a run that lost a version conflict was terminated",
                   {{"workflow_id", workflow_id}, {"run_id", run_id},
                    {"by_version", absl::StrCat(by_version)}});
    }
    return s;
  }
  // Last written by another cluster: that cluster decides its end; here it becomes a zombie.
  std::shared_ptr<RunEntry> entry = Entry(run_id);
  std::lock_guard lock(entry->mu);
  MutableStateRecord state = std::move(*run);
  if (const MutableStateRecord* cached = Cached(*entry)) state = *cached;
  RunTransaction tx(std::move(state), clock_.Now(), -1, shards_);
  tx.state().mutable_execution()->set_zombie(true);
  persistence::Commit commit;
  commit.shard_id = tx.shard_id();
  commit.runs.push_back(tx.TakeRunWrite(persistence::CurrentRunChange::kNone));
  if (absl::Status w = WriteCommit(commit, /*replicated=*/true); !w.ok()) {
    Uncache(run_id, *entry);
    return w;
  }
  Cache(run_id, *entry, std::move(commit.runs.front().state), commit);
  return absl::OkStatus();
}

absl::Status HistoryEngine::Reapply(const std::string& namespace_id,
                                    const std::string& workflow_id,
                                    const std::vector<HistoryEvent>& events) {
  const NamespaceActivity activity =
      activity_of_ ? activity_of_(namespace_id) : NamespaceActivity{};
  if (activity.unknown) return NamespaceStateUnknown(namespace_id);
  if (activity.active) return ReapplyHere(activity, namespace_id, workflow_id, events);
  if (!forward_reapply_) {
    logger_.Warn("replication: events of a losing branch are not applied again (the namespace "
                 "is not active here and there is no cluster to forward them to)",
                 {{"workflow_id", workflow_id}, {"events", absl::StrCat(events.size())}});
    return absl::OkStatus();
  }
  // `events` are reappliable ones (ApplyReplicatedLocked chose them).
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

absl::Status HistoryEngine::ReapplyEvents(const std::string& namespace_id,
                                          const std::string& workflow_id,
                                          const std::vector<HistoryEvent>& events) {
  if (events.size() > kMaxReapplyEvents) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", kMaxReapplyEvents, " events are applied again at once"));
  }
  if (workflow_id.empty()) return absl::InvalidArgumentError("WorkflowId is not set on request.");
  const NamespaceActivity activity =
      activity_of_ ? activity_of_(namespace_id) : NamespaceActivity{};
  if (activity.unknown) return NamespaceStateUnknown(namespace_id);
  if (!activity.active) {
    return NamespaceNotActiveError(activity.name, activity.active_cluster,
                                   activity.current_cluster);
  }
  return ReapplyHere(activity, namespace_id, workflow_id, events);
}

absl::Status HistoryEngine::ReapplyHere(const NamespaceActivity& activity,
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
    // One request id per replicated event: applied once however often it arrives.
    const std::string request_id = absl::StrCat("reapply:", e.event_id(), ":", e.version(), ":",
                                                e.task_id());
    absl::Status s;
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
        s = SignalWorkflow(ns, req);
        break;
      }
      case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED: {
        wf::RequestCancelWorkflowExecutionRequest req;
        *req.mutable_workflow_execution() = execution;
        req.set_reason(e.workflow_execution_cancel_requested_event_attributes().cause());
        req.set_identity(e.workflow_execution_cancel_requested_event_attributes().identity());
        req.set_request_id(request_id);
        s = RequestCancelWorkflow(ns, req);
        break;
      }
      case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED: {
        const auto& a = e.workflow_execution_terminated_event_attributes();
        wf::TerminateWorkflowExecutionRequest req;
        *req.mutable_workflow_execution() = execution;
        req.set_reason(a.reason());
        *req.mutable_details() = a.details();
        req.set_identity(a.identity());
        s = TerminateWorkflow(ns, req);
        break;
      }
      default:
        s = ReadmitUpdate(ns, workflow_id, e, request_id);
        break;
    }
    if (s.ok()) continue;
    logger_.Warn("replication: an event of a losing branch could not be applied again",
                 {{"workflow_id", workflow_id},
                  {"event", enums::EventType_Name(e.event_type())},
                  {"error", std::string(s.message().substr(0, 300))}});
    // A run that ended or a refused event stays so; a store or ownership that cannot take
    // the write now is tried again with the task's next delivery.
    switch (s.code()) {
      case absl::StatusCode::kUnavailable:
      case absl::StatusCode::kDeadlineExceeded:
      case absl::StatusCode::kAborted:
      case absl::StatusCode::kResourceExhausted:
      case absl::StatusCode::kFailedPrecondition:
        if (retry.ok()) retry = s;
        break;
      default:
        break;
    }
  }
  return retry;
}

absl::Status HistoryEngine::ReadmitUpdate(const NamespaceRef& ns, const std::string& workflow_id,
                                          const HistoryEvent& e, const std::string& request_id) {
  const temporal::api::update::v1::Request& request =
      e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ADMITTED
          ? e.workflow_execution_update_admitted_event_attributes().request()
          : e.workflow_execution_update_accepted_event_attributes().accepted_request();
  const std::string& update_id = request.meta().update_id();
  absl::StatusOr<std::string> run_id = ResolveRunId(ns.id, workflow_id, "");
  if (!run_id.ok()) return run_id.status();
  return Mutate(ns, {ns.id, workflow_id, *run_id}, [&](RunTransaction& tx) -> absl::Status {
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
