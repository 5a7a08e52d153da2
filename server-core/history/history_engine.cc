#include "server-core/history/versioning.h"
#include "server-core/history/history_engine.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "lib/common/cron_schedule.h"
#include "lib/common/ids.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "lib/common/status.h"
#include "server-core/history/failover_workflow_task.h"
#include "server-core/history/request_limits.h"
#include "server-core/history/sync_activity_tasks.h"
#include "server-core/persistence/read_retry.h"
#include "server-core/history/task_token.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using tock::persistence::v1::TimerTask;

constexpr char kCommitThenFail[] = "tock/commit-then-fail";
constexpr char kNothingToWrite[] = "tock/nothing-to-write";
constexpr absl::Duration kDefaultWorkflowTaskTimeout = absl::Seconds(10);
constexpr absl::Duration kMaxWorkflowTaskTimeout = absl::Seconds(120);
// The run cache's bounds. A run not cached costs one read of its row at its next use, so
// the cache only has to hold the runs being worked on, not every open one: 10,000 idle runs
// took 30 MB when each stayed cached. A freshly started run is charged about 2.4 KB, so
// the byte bound keeps about 3,500 of those; the count bound keeps many tiny entries (runs
// only read, whose state is not cached) from adding up.
constexpr size_t kMaxCachedRuns = 4096;
constexpr size_t kMaxCachedRunBytes = 8 << 20;
// Workflow id locks hold nothing: these are kept only to spare allocations to a busy id,
// and are bounded by count alone.
constexpr size_t kMaxIdLocks = 1024;

absl::Status WorkflowNotFound(const std::string& workflow_id, const std::string& run_id) {
  return WithDetail(absl::NotFoundError(absl::StrCat("Workflow execution not found. WorkflowId: ",
                                                     workflow_id, ", RunId: ", run_id, ".")),
                    temporal::api::errordetails::v1::NotFoundFailure());
}

absl::Status AlreadyCompleted() {
  return WithDetail(absl::NotFoundError("Workflow execution already completed."),
                    temporal::api::errordetails::v1::NotFoundFailure());
}

absl::Status TaskNotFound(absl::string_view what) {
  return absl::NotFoundError(absl::StrCat(what, " not found."));
}

absl::Status ValidateId(const std::string& value, absl::string_view field) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " is not set on request."));
  if (value.size() > 1000) {
    return absl::InvalidArgumentError(absl::StrCat(field, " exceeds length limit (1000 characters)."));
  }
  return absl::OkStatus();
}

bool HasPayload(const absl::Status& s) { return s.GetPayload(kCommitThenFail).has_value(); }

// One replication task per run whose new events belong to a global namespace (a version
// above 0; a local namespace's events carry 0), in the commit's order of runs: a
// continue-as-new's old run, then the new one (reference/replication.md §3.1).
void AddReplicationTasks(persistence::Commit& commit) {
  // Before the change's SyncActivity tasks (Mutate), which may name an activity these
  // events schedule: a receiver applies them in order.
  std::vector<persistence::ReplicationTaskRow> sync_activity = std::move(commit.new_replication_tasks);
  commit.new_replication_tasks.clear();
  for (const persistence::RunWrite& run : commit.runs) {
    if (run.events.empty() || run.events.front().version() <= 0) continue;
    persistence::ReplicationTaskRow& row = commit.new_replication_tasks.emplace_back();
    const auto& exec = run.state.execution();
    row.task.set_namespace_id(exec.namespace_id());
    row.task.set_workflow_id(exec.workflow_id());
    row.task.set_run_id(exec.run_id());
    row.task.set_first_event_id(run.events.front().event_id());
    row.task.set_next_event_id(run.events.back().event_id() + 1);
    row.task.set_version(run.events.front().version());
  }
  for (persistence::ReplicationTaskRow& row : sync_activity) {
    commit.new_replication_tasks.push_back(std::move(row));
  }
}

// Whether the shard controller refused one of the commit's ids (kNotOwned: the shard's block
// was used up and its range could not be renewed). Such a commit is never written.
bool HoldsRefusedTaskId(const persistence::Commit& commit) {
  for (const persistence::RunWrite& run : commit.runs) {
    for (const HistoryEvent& e : run.events) {
      if (e.task_id() == ShardController::kNotOwned) return true;
    }
  }
  for (const persistence::TimerTaskRow& t : commit.new_timers) {
    if (t.task_id == ShardController::kNotOwned) return true;
  }
  return false;
}

// The writes of the runs a change carries besides its own, after its own (commit.runs[0]):
// the following run (runs[1]), which takes over the workflow id, then the companion run.
void AddOtherRunWrites(RunTransaction& tx, const std::string& run_id, persistence::Commit& commit) {
  if (RunTransaction* next = tx.following_run()) {
    commit.runs.push_back(next->TakeRunWrite(
        persistence::CurrentRunChange::kReplace,
        tx.following_replaces().empty() ? run_id : tx.following_replaces()));
    for (auto& t : next->new_tasks()) commit.new_tasks.push_back(std::move(t));
    for (auto& t : next->new_timers()) commit.new_timers.push_back(std::move(t));
  }
  if (RunTransaction* other = tx.companion_run()) {
    commit.runs.push_back(other->TakeRunWrite(persistence::CurrentRunChange::kNone));
    for (auto& t : other->new_tasks()) commit.new_tasks.push_back(std::move(t));
    for (auto& t : other->new_timers()) commit.new_timers.push_back(std::move(t));
    for (auto& t : other->done_timers()) commit.done_timers.push_back(std::move(t));
    for (int64_t id : other->done_task_ids()) commit.done_task_ids.push_back(id);
  }
}

}  // namespace

wf::PollWorkflowTaskQueueResponse WorkflowTaskOf(const MutableStateRecord& run,
                                                 std::vector<HistoryEvent> events, bool speculative) {
  const auto& exec = run.execution();
  const auto& wft = run.workflow_task();
  wf::PollWorkflowTaskQueueResponse out;
  TaskToken token = MakeWorkflowTaskToken(run);
  token.set_speculative(speculative);
  out.set_task_token(EncodeTaskToken(token));
  out.mutable_workflow_execution()->set_workflow_id(exec.workflow_id());
  out.mutable_workflow_execution()->set_run_id(exec.run_id());
  out.mutable_workflow_type()->set_name(exec.workflow_type());
  out.set_previous_started_event_id(run.last_completed_workflow_task_started_event_id());
  out.set_started_event_id(wft.started_event_id());
  out.set_attempt(wft.attempt());
  out.set_backlog_count_hint(0);
  for (auto& e : events) *out.mutable_history()->add_events() = std::move(e);
  out.mutable_workflow_execution_task_queue()->set_name(exec.task_queue());
  out.mutable_workflow_execution_task_queue()->set_kind(enums::TASK_QUEUE_KIND_NORMAL);
  *out.mutable_scheduled_time() = wft.scheduled_time();
  *out.mutable_started_time() = wft.started_time();
  return out;
}

absl::Status NothingToWrite() {
  absl::Status status = absl::AbortedError("nothing to write");
  status.SetPayload(kNothingToWrite, absl::Cord("1"));
  return status;
}

absl::Status CommitThenFail(absl::Status status) {
  status.SetPayload(kCommitThenFail, absl::Cord("1"));
  return status;
}

HistoryEngine::HistoryEngine(persistence::ExecutionStore& store, ShardController& shards,
                             matching::MatchingEngine& matching, Clock& clock, TimerThread& timers,
                             Logger& logger)
    : store_(store),
      shards_(shards),
      matching_(matching),
      clock_(clock),
      timers_(timers),
      logger_(logger),
      timer_queue_(std::make_unique<TimerQueue>(
          store, shards.shard_count(), timers, clock, logger,
          [this](const persistence::TimerTaskRow& row) { return FireTimer(row); })),
      task_sink_([this](persistence::TaskQueueTask task) { matching_.AddTask(std::move(task)); }),
      replication_(store, shards, clock, logger, *this, *this),
      parking_(
          activity_of_, timers, clock, [this](const persistence::TimerTaskRow& row) { ArmTimer(row); },
          [this](const persistence::TaskQueueTask& task) { ProcessTransferTask(task); }),
      queries_(*this, clock, timers),
      updates_(clock, timers),
      reset_(*this, store, shards, limits_),
      runs_({.max_entries = kMaxCachedRuns, .max_bytes = kMaxCachedRunBytes}),
      id_locks_({.max_entries = kMaxIdLocks, .max_bytes = std::numeric_limits<size_t>::max()}) {}

