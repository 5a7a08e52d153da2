// Applying a pending activity's state another cluster sent (a SyncActivity task), with
// Temporal's rules (ndc/activity_state_replicator.go, reference/replication.md §3.7): the run
// must hold the activity's scheduled event on a history the source's extends; the newer state
// wins (version, then stamp, then attempt, then last heartbeat time); its fields are copied
// and the activity's timers made again from them, as the active side made them, so that
// after a failover this cluster times the activity out and retries it with its heartbeat
// details (standby timers wait, parked, until then).
#include "absl/strings/str_cat.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "server-core/history/replication_applier.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using tock::persistence::v1::ActivityInfo;
using tock::persistence::v1::TimerTask;
using tock::persistence::v1::VersionHistoryItem;

template <typename Items>
std::optional<VersionHistoryItem> LastItem(const Items& items) {
  if (items.empty()) return std::nullopt;
  return *std::prev(items.end());
}

// The last item two version histories share (Temporal's FindLCAVersionHistoryItem): walking
// both from their ends, the first equal version, at the lower of the two event ids.
template <typename A, typename B>
std::optional<VersionHistoryItem> LowestCommonAncestor(const A& a, const B& b) {
  int ia = static_cast<int>(a.size()) - 1;
  int ib = static_cast<int>(b.size()) - 1;
  while (ia >= 0 && ib >= 0) {
    const VersionHistoryItem& x = a[ia];
    const VersionHistoryItem& y = b[ib];
    if (x.version() == y.version()) return x.event_id() > y.event_id() ? y : x;
    if (x.version() > y.version()) {
      --ia;
    } else {
      --ib;
    }
  }
  return std::nullopt;
}

bool SameItem(const std::optional<VersionHistoryItem>& a, const VersionHistoryItem& b) {
  return a && a->event_id() == b.event_id() && a->version() == b.version();
}

// compareActivity: whether the incoming state is at least as new as the local one.
bool IncomingWins(const ActivityInfo& local, int64_t version, const ActivityInfo& in) {
  if (local.version() != version) return local.version() < version;
  if (local.stamp() != in.stamp()) return local.stamp() < in.stamp();
  if (local.attempt() != in.attempt()) return local.attempt() < in.attempt();
  if (local.has_last_heartbeat_time() && in.has_last_heartbeat_time()) {
    return FromProtoTime(local.last_heartbeat_time()) <= FromProtoTime(in.last_heartbeat_time());
  }
  return !local.has_last_heartbeat_time() || in.has_last_heartbeat_time();
}

// The incoming state replaces what no event carries; the rest (ids, type, queue, timeouts,
// retry policy, cancellation) came with the events and stays.
void CopyProgress(const ActivityInfo& in, int64_t version, ActivityInfo& a) {
  a.set_version(version);
  a.set_attempt(in.attempt());
  a.set_stamp(in.stamp());
  *a.mutable_scheduled_time() = in.scheduled_time();
  *a.mutable_current_attempt_scheduled_time() = in.current_attempt_scheduled_time();
  auto copy = [](bool has, const auto& from, auto* to, auto clear) {
    if (has) {
      *to = from;
    } else {
      clear();
    }
  };
  copy(in.has_started_time(), in.started_time(), a.mutable_started_time(),
       [&] { a.clear_started_time(); });
  copy(in.has_heartbeat_details(), in.heartbeat_details(), a.mutable_heartbeat_details(),
       [&] { a.clear_heartbeat_details(); });
  copy(in.has_last_heartbeat_time(), in.last_heartbeat_time(), a.mutable_last_heartbeat_time(),
       [&] { a.clear_last_heartbeat_time(); });
  copy(in.has_last_failure(), in.last_failure(), a.mutable_last_failure(),
       [&] { a.clear_last_failure(); });
  a.set_started_identity(in.started_identity());
  a.set_request_id(in.request_id());
  a.set_last_worker_identity(in.last_worker_identity());
}

