// Persistence of workflow runs: mutable state, history events, the current-run pointer of a
// workflow id, task-queue tasks, durable timers and visibility records.
//
// Everything a change of one run produces is written by ONE Commit, in one transaction,
// fenced by the shard's range id: a server that lost the shard (another owner took it)
// writes nothing and gets FAILED_PRECONDITION. So a crash at any point leaves either the
// whole change or none of it. Concurrent Commits may share a transaction (group commit,
// group_commit.h): each is still all or nothing, fails only by its own checks (or with the
// whole transaction), and is answered once its transaction committed.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "temporal/api/history/v1/message.pb.h"
#include "tock/persistence/v1/execution.pb.h"

namespace tock::persistence {

using MutableStateRecord = tock::persistence::v1::MutableState;
using HistoryEvent = temporal::api::history::v1::HistoryEvent;

// kTransfer tasks are the history service's own follow-up work (start a child, tell a
// parent its child closed); they never go to a worker.
enum class TaskKind { kWorkflow = 1, kActivity = 2, kTransfer = 3 };

// A task for matching: "the workflow/activity task of this run at this event is ready".
struct TaskQueueTask {
  int64_t task_id = 0;  // assigned by Commit
  std::string namespace_id;
  std::string task_queue;
  TaskKind kind = TaskKind::kWorkflow;
  tock::persistence::v1::TransferTask task;
};

// The queue that places a task on a host: its own, except that a workflow task for a
// worker's sticky queue goes with the workflow's normal queue (TransferTask.task_queue),
// whose owner also serves the worker's sticky polls (routing::CallRouter::ByQueue).
inline const std::string& PlacingQueue(const std::string& task_queue,
                                       const tock::persistence::v1::TransferTask& task) {
  return task.sticky() ? task.task_queue() : task_queue;
}

// A durable timer; fires at or after `fire_time`.
struct TimerTaskRow {
  int32_t shard_id = 0;
  absl::Time fire_time;
  int64_t task_id = 0;  // assigned by Commit unless set
  tock::persistence::v1::TimerTask task;
};

// A position in a shard's timers, ordered by (fire time, task id).
struct TimerCursor {
  absl::Time fire_time = absl::InfinitePast();
  int64_t task_id = 0;
};

// An entry of a shard's replication queue (replication_store.h reads it).
struct ReplicationTaskRow {
  int64_t task_id = 0;  // assigned by Commit: increasing in commit order within a shard
  tock::persistence::v1::ReplicationTask task;
};

struct VisibilityRecord {
  std::string namespace_id;
  std::string workflow_id;
  std::string run_id;
  std::string workflow_type;
  std::string task_queue;
  int status = 0;  // temporal.api.enums.v1.WorkflowExecutionStatus
  absl::Time start_time;
  absl::Time execution_time;
  std::optional<absl::Time> close_time;
  int64_t history_length = 0;
  std::string info;  // serialized temporal.api.workflow.v1.WorkflowExecutionInfo
  // CustomValuesJson of the run's custom search attributes ("" for none).
  std::string custom_json;
};

struct CurrentRun {
  std::string run_id;
  int status = 0;
  std::string start_request_id;
};

// How a Commit moves the workflow id's current-run pointer.
enum class CurrentRunChange {
  kNone,           // the pointer's status follows the run's (written with a visibility update)
  kCreate,         // a new workflow id: fails with ALREADY_EXISTS when one exists
  kReplace,        // replace `expected_current_run_id` (closed) with this run
};

// History branches (reference/replication.md §3.5, §6.4). A run's history is a tree when two
// clusters wrote it apart: one VersionHistory per branch in its state, each with a token.
// The current branch's events are in the run's history (ReadEvents); every other branch is
// a whole copy, read by its token (ReadBranchEvents). Conflict resolution changes them with
// the three operations below, applied in the order listed, before `events` are appended.
struct BranchFork {          // a new non-current branch: a copy of another branch's prefix
  std::string token;
  int64_t through_event_id = 0;  // events 1..through_event_id are copied
  std::string from_token;        // of that stored branch; "": the current one
};
struct BranchSwitch {        // another branch becomes the current one
  std::string retire_as;     // the current branch's events are kept under this token
  int64_t keep_through_event_id = 0;  // the history keeps events 1..this (the common prefix)
  std::string promote;       // "" (a new branch: `events` follow) or a stored branch's token,
                             // whose events after the prefix move to the history
};
struct BranchAppend {        // events added to a non-current branch
  std::string token;
  std::vector<HistoryEvent> events;
};

struct RunWrite {
  MutableStateRecord state;          // db_version must be expected_db_version + 1
  int64_t expected_db_version = 0;   // 0: the run is new
  std::vector<HistoryEvent> events;  // appended; ids continue the stored ones
  std::vector<BranchFork> branch_forks;
  std::optional<BranchSwitch> branch_switch;
  std::vector<BranchAppend> branch_appends;
  CurrentRunChange current_run_change = CurrentRunChange::kNone;
  std::string expected_current_run_id;  // with kReplace
  std::optional<VisibilityRecord> visibility;
  // With a visibility record that closes the run: queue the run for the archiver in the same
  // transaction (ArchivalQueueStore), so no close is ever missed by a crash.
  bool archive_on_close = false;
};

struct Commit {
  int32_t shard_id = 0;
  int64_t range_id = 0;
  std::vector<RunWrite> runs;
  std::vector<TaskQueueTask> new_tasks;
  std::vector<int64_t> done_task_ids;  // task-queue tasks consumed by this change
  std::vector<TimerTaskRow> new_timers;
  std::vector<TimerTaskRow> done_timers;  // identified by shard, fire time and task id
  // For the other clusters (global namespaces): ids are drawn inside the transaction, under
  // a lock per shard, so a shard's tasks become visible in id order.
  std::vector<ReplicationTaskRow> new_replication_tasks;
};

// The stores' answer to a write or a renewal whose range id is no longer the shard's:
// FAILED_PRECONDITION "shard N is owned by another server (`why`); `outcome`".
inline absl::Status ShardOwnedElsewhere(int32_t shard_id, absl::string_view why,
                                        absl::string_view outcome) {
  return absl::FailedPreconditionError(
      absl::StrCat("shard ", shard_id, " is owned by another server (", why, "); ", outcome));
}

// What the execution store's writes cost, told as they happen (ObservePersistence exports it
// as metrics; benchmarks divide it by the transitions made): each database transaction with
// how many commits (state transitions) it held, and the pages it appended to SQLite's
// write-ahead log. Called on the writing thread, so it must be quick and thread-safe.
class WriteObserver {
 public:
  virtual ~WriteObserver() = default;
  virtual void TransactionCommitted(size_t commits) = 0;
  virtual void WalPagesAppended(int64_t pages) = 0;
  // A group written at once did not pass (a commit's check, a moved fence) and is written
  // again the careful way (group_commit.h).
  virtual void GroupWrittenAgain() {}
};

class ExecutionStore {
 public:
  virtual ~ExecutionStore() = default;