HistoryEngine::~HistoryEngine() {
  shards_.SetListener(nullptr);
  // The asynchronous changes still in flight end first: their commits call back into this
  // engine. (Their callers, gRPC calls, are over by now; these are the last few commits.)
  {
    std::unique_lock lock(async_mu_);
    async_done_.wait(lock, [&] { return async_changes_ == 0; });
  }
  turns_.Stop();
  after_commit_->Stop();
  StopBackground();
}

void HistoryEngine::StopBackground() { timer_queue_->Stop(); }

void HistoryEngine::WakeTimers() { timer_queue_->Wake(); }

void HistoryEngine::SetMetrics(const ServerMetrics& metrics) {
  metrics_ = &metrics;
  timer_queue_->SetMetrics(metrics);
}

void HistoryEngine::CountClosedRuns(const persistence::Commit& commit) {
  for (const persistence::RunWrite& run : commit.runs) {
    if (!run.visibility || !run.visibility->close_time) continue;
    switch (run.state.execution().status()) {
      case enums::WORKFLOW_EXECUTION_STATUS_COMPLETED:
        metrics_->workflow_success.Increment();
        break;
      case enums::WORKFLOW_EXECUTION_STATUS_FAILED:
        metrics_->workflow_failed.Increment();
        break;
      case enums::WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
        metrics_->workflow_timeout.Increment();
        break;
      case enums::WORKFLOW_EXECUTION_STATUS_TERMINATED:
        metrics_->workflow_terminate.Increment();
        break;
      case enums::WORKFLOW_EXECUTION_STATUS_CANCELED:
        metrics_->workflow_cancel.Increment();
        break;
      case enums::WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
        metrics_->workflow_continued_as_new.Increment();
        break;
      default:
        break;
    }
  }
}

void HistoryEngine::ReleaseWaiters() {
  releasing_waiters_ = true;
  std::vector<std::function<void()>> wake;
  {
    std::lock_guard lock(waiters_mu_);
    for (auto& [run_id, waiters] : history_waiters_) {
      for (auto& [id, fn] : waiters.wakes) wake.push_back(std::move(fn));
    }
    history_waiters_.clear();
  }
  for (auto& w : wake) w();
  queries_.ReleaseAll();
}

absl::Status HistoryEngine::Recover() {
  // Workflow and activity tasks stay stored: matching reads each queue from the database
  // when the queue is first touched, and pages its backlog from there.
  matching_.SetTaskLoader([this](const std::string& namespace_id, const std::string& task_queue,
                                 persistence::TaskKind kind, int32_t limit) {
    if (queue_shards_ == nullptr) return store_.LoadQueueTasks(namespace_id, task_queue, kind, limit);
    return store_.LoadQueueTasks(namespace_id, task_queue, kind, limit,
                                 queue_shards_(namespace_id, task_queue));
  });
  // History's own follow-up work (transfer tasks) left by the previous process, of the
  // shards owned now (all of them with one host; on a shared database, none yet: each shard
  // taken later has its own read, in OnShardAcquired).
  const std::vector<int32_t> owned = shards_.OwnedShards();
  if (absl::Status s = ProcessStoredTransferTasks({owned.begin(), owned.end()}); !s.ok()) return s;
  for (int32_t shard : shards_.OwnedShards()) timer_queue_->Activate(shard);
  absl::Status started = timer_queue_->Start();
  if (started.ok()) shards_.SetListener(this);
  return started;
}

void HistoryEngine::OnShardAcquired(int32_t shard_id) {
  timer_queue_->Activate(shard_id);
  // The shard's stored transfer tasks (left by its previous owner) are processed here now;
  // shards taken together (a membership change) share one read, off this thread.
  {
    std::lock_guard lock(transfer_scan_mu_);
    transfer_scan_shards_.insert(shard_id);
    if (transfer_scan_scheduled_) return;
    transfer_scan_scheduled_ = true;
  }
  timer_queue_->RunWithRetries(
      [this] {
        std::set<int32_t> shards;
        {
          std::lock_guard lock(transfer_scan_mu_);
          shards.swap(transfer_scan_shards_);
          transfer_scan_scheduled_ = false;
        }
        std::erase_if(shards, [this](int32_t shard) { return !shards_.Owns(shard); });
        absl::Status s = ProcessStoredTransferTasks(shards);
        if (!s.ok()) {
          // Tried again (with backoff) by this same job.
          std::lock_guard lock(transfer_scan_mu_);
          transfer_scan_shards_.insert(shards.begin(), shards.end());
        }
        return s;
      },
      "stored transfer tasks of shards taken", {}, absl::Milliseconds(50));
}

void HistoryEngine::OnShardReleased(int32_t shard_id) {
  timer_queue_->Deactivate(shard_id);
  // Waits for the shard's commits would now last until their deadline (the commits happen on
  // the new owner): woken, each answers afresh, which sends the caller to the owner. On the
  // timer thread, not this one (the membership's, which holds the shard controller).
  std::vector<std::function<void()>> wake;
  {
    std::lock_guard lock(waiters_mu_);
    for (auto it = history_waiters_.begin(); it != history_waiters_.end();) {
      if (it->second.shard_id != shard_id) {
        ++it;
        continue;
      }
      for (auto& [id, fn] : it->second.wakes) wake.push_back(std::move(fn));
      it = history_waiters_.erase(it);
    }
  }
  for (auto& w : wake) timers_.Schedule(clock_.Now(), std::move(w));
}

const MutableStateRecord* HistoryEngine::Cached(const RunEntry& entry) const {
  if (!entry.state.has_value() || shards_.RangeId(entry.shard_id) != entry.range_id) return nullptr;
  return &*entry.state;
}

void HistoryEngine::Cache(const std::string& run_id, RunEntry& entry, MutableStateRecord state,
                          const persistence::Commit& commit) {
  // The bytes beyond the record itself, which the entry holds in place (runs_ counts it).
  // Reflection: about 1 µs for a small run, well under 1% of what a commit costs.
  const size_t bytes = state.SpaceUsedLong() - sizeof(MutableStateRecord);
  entry.state = std::move(state);
  entry.shard_id = commit.shard_id;
  entry.range_id = commit.range_id;
  runs_.Charge(run_id, bytes);
}

void HistoryEngine::Uncache(const std::string& run_id, RunEntry& entry) {
  entry.state.reset();
  runs_.Charge(run_id, 0);
}

std::shared_ptr<HistoryEngine::RunEntry> HistoryEngine::Entry(const std::string& run_id) {
  return runs_.Get(run_id);
}

absl::StatusOr<std::string> HistoryEngine::ResolveRunId(const std::string& namespace_id,
                                                        const std::string& workflow_id,
                                                        const std::string& run_id) {
  if (absl::Status s = ValidateId(workflow_id, "WorkflowId"); !s.ok()) return s;
  if (!run_id.empty()) return run_id;
  absl::StatusOr<persistence::CurrentRun> current = store_.GetCurrentRun(namespace_id, workflow_id);
  if (!current.ok()) {
    if (current.status().code() == absl::StatusCode::kNotFound) return WorkflowNotFound(workflow_id, "");
    return current.status();
  }
  return current->run_id;
}

// One change of a run from its turn to its answer (Mutate, MutateAsync).
struct HistoryEngine::Change {
  NamespaceRef ns;
  RunKey key;
  std::shared_ptr<RunEntry> entry;
  Mutation mutate;
  bool offer_speculative = false;
  persistence::Commit commit;
  absl::Status result;  // what `mutate` returned (kCommitThenFail: after the commit)
  // The run's speculative task taken for the change, and what the change made of it.
  std::optional<SpeculativeTask> speculative;
  std::optional<SpeculativeTask> kept;
  bool speculative_dropped = false, speculative_used = false;
  std::vector<persistence::TaskQueueTask> memory_tasks;  // sticky workflow tasks: not stored
  bool following = false;
  std::string companion_run_id;
  std::optional<ShardController::RangeHold> hold;  // from BeforeWrite until answered
  absl::Status written;  // the write's outcome (SettleChange)
  bool closed = false;   // the commit closed the run
  uint64_t ticket = 0;   // its place among the run's answers (AnswerInTurn)
};

void HistoryEngine::TakeTurn(const std::shared_ptr<RunEntry>& entry, std::function<void()> later,
                             const std::function<void()>& now, uint64_t& ticket) {
  {
    std::lock_guard lock(entry->mu);
    ticket = entry->next_ticket++;
    if (entry->busy) {
      entry->turns.push_back(Turn{std::move(later), /*wakes_thread=*/false});
      return;
    }
    entry->busy = true;
  }
  now();
}

