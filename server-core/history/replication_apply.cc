// Applying another cluster's events to this cluster's copy of a run (reference/replication.md
// §3.5), and keeping a standby's own timers and follow-up work from running until the
// namespace is active here (§4.4, §4.5).
//
// Built so far: the same branch only. A new run is created from its first batch; events
// this cluster has are skipped; a gap is reported for the caller to fill (Temporal's
// resend). Diverged histories (conflict resolution, branches) and zombie runs are refused
// with FAILED_PRECONDITION, so the task is retried rather than applied wrongly.
#include "absl/strings/str_cat.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/replicated_events.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;

constexpr absl::Duration kParkedCheckInterval = absl::Seconds(1);

using tock::persistence::v1::VersionHistoryItem;

const google::protobuf::RepeatedPtrField<VersionHistoryItem>* CurrentItems(
    const MutableStateRecord& s) {
  const auto& histories = s.version_histories();
  if (histories.histories_size() == 0) return nullptr;
  return &histories.histories(histories.current_version_history_index()).items();
}

int64_t LastVersion(const MutableStateRecord& s) {
  const auto* items = CurrentItems(s);
  return items == nullptr || items->empty() ? 0 : items->rbegin()->version();
}

// The version of event `event_id` on a branch: that of the first item reaching it; -1 when
// the branch is shorter.
template <typename Items>
int64_t VersionAt(const Items& items, int64_t event_id) {
  for (const VersionHistoryItem& item : items) {
    if (item.event_id() >= event_id) return item.version();
  }
  return -1;
}

}  // namespace

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
  persistence::Commit commit;
  {
    std::shared_ptr<RunEntry> entry = Entry(run_id);
    std::lock_guard lock(entry->mu);
    std::optional<MutableStateRecord> state;
    if (const MutableStateRecord* cached = Cached(*entry)) {
      state = *cached;
    } else {
      absl::StatusOr<MutableStateRecord> loaded = store_.GetRun(namespace_id, workflow_id, run_id);
      if (loaded.ok()) {
        state = std::move(*loaded);
      } else if (!absl::IsNotFound(loaded.status())) {
        return loaded.status();
      }
    }
    std::vector<HistoryEvent> fresh;
    persistence::CurrentRunChange change = persistence::CurrentRunChange::kNone;
    std::string replaced;
    if (!state.has_value()) {
      if (events.front().event_id() != 1) {
        return ReplicationGap{0, 0, events.front().event_id(), events.front().version()};
      }
      state.emplace();
      auto* exec = state->mutable_execution();
      exec->set_namespace_id(namespace_id);
      exec->set_workflow_id(workflow_id);
      exec->set_run_id(run_id);
      fresh = events;
      absl::StatusOr<persistence::CurrentRun> current = store_.GetCurrentRun(namespace_id, workflow_id);
      if (absl::IsNotFound(current.status())) {
        change = persistence::CurrentRunChange::kCreate;
      } else if (!current.ok()) {
        return current.status();
      } else if (current->status == enums::WORKFLOW_EXECUTION_STATUS_RUNNING) {
        return absl::FailedPreconditionError(absl::StrCat(
            "run ", current->run_id, " of workflow ", workflow_id,
            " is running here: a replicated run beside it (a zombie) is not built yet"));
      } else {
        change = persistence::CurrentRunChange::kReplace;
        replaced = current->run_id;
      }
    } else {
      const int64_t next = state->next_event_id();
      // Both branches must hold the same last event of this one (the same id and version:
      // one cluster wrote it, so the same history up to it); else they diverged.
      if (const auto* local = CurrentItems(*state); local != nullptr && !items.empty() &&
                                                    next > 1 &&
                                                    VersionAt(items, next - 1) != -1 &&
                                                    VersionAt(items, next - 1) !=
                                                        VersionAt(*local, next - 1)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the history of run ", run_id, " diverged at event ", next - 1, " (version ",
            VersionAt(*local, next - 1), " here, ", VersionAt(items, next - 1),
            " on the source): conflict resolution is not built yet"));
      }
      if (events.back().event_id() < next) return std::nullopt;  // all here already
      if (events.front().event_id() > next) {
        return ReplicationGap{next - 1, LastVersion(*state), events.front().event_id(),
                              events.front().version()};
      }
      for (const HistoryEvent& e : events) {
        if (e.event_id() >= next) fresh.push_back(e);
      }
      if (fresh.front().version() < LastVersion(*state)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the history of run ", run_id, " diverged (version ", fresh.front().version(),
            " after ", LastVersion(*state), " here): conflict resolution is not built yet"));
      }
    }
    RunTransaction tx(std::move(*state), clock_.Now(), -1, shards_);
    if (absl::Status s = ApplyReplicatedEvents(tx, fresh); !s.ok()) return s;
    commit.shard_id = tx.shard_id();
    commit.runs.push_back(tx.TakeRunWrite(change, replaced));
    commit.new_tasks = std::move(tx.new_tasks());
    commit.new_timers = std::move(tx.new_timers());
    commit.done_timers = std::move(tx.done_timers());
    commit.done_task_ids = std::move(tx.done_task_ids());
    MarkClosingRunsForArchival(commit, namespace_id);
    IndexSearchAttributes(commit, namespace_id);
    if (absl::Status w = WriteCommit(commit, /*replicated=*/true); !w.ok()) {
      Uncache(run_id, *entry);
      return w;
    }
    CountClosedRuns(commit);
    Cache(run_id, *entry, std::move(commit.runs.front().state), commit);
  }
  Publish(commit, run_id);
  return std::nullopt;
}

}  // namespace tock::server::history