  // Set once at start, before any write; `observer` must outlive the store. None by default.
  virtual void SetWriteObserver(WriteObserver* observer) { (void)observer; }

  // Takes shard `shard_id`: increments and returns its range id (creating the row). `owner`
  // names one process start (history::ShardOwner: address#process id), never an address
  // alone: RenewShardRange's retry rule relies on no other process writing the same owner.
  virtual absl::StatusOr<int64_t> AcquireShard(int32_t shard_id, const std::string& owner) = 0;

  // Renews the range of shard `shard_id` that `owner` holds with `range_id` (its block of task
  // ids is used up): the stored range id becomes range_id + 1 if the shard's row is still
  // (range_id, owner), a compare-and-swap that, like AcquireShard, waits for the Writes in
  // flight that hold the row. OK too when the row already is (range_id + 1, owner): a retry
  // of a renewal whose answer was lost (the owner names one process start, so no other
  // process wrote it).
  // FAILED_PRECONDITION ("shard N is owned by another server") otherwise, changing nothing:
  // the shard was taken by another owner.
  virtual absl::Status RenewShardRange(int32_t shard_id, int64_t range_id,
                                       const std::string& owner) = 0;

  // Writes everything or nothing. FAILED_PRECONDITION when the shard's range id moved on
  // ("shard N is owned by another server"); ABORTED when a run's db_version does not match
  // (a concurrent change); ALREADY_EXISTS for kCreate over an existing workflow id. Fills in
  // the task ids of `commit.new_tasks` and `commit.new_timers`.
  virtual absl::Status Write(Commit& commit) = 0;
  // Write without waiting: `written` gets Write's status once the commit's transaction is
  // over, on the store's writing thread (or on the caller's, before this returns, when the
  // store answers at once), and must not wait for another write there. `commit` must stay
  // alive and untouched until then. Backends with a committer of their own override it.
  using Written = std::function<void(absl::Status)>;
  virtual void WriteAsync(Commit& commit, Written written) { written(Write(commit)); }

  virtual absl::StatusOr<MutableStateRecord> GetRun(const std::string& namespace_id,
                                                    const std::string& workflow_id,
                                                    const std::string& run_id) = 0;
  // NOT_FOUND when the workflow id never ran.
  virtual absl::StatusOr<CurrentRun> GetCurrentRun(const std::string& namespace_id,
                                                   const std::string& workflow_id) = 0;

  // Events [first_event_id, next_event_id) of a run, at most `limit`: VisitEventBytes, each
  // event parsed (backends need not override it).
  virtual absl::StatusOr<std::vector<HistoryEvent>> ReadEvents(const std::string& run_id,
                                                               int64_t first_event_id,
                                                               int64_t next_event_id,
                                                               int32_t limit) {
    std::vector<HistoryEvent> events;
    bool parsed = true;
    absl::StatusOr<int64_t> read = VisitEventBytes(
        run_id, first_event_id, next_event_id, limit, [&](std::string_view bytes) {
          parsed = events.emplace_back().ParseFromArray(bytes.data(),
                                                        static_cast<int>(bytes.size())) &&
                   parsed;
        });
    if (!read.ok()) return read.status();
    if (!parsed) return absl::DataLossError("a stored history event cannot be parsed");
    return events;
  }