void HistoryEngine::WaitTurn(RunEntry& entry) {
  std::unique_lock lock(entry.mu);
  if (!entry.busy) {
    entry.busy = true;
    return;
  }
  bool mine = false;
  std::condition_variable cv;
  entry.turns.push_back(Turn{[&] {
                               // Under the lock: this thread cannot return (and destroy cv)
                               // before the notification ends.
                               std::lock_guard turn_lock(entry.mu);
                               mine = true;
                               cv.notify_one();
                             },
                             /*wakes_thread=*/true});
  cv.wait(lock, [&] { return mine; });
}

void HistoryEngine::ReleaseTurn(RunEntry& entry) {
  Turn next;
  {
    std::lock_guard lock(entry.mu);
    if (entry.turns.empty()) {
      entry.busy = false;
      return;
    }
    next = std::move(entry.turns.front());
    entry.turns.pop_front();
  }
  // The turn passes on (busy stays set). A waiting change runs on the turn thread, never
  // here: this may be the committer's thread, and a chain of changes that end at once
  // (nothing to write) would deepen the stack.
  if (next.wakes_thread) {
    next.run();
  } else if (!turns_.Run(next.run)) {
    next.run();  // refused only while stopping
  }
}

void HistoryEngine::AfterCommit(std::function<void()> job) {
  // Refused only while stopping: then here, rather than never.
  if (!after_commit_->Run(job)) job();
}

void HistoryEngine::AnswerInTurn(RunEntry& entry, uint64_t ticket, std::function<void()> answer) {
  std::unique_lock lock(entry.mu);
  if (ticket != entry.next_answer) {
    // An earlier change is still with the committer (or being published): its thread
    // sends this one after its own.
    entry.answers.emplace(ticket, std::move(answer));
    return;
  }
  // Next in line (the usual case, kept off the map): sent, then the ready ones after it.
  while (true) {
    lock.unlock();
    answer();
    lock.lock();
    ++entry.next_answer;
    if (entry.answers.empty() || entry.answers.begin()->first != entry.next_answer) return;
    answer = std::move(entry.answers.begin()->second);
    entry.answers.erase(entry.answers.begin());
  }
}

bool HistoryEngine::BuildChange(Change& c) {
  const NamespaceRef& ns = c.ns;
  const RunKey& key = c.key;
  MutableStateRecord state;
  bool cached = false;
  {
    std::lock_guard lock(c.entry->mu);
    if (const MutableStateRecord* found = Cached(*c.entry)) {
      state = *found;
      cached = true;
    }
  }
  if (!cached) {
    absl::StatusOr<MutableStateRecord> loaded =
        store_.GetRun(key.namespace_id, key.workflow_id, key.run_id);
    if (!loaded.ok()) {
      c.result = loaded.status().code() == absl::StatusCode::kNotFound
                     ? WorkflowNotFound(key.workflow_id, key.run_id)
                     : loaded.status();
      return false;
    }
    state = std::move(*loaded);
  }
  if (state.execution().zombie()) {
    // Kept only to receive its history from the cluster that runs it: its tasks and
    // timers are dropped here, and nothing else may change it.
    c.result = absl::NotFoundError(absl::StrCat(
        "run ", key.run_id, " of workflow ", key.workflow_id,
        " is a zombie: a newer run of this workflow id is its current run"));
    return false;
  }
  // A global namespace's run: what its pending activities hold that no event carries, to
  // replicate what the change alters of it (sync_activity_tasks.h).
  ActivityMarks activities_before;
  if (ns.failover_version > 0 && state.activities_size() > 0) {
    activities_before = MarkActivities(state);
  }
  RunTransaction tx(std::move(state), clock_.Now(), ns.failover_version, shards_);
  c.speculative = updates_.TakeSpeculative(key.run_id);
  if (c.speculative) {
    tx.OfferSpeculative(*c.speculative);
    if (!c.offer_speculative) tx.MaterializeSpeculative();
  }
  // The run's first write here after a failover: a workflow task another cluster's worker
  // started is failed before anything else, and a new one scheduled for this cluster's
  // workers (failover_workflow_task.h). Written even when the change itself writes nothing
  // (a timer that no longer matches).
  bool failed_over = false;
  if (activity_of_ && WorkflowTaskStartedElsewhere(tx, 0)) {
    const NamespaceActivity activity = activity_of_(key.namespace_id);
    if (activity.active && WorkflowTaskStartedElsewhere(tx, activity.version_increment)) {
      FailWorkflowTaskForFailover(tx);
      failed_over = true;
    }
  }
  c.result = c.mutate(tx);
  c.kept = std::move(tx.kept_speculative());
  c.speculative_dropped = tx.speculative_dropped();
  c.speculative_used = tx.speculative_used();
  const bool nothing = c.result.GetPayload(kNothingToWrite).has_value();
  if (nothing) c.result = absl::OkStatus();
  if ((nothing && !failed_over) || (!c.result.ok() && !HasPayload(c.result))) {
    SettleSpeculative(c, false);
    return false;
  }
  EnforceHistoryLimits(tx);
  std::vector<persistence::ReplicationTaskRow> sync_activity;
  if (!activities_before.empty()) AddSyncActivityTasks(activities_before, tx, sync_activity);
  persistence::Commit& commit = c.commit;
  commit.shard_id = tx.shard_id();
  commit.runs.push_back(tx.TakeRunWrite(persistence::CurrentRunChange::kNone));
  commit.new_tasks = std::move(tx.new_tasks());
  commit.new_timers = std::move(tx.new_timers());
  commit.done_timers = std::move(tx.done_timers());
  commit.done_task_ids = std::move(tx.done_task_ids());
  commit.new_replication_tasks = std::move(sync_activity);
  c.memory_tasks = std::move(tx.memory_tasks());
  c.following = tx.following_run() != nullptr;
  if (tx.companion_run() != nullptr) c.companion_run_id = tx.companion_run()->execution().run_id();
  AddOtherRunWrites(tx, key.run_id, commit);
  MarkClosingRunsForArchival(commit, ns.id);
  IndexSearchAttributes(commit, ns.id);
  return true;
}

void HistoryEngine::SettleSpeculative(Change& c, bool written) {
  if (c.kept) {
    if (c.speculative) timers_.Cancel(c.speculative->timeout);
    updates_.PutSpeculative(c.key.run_id, std::move(*c.kept));
  } else if (c.speculative) {
    if (c.speculative_dropped || (written && c.speculative_used)) {
      timers_.Cancel(c.speculative->timeout);
    } else {
      updates_.PutSpeculative(c.key.run_id, std::move(*c.speculative));
    }
  }
}

void HistoryEngine::SettleChange(Change& c, absl::Status written, bool stored) {
  c.hold.reset();
  if (stored) written = AfterWrite(c.commit, std::move(written));
  RunEntry& entry = *c.entry;
  if (!written.ok()) {
    {
      std::lock_guard lock(entry.mu);
      Uncache(c.key.run_id, entry);
    }
    SettleSpeculative(c, false);
  } else {
    SettleSpeculative(c, true);
    CountClosedRuns(c.commit);
    c.closed = c.commit.runs.front().state.execution().status() !=
               enums::WORKFLOW_EXECUTION_STATUS_RUNNING;
    std::lock_guard lock(entry.mu);
    Cache(c.key.run_id, entry, std::move(c.commit.runs.front().state), c.commit);
  }
  c.written = std::move(written);
  ReleaseTurn(entry);
}

absl::Status HistoryEngine::PublishChange(Change& c) {
  if (!c.written.ok()) return c.written;
  if (c.closed) updates_.ForgetLater(c.key.run_id);
  if (c.following) CacheCommitted(std::move(c.commit.runs[1].state), c.commit);
  if (!c.companion_run_id.empty()) {  // dropped, not cached: RunTransaction::SetCompanionRun
    std::shared_ptr<RunEntry> other = Entry(c.companion_run_id);
    std::lock_guard lock(other->mu);
    Uncache(c.companion_run_id, *other);
  }
  Publish(c.commit, c.key.run_id);
  for (persistence::TaskQueueTask& task : c.memory_tasks) task_sink_(std::move(task));
  if (HasPayload(c.result)) c.result.ErasePayload(kCommitThenFail);
  return c.result;
}