// The timers the active side holds for the activity in this state (activity_tasks.cc
// RecordActivityTaskStarted and RetryActivity): a started attempt's start-to-close and
// heartbeat timeouts; an attempt waiting for its retry, the retry (which dispatches it with
// its stamp); an attempt not started, its schedule-to-start (activity_timeouts.h); the
// schedule-to-close deadline of the whole activity. An unstarted first attempt keeps the
// task queued when its ActivityTaskScheduled event was applied.
void RecreateTimers(RunTransaction& tx, ActivityInfo& a) {
  for (const auto& key : a.timers()) tx.RetireTimer(key);
  a.clear_timers();
  auto add = [&](TimerTask::Kind kind, enums::TimeoutType type, bool stamped, absl::Time when) {
    TimerTask t;
    t.set_kind(kind);
    t.set_event_id(a.scheduled_event_id());
    if (type != enums::TIMEOUT_TYPE_UNSPECIFIED) t.set_timeout_type(type);
    if (stamped) t.set_stamp(a.stamp());
    if (kind == TimerTask::KIND_ACTIVITY_RETRY) t.set_attempt(a.attempt());
    *a.add_timers() = tx.AddTimer(when, t);
  };
  if (a.has_started_time()) {
    const absl::Time started = FromProtoTime(a.started_time());
    add(TimerTask::KIND_ACTIVITY_TIMEOUT, enums::TIMEOUT_TYPE_START_TO_CLOSE, true,
        started + FromProtoDuration(a.start_to_close_timeout()));
    const absl::Duration heartbeat = FromProtoDuration(a.heartbeat_timeout());
    if (heartbeat > absl::ZeroDuration()) {
      const absl::Time last =
          a.has_last_heartbeat_time() ? FromProtoTime(a.last_heartbeat_time()) : started;
      add(TimerTask::KIND_ACTIVITY_TIMEOUT, enums::TIMEOUT_TYPE_HEARTBEAT, true, last + heartbeat);
    }
  } else if (a.attempt() > 1) {
    add(TimerTask::KIND_ACTIVITY_RETRY, enums::TIMEOUT_TYPE_UNSPECIFIED, true,
        FromProtoTime(a.current_attempt_scheduled_time()));
  }
  const absl::Duration s2s = FromProtoDuration(a.schedule_to_start_timeout());
  if (!a.has_started_time() && s2s > absl::ZeroDuration()) {
    add(TimerTask::KIND_ACTIVITY_TIMEOUT, enums::TIMEOUT_TYPE_SCHEDULE_TO_START, true,
        FromProtoTime(a.current_attempt_scheduled_time()) + s2s);
  }
  const absl::Duration s2c = FromProtoDuration(a.schedule_to_close_timeout());
  if (s2c > absl::ZeroDuration()) {
    add(TimerTask::KIND_ACTIVITY_TIMEOUT, enums::TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, false,
        FromProtoTime(a.scheduled_time()) + s2c);
  }
}

}  // namespace

absl::StatusOr<std::optional<ReplicationGap>> ReplicationApplier::ApplySyncActivity(
    const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id,
    const std::vector<VersionHistoryItem>& items, int64_t version, const ActivityInfo& incoming) {
  if (items.empty()) return absl::InvalidArgumentError("the SyncActivity task has no version history");
  std::optional<ReplicationGap> gap;
  absl::Status written = engine_.WriteReplicated(
      {namespace_id, workflow_id, run_id},
      [&](std::optional<MutableStateRecord>& state, persistence::Commit& commit) {
        // The run's start has not arrived yet, or the run is gone: its events bring the rest.
        if (!state.has_value()) return absl::OkStatus();
        const auto& histories = state->version_histories();
        if (histories.histories_size() == 0) return absl::OkStatus();
        const auto& local = histories.histories(histories.current_version_history_index()).items();
        const std::optional<VersionHistoryItem> lca = LowestCommonAncestor(local, items);
        const std::optional<VersionHistoryItem> local_last = LastItem(local);
        const std::optional<VersionHistoryItem> incoming_last = LastItem(items);
        if (!lca || !local_last) return absl::OkStatus();
        if (SameItem(local_last, *lca) || SameItem(incoming_last, *lca)) {
          // One history extends the other: the activity's scheduled event must be here.
          if (incoming.scheduled_event_id() > lca->event_id()) {
            gap = ReplicationGap{lca->event_id(), lca->version(), 0, 0};  // to the source's end
            return absl::OkStatus();
          }
        } else if (local_last->version() > incoming_last->version()) {
          return absl::OkStatus();  // diverged, and this cluster's history wins
        } else {
          // Diverged, and the source's history wins: its events after the common point first.
          gap = ReplicationGap{lca->event_id(), lca->version(), 0, 0};
          return absl::OkStatus();
        }
        if (state->execution().status() != enums::WORKFLOW_EXECUTION_STATUS_RUNNING) {
          return absl::OkStatus();
        }
        auto it = state->mutable_activities()->find(incoming.scheduled_event_id());
        if (it == state->mutable_activities()->end()) return absl::OkStatus();  // closed here
        if (!IncomingWins(it->second, version, incoming)) return absl::OkStatus();

        RunTransaction tx(std::move(*state), clock_.Now(), -1, shards_);
        ActivityInfo& a = (*tx.state().mutable_activities())[incoming.scheduled_event_id()];
        CopyProgress(incoming, version, a);
        RecreateTimers(tx, a);
        commit.shard_id = tx.shard_id();
        commit.runs.push_back(tx.TakeRunWrite(persistence::CurrentRunChange::kNone));
        commit.new_timers = std::move(tx.new_timers());
        commit.done_timers = std::move(tx.done_timers());
        return absl::OkStatus();
      });
  if (!written.ok()) return written;
  return gap;
}

}  // namespace tock::server::history