  // Events [first_event_id, next_event_id) of a non-current branch of a run (BranchFork), at
  // most `limit`, oldest first; none for a token the run does not have.
  virtual absl::StatusOr<std::vector<HistoryEvent>> ReadBranchEvents(
      const std::string& run_id, const std::string& branch_token, int64_t first_event_id,
      int64_t next_event_id, int32_t limit) = 0;

  // Removes a run: its state, events, visibility record, and the current-run pointer when it
  // points at this run. Tasks and timers left behind find no run and are dropped. Fenced like
  // Write by the range id of the run's shard `shard_id`: FAILED_PRECONDITION ("shard N is
  // owned by another server"), deleting nothing, when the shard's range id is not `range_id`
  // (another host took the shard: only its owner, under its run lock, deletes its runs).
  virtual absl::Status DeleteRun(int32_t shard_id, int64_t range_id,
                                 const std::string& namespace_id, const std::string& workflow_id,
                                 const std::string& run_id) = 0;

  // The same events as ReadEvents, as their stored (serialized) bytes, unparsed, handed to
  // `visit` in event-id order while the store's lock is held (so `visit` must not call the
  // store). The bytes are valid only during the call. Returns how many were visited. This is
  // the fast path of history reads: no per-event allocation, no parse.
  virtual absl::StatusOr<int64_t> VisitEventBytes(
      const std::string& run_id, int64_t first_event_id, int64_t next_event_id, int32_t limit,
      absl::FunctionRef<void(std::string_view)> visit) = 0;

  // Every pending task-queue task of every queue, oldest first. Reads the whole table: for
  // tests and diagnostics; the server reads one queue (LoadQueueTasks) and the transfer tasks
  // (LoadTransferTasks).
  virtual absl::StatusOr<std::vector<TaskQueueTask>> LoadTaskQueueTasks() = 0;
  // Which tasks of a queue LoadQueueTasks reads on a shared database: those of `shards`
  // (the history shards of the commits that wrote them: a host's partition of the queue
  // holds its own shards' tasks), and when `unsharded` the rows written before tasks carried
  // their shard (schema migration 16 on SQLite, 17 on PostgreSQL).
  struct ShardSet {
    std::vector<int32_t> shards;
    bool unsharded = false;
  };
  // The pending tasks of one queue, by task id, oldest first, at most `limit` (matching pages
  // a queue's backlog with it), of the shards in `only` (nullopt: every task). Always from
  // the oldest: task ids are drawn when a commit inserts, so on a shared database a commit
  // may become visible after one holding higher ids, and a reader that continued after the
  // last id it saw could miss it.
  virtual absl::StatusOr<std::vector<TaskQueueTask>> LoadQueueTasks(
      const std::string& namespace_id, const std::string& task_queue, TaskKind kind,
      int32_t limit, const std::optional<ShardSet>& only = std::nullopt) = 0;
  // The queues (and kinds) with pending workflow or activity tasks of the shards in `only`,
  // at most `limit` of them, in no stated order: a host finds the stored backlogs of its
  // partitions (a shard taken over, a restart) without waiting for a poll to touch them.
  struct QueueName {
    std::string namespace_id;
    std::string task_queue;
    TaskKind kind = TaskKind::kWorkflow;
  };
  virtual absl::StatusOr<std::vector<QueueName>> ListQueuesWithTasks(const ShardSet& only,
                                                                    int32_t limit) = 0;
  // The pending kTransfer tasks (the history service's own work) of shard `shard_id` (the
  // Commit's that wrote them) with ids after `after_task_id`, oldest first, at most `limit`:
  // a host taking a shard reads only that shard's rows (index (kind, shard_id, task_id)).
  // kUnshardedTransferTasks reads the rows written before transfer rows carried their shard
  // (schema migration 16 on SQLite, 17 on PostgreSQL), whose shard only the engine can compute.
  static constexpr int32_t kUnshardedTransferTasks = 0;
  virtual absl::StatusOr<std::vector<TaskQueueTask>> LoadTransferTasks(int32_t shard_id,
                                                                       int64_t after_task_id,
                                                                       int32_t limit) = 0;
  // Timers of a shard due before `until` and after `after` (by fire time, then task id),
  // earliest first, at most `limit`: the timer queue pages through them with `after`.
  virtual absl::StatusOr<std::vector<TimerTaskRow>> LoadTimers(int32_t shard_id,
                                                               const TimerCursor& after,
                                                               absl::Time until,
                                                               int32_t limit) = 0;
};

}  // namespace tock::persistence