std::optional<absl::Status> HistoryEngine::StartChange(Change& c) {
  if (!BuildChange(c)) {
    ReleaseTurn(*c.entry);
    return c.result;
  }
  absl::Status s = BeforeWrite(c.commit, /*replicated=*/false, !c.ns.conflict_resolution, c.hold);
  if (s.ok()) return std::nullopt;
  SettleChange(c, s, /*stored=*/false);
  return PublishChange(c);
}

absl::Status HistoryEngine::Mutate(const NamespaceRef& ns, const RunKey& key,
                                   const Mutation& mutate, bool offer_speculative) {
  Change c{.ns = ns, .key = key, .entry = Entry(key.run_id), .mutate = mutate,
           .offer_speculative = offer_speculative};
  WaitTurn(*c.entry);
  if (std::optional<absl::Status> ended = StartChange(c)) return *ended;
  SettleChange(c, store_.Write(c.commit), /*stored=*/true);
  return PublishChange(c);
}

void HistoryEngine::MutateAsync(const NamespaceRef& ns, const RunKey& key, Mutation mutate,
                                bool offer_speculative, std::function<void(absl::Status)> done) {
  {
    std::lock_guard lock(async_mu_);
    ++async_changes_;
  }
  // Counted until `done` returned (the destructor waits for none to be in flight).
  done = [this, done = std::move(done)](absl::Status s) {
    done(std::move(s));
    std::lock_guard lock(async_mu_);
    if (--async_changes_ == 0) async_done_.notify_all();
  };
  auto c = std::make_shared<Change>();
  c->ns = ns;
  c->key = key;
  c->entry = Entry(key.run_id);
  c->mutate = std::move(mutate);
  c->offer_speculative = offer_speculative;
  // With the run's turn: on this thread when the turn was free, else on the turn thread,
  // where nothing may wait on a call's continuation (`done` then goes to the completion
  // threads). Answered in the order the run's changes took the turn (AnswerInTurn).
  auto turn = [this, c, done = std::move(done)](bool on_callers_thread) mutable {
    auto answer = [this, c, done = std::move(done)](absl::Status s) mutable {
      AnswerInTurn(*c->entry, c->ticket,
                   [done = std::move(done), s = std::move(s)]() mutable { done(std::move(s)); });
    };
    if (std::optional<absl::Status> ended = StartChange(*c)) {
      if (on_callers_thread) return answer(*ended);
      return AfterCommit([answer = std::move(answer), s = *ended]() mutable { answer(s); });
    }
    store_.WriteAsync(c->commit, [this, c, answer = std::move(answer)](absl::Status s) mutable {
      // On the committer's thread: the cache and the run's turn, which wait for nothing a
      // completion might hold; publishing and the answer on the completion threads.
      SettleChange(*c, std::move(s), /*stored=*/true);
      AfterCommit([this, c, answer = std::move(answer)]() mutable { answer(PublishChange(*c)); });
    });
  };
  auto shared = std::make_shared<decltype(turn)>(std::move(turn));
  TakeTurn(c->entry, [shared] { (*shared)(false); }, [shared] { (*shared)(true); }, c->ticket);
}

absl::Status HistoryEngine::WriteReplicated(const RunKey& key, const ReplicatedBuild& build) {
  persistence::Commit commit;
  std::shared_ptr<RunEntry> entry = Entry(key.run_id);
  WaitTurn(*entry);
  absl::Status s = [&]() -> absl::Status {
    std::optional<MutableStateRecord> state;
    {
      std::lock_guard lock(entry->mu);
      if (const MutableStateRecord* cached = Cached(*entry)) state = *cached;
    }
    if (!state) {
      absl::StatusOr<MutableStateRecord> loaded =
          store_.GetRun(key.namespace_id, key.workflow_id, key.run_id);
      if (loaded.ok()) {
        state = std::move(*loaded);
      } else if (!absl::IsNotFound(loaded.status())) {
        return loaded.status();
      }
    }
    if (absl::Status s = build(state, commit); !s.ok()) return s;
    if (commit.runs.empty()) return absl::OkStatus();
    MarkClosingRunsForArchival(commit, key.namespace_id);
    IndexSearchAttributes(commit, key.namespace_id);
    if (absl::Status w = WriteCommit(commit, /*replicated=*/true); !w.ok()) {
      std::lock_guard lock(entry->mu);
      Uncache(key.run_id, *entry);
      return w;
    }
    CountClosedRuns(commit);
    std::lock_guard lock(entry->mu);
    Cache(key.run_id, *entry, std::move(commit.runs.front().state), commit);
    return absl::OkStatus();
  }();
  ReleaseTurn(*entry);
  // After the run's turn: publishing hands tasks on, which may come back to this run.
  if (s.ok() && !commit.runs.empty()) Publish(commit, key.run_id);
  return s;
}

absl::Status HistoryEngine::BeforeWrite(persistence::Commit& commit, bool replicated,
                                        bool check_active,
                                        std::optional<ShardController::RangeHold>& hold) {
  if (!replicated) {
    if (check_active) {
      if (absl::Status s = CheckActive(commit); !s.ok()) return s;
    }
    AddReplicationTasks(commit);
  }
  if (HoldsRefusedTaskId(commit)) {
    if (!shards_.Owns(commit.shard_id)) return ShardNotOwnedHere(commit.shard_id);
    return absl::UnavailableError(absl::StrCat("the task ids of history shard ", commit.shard_id,
                                               " could not be renewed; retry"));
  }
  // The range id is taken after the commit's ids were drawn (they are of its block or an
  // earlier one of this host) and held until the write is answered, so that a renewal of
  // the range by this host waits for this commit instead of fencing it out.
  hold.emplace(shards_.HoldRange(commit.shard_id));
  commit.range_id = hold->range_id();
  // A shard this host does not own (any more, or yet: ownership is moving) is written by
  // its owner only. UNAVAILABLE, which clients retry, since the move ends in moments.
  if (commit.range_id == ShardController::kNotOwned) {
    hold.reset();
    return ShardNotOwnedHere(commit.shard_id);
  }
  return absl::OkStatus();
}

absl::Status HistoryEngine::WriteCommit(persistence::Commit& commit, bool replicated,
                                        bool check_active) {
  std::optional<ShardController::RangeHold> hold;
  if (absl::Status s = BeforeWrite(commit, replicated, check_active, hold); !s.ok()) return s;
  absl::Status s = store_.Write(commit);
  hold.reset();
  return AfterWrite(commit, std::move(s));
}

absl::Status HistoryEngine::AfterWrite(const persistence::Commit& commit, absl::Status s) {
  if (s.ok()) return s;
  // The store's contract: FAILED_PRECONDITION is a fenced-out write, the shard has another
  // owner. This host stops using it until the ring gives it back.
  if (s.code() == absl::StatusCode::kFailedPrecondition) {
    shards_.Lost(commit.shard_id, commit.range_id);
    return ShardNotOwnedHere(commit.shard_id);
  }
  // A database can fail a call after it committed (a timeout, a lost connection): then the
  // change happened and its tasks and timers must be published, or they would wait for a
  // restart. Whether it did is read back: the run's stored version is the written one.
  const bool ambiguous = s.code() == absl::StatusCode::kDeadlineExceeded ||
                         s.code() == absl::StatusCode::kUnavailable ||
                         s.code() == absl::StatusCode::kUnknown;
  if (!ambiguous) return s;
  const MutableStateRecord& written = commit.runs.front().state;
  const auto& exec = written.execution();
  switch (ReadBack(exec.namespace_id(), exec.workflow_id(), exec.run_id(), written.db_version())) {
    case WriteOutcome::kLanded:
      return absl::OkStatus();
    case WriteOutcome::kNotWritten:
      return s;
    case WriteOutcome::kUnknown:
      break;
  }
  // Unknown (the database is still failing): the caller sees the error and retries, and
  // what the commit may have stored is found later, off this caller and its run's lock.
  ResolveLostWriteLater(commit);
  return s;
}

HistoryEngine::WriteOutcome HistoryEngine::ReadBack(const std::string& namespace_id,
                                                    const std::string& workflow_id,
                                                    const std::string& run_id,
                                                    int64_t written_db_version) {
  absl::StatusOr<MutableStateRecord> stored = store_.GetRun(namespace_id, workflow_id, run_id);
  if (stored.ok()) {
    return stored->db_version() >= written_db_version ? WriteOutcome::kLanded
                                                      : WriteOutcome::kNotWritten;
  }
  // A new run that is not stored was not written.
  if (stored.status().code() == absl::StatusCode::kNotFound) return WriteOutcome::kNotWritten;
  return WriteOutcome::kUnknown;
}

void HistoryEngine::ResolveLostWriteLater(const persistence::Commit& commit) {
  const int32_t shard = commit.shard_id;
  const MutableStateRecord& written = commit.runs.front().state;
  const int64_t db_version = written.db_version();
  TimerQueue::Ids ids{written.execution().namespace_id(), written.execution().workflow_id(),
                      written.execution().run_id()};
  auto read_backs = std::make_shared<int>(0);  // failed ones; the job runs one at a time
  timer_queue_->RunWithRetries(
      [this, shard, db_version, ids, read_backs]() -> absl::Status {
        if (!shards_.Owns(shard)) return absl::OkStatus();  // its new owner loads it all
        switch (ReadBack(ids.namespace_id, ids.workflow_id, ids.run_id, db_version)) {
          case WriteOutcome::kNotWritten:
            return absl::OkStatus();
          case WriteOutcome::kUnknown:
            if (++*read_backs < kReadBacksBeforeReload) {
              return absl::UnavailableError("the run could not be read back");
            }
            break;  // still unknown: the reload finds whatever the commit stored
          case WriteOutcome::kLanded:
            break;
        }
        return ReloadShard(shard);
      },
      "read-back of a write whose answer was lost", ids, absl::Seconds(1));
}

absl::Status HistoryEngine::ReloadShard(int32_t shard_id) {
  if (absl::Status s = timer_queue_->Reread(shard_id); !s.ok()) return s;
  return ProcessStoredTransferTasks({shard_id});
}

absl::Status HistoryEngine::CheckActive(const persistence::Commit& commit) {
  if (!activity_of_) return absl::OkStatus();
  for (const persistence::RunWrite& run : commit.runs) {
    if (run.events.empty() || run.events.front().version() <= 0) continue;
    const NamespaceActivity activity = activity_of_(run.state.execution().namespace_id());
    bool stale = std::any_of(run.events.begin(), run.events.end(), [&](const HistoryEvent& e) {
      return e.version() < activity.failover_version;
    });
    // The run's history may not go back to a lower version: events written after a newer
    // cluster's (replicated here before this cluster learned of the failover) are refused
    // like those of a standby (§6.5).
    const auto& histories = run.state.version_histories();
    if (histories.histories_size() > 0) {
      for (const auto& item : histories.histories(histories.current_version_history_index()).items()) {
        if (item.version() > run.events.front().version()) stale = true;
      }
    }
    if (activity.unknown) return NamespaceStateUnknown(run.state.execution().namespace_id());
    if (!activity.active || stale) {
      return NamespaceNotActiveError(activity.name, activity.active_cluster,
                                     activity.current_cluster);
    }
    // Events of a namespace in handover would add a replication task after the ones the
    // other cluster is waited for: refused, and tried again (timers, follow-up work) until
    // the handover ends (Temporal's ErrNamespaceHandover, retried by its task executors).
    if (activity.handover) return absl::UnavailableError(kNamespaceHandoverMessage);
  }
  // A change of a pending activity with no event (a poll that starts it, a heartbeat) on a
  // cluster that is no longer active: its SyncActivity task would carry an old version.
  for (const persistence::ReplicationTaskRow& row : commit.new_replication_tasks) {
    const NamespaceActivity activity = activity_of_(row.task.namespace_id());
    if (activity.unknown) return NamespaceStateUnknown(row.task.namespace_id());
    if (!activity.active || row.task.version() < activity.failover_version) {
      return NamespaceNotActiveError(activity.name, activity.active_cluster,
                                     activity.current_cluster);
    }
    if (activity.handover) return absl::UnavailableError(kNamespaceHandoverMessage);
  }
  return absl::OkStatus();
}

void HistoryEngine::CacheCommitted(MutableStateRecord state, const persistence::Commit& commit) {
  const std::string run_id = state.execution().run_id();
  std::shared_ptr<RunEntry> entry = Entry(run_id);
  std::lock_guard lock(entry->mu);  // readers and Mutate look at `state` under this lock
  Cache(run_id, *entry, std::move(state), commit);
}

void HistoryEngine::EnforceHistoryLimits(RunTransaction& tx) {
  const int64_t count = tx.state().next_event_id() - 1;
  const int64_t size = tx.execution().history_size_bytes();
  const int64_t count_before = count - static_cast<int64_t>(tx.new_events().size());
  int64_t size_before = size;
  for (const HistoryEvent& e : tx.new_events()) size_before -= static_cast<int64_t>(e.ByteSizeLong());
  const auto& exec = tx.execution();
  if (count_before < limits_.history_count_warn && count >= limits_.history_count_warn) {
    logger_.Warn("workflow history is long; it is terminated at the limit",
                 {{"namespace_id", exec.namespace_id()}, {"workflow_id", exec.workflow_id()},
                  {"run_id", exec.run_id()}, {"events", absl::StrCat(count)},
                  {"limit", absl::StrCat(limits_.history_count_error)}});
  }
  if (size_before < limits_.history_size_warn && size >= limits_.history_size_warn) {
    logger_.Warn("workflow history is large; it is terminated at the limit",
                 {{"namespace_id", exec.namespace_id()}, {"workflow_id", exec.workflow_id()},
                  {"run_id", exec.run_id()}, {"bytes", absl::StrCat(size)},
                  {"limit", absl::StrCat(limits_.history_size_error)}});
  }
  if (!tx.IsOpen()) return;
  const char* reason = nullptr;
  if (size >= limits_.history_size_error) {
    reason = "Workflow history size exceeds limit.";
  } else if (count >= limits_.history_count_error) {
    reason = "Workflow history count exceeds limit.";
  }
  if (reason == nullptr) return;
  logger_.Warn("workflow terminated: its history passed the limit",
               {{"namespace_id", exec.namespace_id()}, {"workflow_id", exec.workflow_id()},
                {"run_id", exec.run_id()}, {"reason", reason}});
  tx.Terminate(reason, {}, kHistoryServiceIdentity);
}

void HistoryEngine::MarkClosingRunsForArchival(persistence::Commit& commit,
                                               const std::string& namespace_id) {
  for (persistence::RunWrite& run : commit.runs) {
    if (!run.visibility || !run.visibility->close_time) continue;  // only a close is queued
    run.archive_on_close = archival_check_ && archival_check_(namespace_id);
  }
}

std::shared_ptr<const visibility::SearchAttributeSchema> HistoryEngine::SchemaOf(
    const std::string& namespace_id) {
  if (schemas_ != nullptr) return schemas_->ForNamespaceId(namespace_id);
  static const auto* none = new std::shared_ptr<const visibility::SearchAttributeSchema>(
      std::make_shared<const visibility::SearchAttributeSchema>());
  return *none;
}

void HistoryEngine::IndexSearchAttributes(persistence::Commit& commit,
                                          const std::string& namespace_id) {
  std::shared_ptr<const visibility::SearchAttributeSchema> schema;
  for (persistence::RunWrite& run : commit.runs) {
    const auto& attributes = run.state.execution().search_attributes();
    if (!run.visibility || attributes.indexed_fields().empty()) continue;
    if (!schema) schema = SchemaOf(namespace_id);  // read only for runs with attributes
    run.visibility->custom_json = persistence::CustomValuesJson(
        schema->custom().empty() ? std::vector<persistence::CustomValue>{}
                                 : visibility::IndexedValues(attributes, *schema),
        visibility::VersioningValues(attributes));
  }
}

void HistoryEngine::Publish(persistence::Commit& commit, const std::string& run_id) {
  for (const auto& row : commit.new_timers) ArmTimer(row);
  // The timers this change retired need not fire only to find themselves stale.
  for (const auto& row : commit.done_timers) timer_queue_->Remove(row);
  NotifyHistoryWaiters(run_id);
  for (auto& task : commit.new_tasks) {
    if (task.kind == persistence::TaskKind::kTransfer) {
      ProcessTransferTask(task);
    } else {
      task_sink_(std::move(task));
    }
  }
}

void HistoryEngine::ArmTimer(const persistence::TimerTaskRow& row) { timer_queue_->Add(row); }

absl::StatusOr<MutableStateRecord> HistoryEngine::ReadRun(const RunKey& key) {
  std::shared_ptr<RunEntry> entry = Entry(key.run_id);
  std::lock_guard lock(entry->mu);
  if (const MutableStateRecord* cached = Cached(*entry)) return *cached;
  absl::StatusOr<MutableStateRecord> loaded =
      store_.GetRun(key.namespace_id, key.workflow_id, key.run_id);
  if (!loaded.ok() && loaded.status().code() == absl::StatusCode::kNotFound) {
    return WithDetail(absl::NotFoundError(absl::StrCat("Workflow execution not found. WorkflowId: ",
                                                       key.workflow_id, ", RunId: ", key.run_id, ".")),
                      temporal::api::errordetails::v1::NotFoundFailure());
  }
  return loaded;
}

uint64_t HistoryEngine::WaitForCommit(const RunKey& key, std::function<void()> wake) {
  const int32_t shard_id = shards_.ShardFor(key.namespace_id, key.workflow_id);
  std::lock_guard lock(waiters_mu_);
  uint64_t id = next_wait_id_++;
  RunWaiters& waiters = history_waiters_[key.run_id];
  waiters.shard_id = shard_id;
  waiters.wakes.emplace(id, std::move(wake));
  return id;
}

void HistoryEngine::DropWait(const std::string& run_id, uint64_t id) {
  std::lock_guard lock(waiters_mu_);
  auto it = history_waiters_.find(run_id);
  if (it == history_waiters_.end()) return;
  it->second.wakes.erase(id);
  if (it->second.wakes.empty()) history_waiters_.erase(it);
}

void HistoryEngine::AfterNextCommit(const RunKey& key, int64_t seen_next_event_id,
                                    absl::Time limit, std::function<void(bool expired)> then) {
  auto once = std::make_shared<std::atomic<bool>>(false);
  auto wait_id = std::make_shared<std::atomic<uint64_t>>(0);
  auto call = [this, run_id = key.run_id, once, wait_id, then = std::move(then)](bool expired) {
    if (once->exchange(true)) return;
    DropWait(run_id, wait_id->load());
    then(expired);
  };
  *wait_id = WaitForCommit(key, [call] { call(false); });
  timers_.Schedule(limit, [call] { call(true); });
  // A commit between the caller's read and the registration would be missed: look again.
  absl::StatusOr<MutableStateRecord> now = ReadRun(key);
  if (now.ok() && now->next_event_id() != seen_next_event_id) call(false);
}

void HistoryEngine::QueryWorkflow(const NamespaceRef& ns, const wf::QueryWorkflowRequest& req,
                                  absl::Time deadline, QueryDispatcher::Done done) {
  if (req.query().query_type().empty()) {
    return done(absl::InvalidArgumentError("QueryType is not set on request."));
  }
  absl::StatusOr<std::string> run_id =
      ResolveRunId(ns.id, req.execution().workflow_id(), req.execution().run_id());
  if (!run_id.ok()) return done(run_id.status());
  queries_.Query(ns, {ns.id, req.execution().workflow_id(), *run_id}, req, deadline,
                 std::move(done));
}

void HistoryEngine::NotifyHistoryWaiters(const std::string& run_id) {
  std::vector<std::function<void()>> wake;
  {
    std::lock_guard lock(waiters_mu_);
    auto it = history_waiters_.find(run_id);
    if (it != history_waiters_.end()) {
      for (auto& [id, fn] : it->second.wakes) wake.push_back(std::move(fn));
      history_waiters_.erase(it);
    }
  }
  for (auto& w : wake) w();
}

absl::StatusOr<std::vector<persistence::HistoryEvent>> HistoryEngine::ReadHistory(
    const MutableStateRecord& s) {
  return store_.ReadEvents(s.execution().run_id(), 1, s.next_event_id(), INT32_MAX);
}

absl::StatusOr<wf::StartWorkflowExecutionResponse> HistoryEngine::StartWorkflow(
    const NamespaceRef& ns, const wf::StartWorkflowExecutionRequest& req) {
  absl::StatusOr<wf::StartWorkflowExecutionResponse> out = StartWorkflowWithParent(ns, req, std::nullopt);
  if (out.ok() && req.request_eager_execution() && !out->has_eager_workflow_task()) {
    metrics_->workflow_eager_execution_denied.Increment();
  }
  return out;
}

absl::StatusOr<wf::StartWorkflowExecutionResponse> HistoryEngine::StartWorkflowWithParent(
    const NamespaceRef& ns, const wf::StartWorkflowExecutionRequest& req,
    std::optional<tock::persistence::v1::ParentInfo> parent, const InheritedVersion& inherited) {
  // One start time for the cron wait, the execution expiration and the run itself.
  const absl::Time now = clock_.Now();
  absl::StatusOr<absl::Duration> cron_wait = ValidateStart(ns, req, now);
  if (!cron_wait.ok()) return cron_wait.status();
  std::shared_ptr<std::mutex> id_lock = IdLock(ns.id, req.workflow_id());
  std::lock_guard lock(*id_lock);
  return StartLocked(ns, req, std::move(parent), nullptr, now, *cron_wait, nullptr, inherited);
}

absl::StatusOr<absl::Duration> HistoryEngine::ValidateStart(
    const NamespaceRef& ns, const wf::StartWorkflowExecutionRequest& req, absl::Time now) {
  const std::shared_ptr<const visibility::SearchAttributeSchema> schema =
      req.search_attributes().indexed_fields().empty() ? nullptr : SchemaOf(ns.id);
  if (absl::Status s = ValidateStartRequest(
          req, limits_, schema ? *schema : visibility::SearchAttributeSchema());
      !s.ok()) {
    return s;
  }
  if (req.has_versioning_override()) {
    if (absl::Status s = CheckVersioningOverride(req.versioning_override()); !s.ok()) return s;
  }
  // A cron workflow's first run waits for the schedule's first activation.
  if (req.cron_schedule().empty()) return absl::ZeroDuration();
  absl::StatusOr<CronSchedule> schedule = CronSchedule::Parse(req.cron_schedule());
  if (!schedule.ok()) return schedule.status();
  const absl::Duration cron_wait = CronBackoff(*schedule, now, now);
  if (cron_wait == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        "invalid CronSchedule, no time can be found to satisfy the schedule");
  }
  return cron_wait;
}

std::shared_ptr<std::mutex> HistoryEngine::IdLock(const std::string& namespace_id,
                                                  const std::string& workflow_id) {
  return id_locks_.Get(absl::StrCat(namespace_id, "/", workflow_id));
}

absl::StatusOr<HistoryEngine::StartAdmission> HistoryEngine::AdmitStart(
    const NamespaceRef& ns, const wf::StartWorkflowExecutionRequest& req) {
  StartAdmission admission;
  absl::StatusOr<persistence::CurrentRun> current = store_.GetCurrentRun(ns.id, req.workflow_id());
  if (absl::IsNotFound(current.status())) return admission;
  if (!current.ok()) return current.status();
  auto answer_with_current = [&] {
    admission.answer.emplace();
    admission.answer->set_run_id(current->run_id);
    admission.answer->set_started(false);
    return admission;
  };
  auto already_started = [&](absl::string_view message) {
    temporal::api::errordetails::v1::WorkflowExecutionAlreadyStartedFailure detail;
    detail.set_start_request_id(current->start_request_id);
    detail.set_run_id(current->run_id);
    return WithDetail(absl::AlreadyExistsError(absl::StrCat(message, " WorkflowId: ",
                                                            req.workflow_id(), ", RunId: ",
                                                            current->run_id, ".")),
                      detail);
  };
  // A retry of the start that made the current run.
  if (!req.request_id().empty() && current->start_request_id == req.request_id()) {
    return answer_with_current();
  }
  if (current->status == enums::WORKFLOW_EXECUTION_STATUS_RUNNING) {
    switch (req.workflow_id_conflict_policy()) {
      case enums::WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING:
        return answer_with_current();
      case enums::WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING: {
        wf::TerminateWorkflowExecutionRequest terminate;
        terminate.mutable_workflow_execution()->set_workflow_id(req.workflow_id());
        terminate.mutable_workflow_execution()->set_run_id(current->run_id);
        terminate.set_reason("terminated by a start with the TERMINATE_EXISTING conflict policy");
        terminate.set_identity(req.identity());
        if (absl::Status s = TerminateWorkflow(ns, terminate); !s.ok()) return s;
        break;
      }
      default:
        return already_started("Workflow execution is already running.");
    }
  } else {
    const auto policy = req.workflow_id_reuse_policy();
    if (policy == enums::WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE ||
        (policy == enums::WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY &&
         current->status == enums::WORKFLOW_EXECUTION_STATUS_COMPLETED)) {
      return already_started(
          "Workflow execution already finished and its id reuse policy does not allow a new "
          "run.");
    }
  }
  admission.replaced_run_id = current->run_id;
  return admission;
}

HistoryEngine::NewRun HistoryEngine::NewRunOf(const wf::StartWorkflowExecutionRequest& req,
                                              absl::Time now, absl::Duration cron_wait) {
  // Timeouts as Temporal resolves them: run = min(run, execution) when either is set; task
  // timeout 10 s by default, at most 120 s and at most the run timeout.
  const absl::Duration execution_timeout = FromProtoDuration(req.workflow_execution_timeout());
  absl::Duration run_timeout = FromProtoDuration(req.workflow_run_timeout());
  if (run_timeout == absl::ZeroDuration() ||
      (execution_timeout > absl::ZeroDuration() && execution_timeout < run_timeout)) {
    run_timeout = execution_timeout;
  }
  NewRun run;
  run.workflow_id = req.workflow_id();
  run.workflow_type = req.workflow_type();
  run.task_queue = req.task_queue().name();
  run.input = req.input();
  run.execution_timeout = execution_timeout;
  run.run_timeout = run_timeout;
  run.task_timeout = FromProtoDuration(req.workflow_task_timeout());
  run.request_id = req.request_id();
  run.identity = req.identity();
  run.header = req.header();
  run.memo = req.memo();
  run.search_attributes = req.search_attributes();
  if (req.has_retry_policy()) run.retry_policy = req.retry_policy();
  run.cron_schedule = req.cron_schedule();
  if (req.has_user_metadata()) run.user_metadata = req.user_metadata();
  if (req.has_versioning_override()) run.versioning_override = req.versioning_override();
  // The first workflow task waits for the start delay as a retry's does for its backoff; a
  // signal before then dispatches it at once (the rest of the delay is skipped).
  run.first_task_backoff = std::max(FromProtoDuration(req.workflow_start_delay()), cron_wait);
  if (execution_timeout > absl::ZeroDuration()) {
    run.execution_expiration = now + run.first_task_backoff + execution_timeout;
  }
  return run;
}

absl::StatusOr<wf::StartWorkflowExecutionResponse> HistoryEngine::StartLocked(
    const NamespaceRef& ns, const wf::StartWorkflowExecutionRequest& req,
    std::optional<tock::persistence::v1::ParentInfo> parent, const StartSignal* signal,
    absl::Time now, absl::Duration cron_wait, const temporal::api::update::v1::Request* update,
    const InheritedVersion& inherited) {
  absl::StatusOr<StartAdmission> admission = AdmitStart(ns, req);
  if (!admission.ok()) return admission.status();
  if (admission->answer.has_value()) return *admission->answer;

  NewRun run = NewRunOf(req, now, cron_wait);
  // Eager start (Temporal's): the first workflow task is started in the start's commit and
  // handed to the starter, whose process runs the worker; never for a first task that waits
  // (a start delay, a cron schedule), and only where the namespace allows it.
  const bool eager = req.request_eager_execution() && run.first_task_backoff == absl::ZeroDuration() &&
                     !parent.has_value() && eager_.workflow_start.On(ns.name);
  run.parent = std::move(parent);
  run.inherited = inherited;
  if (signal != nullptr) run.signal = *signal;
  std::unique_ptr<RunTransaction> built = BuildNewRun(ns, run, now);
  RunTransaction& tx = *built;
  const std::string run_id = tx.execution().run_id();
  std::optional<wf::PollWorkflowTaskQueueResponse> eager_task;
  if (eager) {
    tx.UnqueueWorkflowTask();
    tx.StartWorkflowTask(req.identity());
    eager_task = WorkflowTaskOf(tx.state(), tx.new_events(), /*speculative=*/false);
  }
  const std::string& replaced = admission->replaced_run_id;
  persistence::Commit commit;
  commit.shard_id = tx.shard_id();
  commit.runs.push_back(tx.TakeRunWrite(replaced.empty() ? persistence::CurrentRunChange::kCreate
                                                         : persistence::CurrentRunChange::kReplace,
                                        replaced));
  commit.new_tasks = std::move(tx.new_tasks());
  commit.new_timers = std::move(tx.new_timers());
  MarkClosingRunsForArchival(commit, ns.id);
  IndexSearchAttributes(commit, ns.id);
  if (update != nullptr) {
    // Before the commit: once the first workflow task is stored, a poller can take it (the
    // first poll of a queue reads the queue's stored tasks), and it must carry the update.
    updates_.Admit(run_id, *update).IgnoreError();  // without a check it cannot fail
  }
  if (absl::Status s = WriteCommit(commit); !s.ok()) {
    // The caller is told the start failed, update and all.
    if (update != nullptr) updates_.Forget(run_id);
    return s;
  }
  CountClosedRuns(commit);
  CacheCommitted(std::move(commit.runs.front().state), commit);
  Publish(commit, run_id);
  wf::StartWorkflowExecutionResponse out;
  out.set_run_id(run_id);
  out.set_started(true);
  if (eager_task) {
    *out.mutable_eager_workflow_task() = std::move(*eager_task);
    metrics_->workflow_eager_execution.Increment();
  }
  return out;
}

std::unique_ptr<RunTransaction> HistoryEngine::BuildNewRun(const NamespaceRef& ns,
                                                           const NewRun& run, absl::Time now) {
  MutableStateRecord state;
  auto* exec = state.mutable_execution();
  const std::string run_id = NewTimeOrderedUuid(now);
  exec->set_namespace_id(ns.id);
  exec->set_workflow_id(run.workflow_id);
  exec->set_run_id(run_id);
  exec->set_first_execution_run_id(run.first_execution_run_id.empty() ? run_id
                                                                      : run.first_execution_run_id);
  exec->set_workflow_type(run.workflow_type.name());
  exec->set_task_queue(run.task_queue);
  exec->set_status(enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
  *exec->mutable_start_time() = ToProtoTime(now);
  *exec->mutable_execution_time() = ToProtoTime(now);
  exec->set_start_request_id(run.request_id);
  exec->set_attempt(run.attempt);
  exec->set_identity(run.identity);
  *exec->mutable_memo() = run.memo;
  *exec->mutable_search_attributes() = run.search_attributes;
  if (run.retry_policy) *exec->mutable_retry_policy() = *run.retry_policy;
  exec->set_cron_schedule(run.cron_schedule);
  if (run.parent) *exec->mutable_parent() = *run.parent;

  absl::Duration task_timeout = run.task_timeout;
  if (task_timeout <= absl::ZeroDuration()) task_timeout = kDefaultWorkflowTaskTimeout;
  task_timeout = std::min(task_timeout, kMaxWorkflowTaskTimeout);
  if (run.run_timeout > absl::ZeroDuration()) task_timeout = std::min(task_timeout, run.run_timeout);
  *exec->mutable_workflow_execution_timeout() = ToProtoDuration(run.execution_timeout);
  *exec->mutable_workflow_run_timeout() = ToProtoDuration(run.run_timeout);
  *exec->mutable_default_workflow_task_timeout() = ToProtoDuration(task_timeout);

  auto tx = std::make_unique<RunTransaction>(std::move(state), now, ns.failover_version, shards_);
  HistoryEvent& started = tx->Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  auto* attrs = started.mutable_workflow_execution_started_event_attributes();
  *attrs->mutable_workflow_type() = run.workflow_type;
  attrs->mutable_task_queue()->set_name(run.task_queue);
  attrs->mutable_task_queue()->set_kind(enums::TASK_QUEUE_KIND_NORMAL);
  *attrs->mutable_input() = run.input;
  *attrs->mutable_workflow_execution_timeout() = ToProtoDuration(run.execution_timeout);
  *attrs->mutable_workflow_run_timeout() = ToProtoDuration(run.run_timeout);
  *attrs->mutable_workflow_task_timeout() = ToProtoDuration(task_timeout);
  attrs->set_continued_execution_run_id(run.continued_execution_run_id);
  attrs->set_initiator(run.initiator);
  attrs->set_original_execution_run_id(run_id);
  attrs->set_first_execution_run_id(tx->execution().first_execution_run_id());
  attrs->set_identity(run.identity);
  attrs->set_attempt(run.attempt);
  *attrs->mutable_header() = run.header;
  *attrs->mutable_memo() = run.memo;
  *attrs->mutable_search_attributes() = run.search_attributes;
  if (run.retry_policy) *attrs->mutable_retry_policy() = *run.retry_policy;
  attrs->set_cron_schedule(run.cron_schedule);
  attrs->set_workflow_id(run.workflow_id);
  if (run.parent) {
    attrs->set_parent_workflow_namespace(run.parent->namespace_());
    attrs->set_parent_workflow_namespace_id(run.parent->namespace_id());
    attrs->mutable_parent_workflow_execution()->set_workflow_id(run.parent->workflow_id());
    attrs->mutable_parent_workflow_execution()->set_run_id(run.parent->run_id());
    attrs->set_parent_initiated_event_id(run.parent->initiated_event_id());
  }
  if (run.last_completion_result) *attrs->mutable_last_completion_result() = *run.last_completion_result;
  if (run.continued_failure) *attrs->mutable_continued_failure() = *run.continued_failure;
  // The run's time starts when its first workflow task may (after any backoff); the
  // execution timeout, when it comes first, ends the run and its chain.
  absl::Time run_expires = absl::InfiniteFuture();
  if (run.run_timeout > absl::ZeroDuration()) {
    run_expires = now + run.first_task_backoff + run.run_timeout;
    *tx->state().mutable_execution()->mutable_workflow_run_expiration_time() = ToProtoTime(run_expires);
  }
  if (run.execution_expiration) {
    *attrs->mutable_workflow_execution_expiration_time() = ToProtoTime(*run.execution_expiration);
    *tx->state().mutable_execution()->mutable_workflow_execution_expiration_time() =
        ToProtoTime(*run.execution_expiration);
  }
  if (run.execution_expiration && *run.execution_expiration <= run_expires) {
    TimerTask timeout;
    timeout.set_kind(TimerTask::KIND_WORKFLOW_EXECUTION_TIMEOUT);
    tx->AddTimer(*run.execution_expiration, timeout);
  } else if (run_expires != absl::InfiniteFuture()) {
    TimerTask timeout;
    timeout.set_kind(TimerTask::KIND_WORKFLOW_RUN_TIMEOUT);
    tx->AddTimer(run_expires, timeout);
  }
  if (run.user_metadata) *started.mutable_user_metadata() = *run.user_metadata;
  if (run.versioning_override) *attrs->mutable_versioning_override() = *run.versioning_override;
  RecordInherited(run.inherited, *attrs);
  ApplyStartedVersioning(*tx, *attrs);
  if (run.signal) {
    // Signal-with-start: the signal is in the run's history before its first workflow task.
    HistoryEvent& e = tx->Append(enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    auto* signaled = e.mutable_workflow_execution_signaled_event_attributes();
    signaled->set_signal_name(run.signal->name);
    *signaled->mutable_input() = run.signal->input;
    signaled->set_identity(run.signal->identity);
    *signaled->mutable_header() = run.signal->header;
    signaled->set_request_id(run.signal->request_id);
    if (!run.signal->request_id.empty()) {
      tx->state().mutable_execution()->add_applied_request_ids(run.signal->request_id);
    }
  }
  if (run.first_task_backoff > absl::ZeroDuration()) {
    // A retry's backoff or a start delay: the first workflow task waits.
    *attrs->mutable_first_workflow_task_backoff() = ToProtoDuration(run.first_task_backoff);
    *tx->state().mutable_execution()->mutable_execution_time() = ToProtoTime(now + run.first_task_backoff);
    TimerTask backoff;
    backoff.set_kind(TimerTask::KIND_WORKFLOW_BACKOFF);
    tx->AddTimer(now + run.first_task_backoff, backoff);
  } else {
    tx->ScheduleWorkflowTask();
  }
  return tx;
}

// A workflow task's start for a poll: what its change leaves for the response.
struct HistoryEngine::WorkflowTaskStart {
  NamespaceRef ns;
  persistence::TaskQueueTask task;
  std::string identity;
  MutableStateRecord committed;
  std::vector<temporal::api::protocol::v1::Message> messages;  // updates the task carries
  std::vector<HistoryEvent> unwritten;  // a speculative task's events, shown but not written
};

Mutation HistoryEngine::StartWorkflowTaskFor(WorkflowTaskStart& start) {
  return [this, &start](RunTransaction& tx) -> absl::Status {
    const auto& t = start.task.task;
    const RunKey key{t.namespace_id(), t.workflow_id(), t.run_id()};
    if (t.speculative()) {
      // Shown as if scheduled and started, written only if it must be (updates.cc).
      const SpeculativeTask* offered = tx.offered_speculative();
      if (offered == nullptr || offered->started.event_id() != 0 ||
          offered->info.scheduled_event_id() != t.scheduled_event_id()) {
        return TaskNotFound("Workflow task");
      }
      tx.AppendCopy(offered->scheduled);
      *tx.state().mutable_workflow_task() = offered->info;
    } else {
      tx.ConsumeTask(start.task.task_id);
    }
    const auto& wft = tx.state().workflow_task();
    if (!tx.IsOpen() || wft.scheduled_event_id() != t.scheduled_event_id() ||
        wft.started_event_id() != 0) {
      return t.speculative() ? TaskNotFound("Workflow task")
                             : CommitThenFail(TaskNotFound("Workflow task"));
    }
    metrics_->workflow_task_schedule_to_start_latency.Observe(tx.now() -
                                                              FromProtoTime(wft.scheduled_time()));
    // (A sticky task's schedule-to-start timer is retired in this commit rather than firing
    // later only to find the task started.)
    const HistoryEvent& started =
        tx.StartWorkflowTask(start.identity, TargetVersionChanged(tx.execution()));
    start.committed = tx.state();
    start.messages = updates_.MessagesFor(t.run_id(), wft.started_event_id());
    if (!t.speculative()) return absl::OkStatus();
    SpeculativeTask shown = *tx.offered_speculative();
    shown.started = started;
    shown.info = wft;
    shown.timeout = timers_.Schedule(
        tx.now() + FromProtoDuration(wft.start_to_close_timeout()),
        [this, ns = start.ns, key] { TimeOutSpeculative(ns, key); });
    start.unwritten = tx.new_events();
    tx.KeepSpeculative(std::move(shown));
    return NothingToWrite();
  };
}

absl::StatusOr<wf::PollWorkflowTaskQueueResponse> HistoryEngine::WorkflowTaskStarted(
    WorkflowTaskStart& start, absl::Status committed) {
  if (!committed.ok()) return committed;
  const auto& t = start.task.task;
  // A task taken from the worker's sticky queue carries only what the worker has not seen:
  // the events after the last workflow task it completed (the worker keeps the run cached; on
  // a cache miss the SDK reads the whole history itself). Any other task carries it all.
  const MutableStateRecord& state = start.committed;
  const int64_t seen = state.last_completed_workflow_task_started_event_id();
  const int64_t first = t.sticky() && seen > 0 ? seen + 1 : 1;
  absl::StatusOr<std::vector<HistoryEvent>> events = persistence::ReadWithRetries([&] {
    return store_.ReadEvents(state.execution().run_id(), first, state.next_event_id(), INT32_MAX);
  });
  if (!events.ok()) return events.status();
  for (auto& e : start.unwritten) events->push_back(std::move(e));
  wf::PollWorkflowTaskQueueResponse out = WorkflowTaskOf(state, std::move(*events), t.speculative());
  for (auto& m : start.messages) *out.add_messages() = std::move(m);
  return out;
}

absl::StatusOr<wf::PollWorkflowTaskQueueResponse> HistoryEngine::RecordWorkflowTaskStarted(
    const NamespaceRef& ns, const persistence::TaskQueueTask& task, const std::string& identity) {
  WorkflowTaskStart start{.ns = ns, .task = task, .identity = identity};
  const auto& t = task.task;
  absl::Status s = Mutate(ns, {t.namespace_id(), t.workflow_id(), t.run_id()},
                          StartWorkflowTaskFor(start), /*offer_speculative=*/t.speculative());
  return WorkflowTaskStarted(start, std::move(s));
}

void HistoryEngine::RecordWorkflowTaskStartedAsync(
    const NamespaceRef& ns, const persistence::TaskQueueTask& task, const std::string& identity,
    Answer<wf::PollWorkflowTaskQueueResponse> done) {
  auto start = std::make_shared<WorkflowTaskStart>(
      WorkflowTaskStart{.ns = ns, .task = task, .identity = identity});
  const auto& t = task.task;
  MutateAsync(ns, {t.namespace_id(), t.workflow_id(), t.run_id()}, StartWorkflowTaskFor(*start),
              /*offer_speculative=*/t.speculative(),
              [this, start, done = std::move(done)](absl::Status s) {
                done(WorkflowTaskStarted(*start, std::move(s)));
              });
}

}  // namespace tock::server::history
