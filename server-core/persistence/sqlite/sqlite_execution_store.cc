#include <optional>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/group_commit.h"
#include "server-core/persistence/history_batches.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::persistence {
namespace {

// Writes a visibility record: the fixed columns, then every custom column taken from the
// record's CustomValuesJson (?12; NULL or an absent key leaves the column NULL, so an
// attribute removed by an upsert leaves the index too).
const std::string& VisibilityUpsertSql() {
  static const auto* sql = [] {
    std::string columns, values, updates;
    for (const CustomColumn& c : AllCustomColumns()) {
      const std::string name = CustomColumnName(c);
      absl::StrAppend(&columns, ", ", name);
      absl::StrAppend(&values, ", json_extract(?12, '$.", name, "')");
      absl::StrAppend(&updates, ", ", name, " = excluded.", name);
    }
    for (const std::string& name : VersioningColumns()) {
      absl::StrAppend(&columns, ", ", name);
      absl::StrAppend(&values, ", json_extract(?12, '$.", name, "')");
      absl::StrAppend(&updates, ", ", name, " = excluded.", name);
    }
    return new std::string(absl::StrCat(
        "INSERT INTO visibility(namespace_id, run_id, workflow_id, workflow_type, task_queue, "
        "status, start_ms, execution_ms, close_ms, history_length, info", columns,
        ") VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11", values,
        ") ON CONFLICT(namespace_id, run_id) DO UPDATE SET "
        "status = excluded.status, close_ms = excluded.close_ms, "
        "history_length = excluded.history_length, info = excluded.info",
        updates));
  }();
  return *sql;
}

class SqliteExecutionStore : public ExecutionStore, private CommitBatchWriter {
 public:
  explicit SqliteExecutionStore(SqliteDb& db)
      : db_(db), group_(*this) {}

  void SetWriteObserver(WriteObserver* observer) override {
    group_.SetObserver(observer);
    std::lock_guard lock(db_.mutex());
    if (observer == nullptr) {
      db_.OnWalPagesAppended(nullptr);
    } else {
      db_.OnWalPagesAppended([observer](int64_t pages) { observer->WalPagesAppended(pages); });
    }
  }

  absl::StatusOr<int64_t> AcquireShard(int32_t shard_id, const std::string& owner) override {
    std::lock_guard lock(db_.mutex());
    Transaction tx(db_);
    RETURN_IF_ERROR(tx.Begin());
    ASSIGN_STMT(upsert, db_.Prepare(
        "INSERT INTO shards(shard_id, range_id, owner, claimed_ms) VALUES (?, 1, ?, "
        "CAST(strftime('%s','now') AS INTEGER) * 1000) ON CONFLICT(shard_id) DO UPDATE SET "
        "range_id = range_id + 1, owner = excluded.owner, claimed_ms = excluded.claimed_ms"));
    RETURN_IF_ERROR(upsert.Bind(1, int64_t{shard_id}).Bind(2, owner).Run());
    ASSIGN_STMT(q, db_.Prepare("SELECT range_id FROM shards WHERE shard_id = ?"));
    auto row = q.Bind(1, int64_t{shard_id}).Step();
    if (!row.ok()) return row.status();
    int64_t range_id = q.Int(0);
    q.Reset();
    RETURN_IF_ERROR(tx.Commit());
    return range_id;
  }

  // Setting range_id + 1 (not incrementing) under both conditions makes a retry idempotent;
  // (R + 1, owner) is this process's own renewal because the owner names one process start.
  // One statement: the database's single writer makes it atomic against AcquireShard.
  absl::Status RenewShardRange(int32_t shard_id, int64_t range_id,
                               const std::string& owner) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(update, db_.Prepare(
        "UPDATE shards SET range_id = ?2 + 1 WHERE shard_id = ?1 AND owner = ?3 "
        "AND range_id IN (?2, ?2 + 1)"));
    RETURN_IF_ERROR(update.Bind(1, int64_t{shard_id}).Bind(2, range_id).Bind(3, owner).Run());
    if (db_.Changes() == 1) return absl::OkStatus();
    return ShardOwnedElsewhere(shard_id, absl::StrCat("range id ", range_id, " is no longer ours"),
                               "its range was not renewed");
  }

  // Through the group committer: concurrent commits (of any shard: this database has one
  // writer) share a transaction (group_commit.h).
  absl::Status Write(Commit& commit) override { return group_.Write(commit); }
  void WriteAsync(Commit& commit, Written written) override {
    group_.WriteAsync(commit, std::move(written));
  }

  absl::StatusOr<MutableStateRecord> GetRun(const std::string& namespace_id,
                                            const std::string& workflow_id,
                                            const std::string& run_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
        "SELECT state FROM executions WHERE namespace_id = ? AND workflow_id = ? AND run_id = ?"));
    auto row = q.Bind(1, namespace_id).Bind(2, workflow_id).Bind(3, run_id).Step();
    if (!row.ok()) return row.status();
    if (!*row) {
      q.Reset();
      return absl::NotFoundError(absl::StrCat("workflow execution not found for workflow id ",
                                              workflow_id, " and run id ", run_id));
    }
    MutableStateRecord state;
    bool parsed = state.ParseFromString(q.Blob(0));
    q.Reset();
    if (!parsed) return absl::DataLossError("a stored mutable state cannot be parsed");
    return state;
  }

  absl::StatusOr<CurrentRun> GetCurrentRun(const std::string& namespace_id,
                                           const std::string& workflow_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
        "SELECT run_id, status, start_request_id FROM current_executions "
        "WHERE namespace_id = ? AND workflow_id = ?"));
    auto row = q.Bind(1, namespace_id).Bind(2, workflow_id).Step();
    if (!row.ok()) return row.status();
    if (!*row) {
      q.Reset();
      return absl::NotFoundError(
          absl::StrCat("workflow execution not found for workflow id ", workflow_id));
    }
    CurrentRun out{q.Text(0), static_cast<int>(q.Int(1)), q.Text(2)};
    q.Reset();
    return out;
  }

  absl::StatusOr<int64_t> VisitEventBytes(
      const std::string& run_id, int64_t first_event_id, int64_t next_event_id, int32_t limit,
      absl::FunctionRef<void(std::string_view)> visit) override {
    std::lock_guard lock(db_.mutex());
    return VisitEventsLocked(run_id, first_event_id, next_event_id, limit,
                             [&](int64_t, std::string_view bytes) { visit(bytes); });
  }

  absl::StatusOr<std::vector<HistoryEvent>> ReadBranchEvents(const std::string& run_id,
                                                             const std::string& branch_token,
                                                             int64_t first_event_id,
                                                             int64_t next_event_id,
                                                             int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
        "SELECT data FROM history_branch_events WHERE run_id = ? AND branch_token = ? AND "
        "event_id >= ? AND event_id < ? ORDER BY event_id LIMIT ?"));
    q.Bind(1, run_id).BindBlob(2, branch_token).Bind(3, first_event_id).Bind(4, next_event_id);
    q.Bind(5, int64_t{limit});
    std::vector<HistoryEvent> events;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      const std::string_view bytes = q.BlobView(0);
      if (!events.emplace_back().ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        return absl::DataLossError("a stored history event cannot be parsed");
      }
      return absl::OkStatus();
    }));
    return events;
  }

  // Fenced inside the transaction, as a Write's group (Batch::RangeId): SQLite's write lock
  // keeps the range id from changing until COMMIT.
  absl::Status DeleteRun(int32_t shard_id, int64_t range_id, const std::string& namespace_id,
                         const std::string& workflow_id, const std::string& run_id) override {
    std::lock_guard lock(db_.mutex());
    Transaction tx(db_);
    RETURN_IF_ERROR(tx.Begin());
    absl::StatusOr<int64_t> stored = StoredRangeId(shard_id);
    if (!stored.ok()) return stored.status();
    if (*stored != range_id) {
      return ShardOwnedElsewhere(shard_id, absl::StrCat("range id ", range_id, " is no longer ours"),
                                 "the run was not deleted");
    }
    const char* statements[] = {
        "DELETE FROM executions WHERE namespace_id = ?1 AND workflow_id = ?2 AND run_id = ?3",
        "DELETE FROM current_executions WHERE namespace_id = ?1 AND workflow_id = ?2 AND run_id = ?3",
        "DELETE FROM visibility WHERE namespace_id = ?1 AND run_id = ?3 AND workflow_id = ?2",
        "DELETE FROM history_batches WHERE run_id = ?3 AND ?1 IS NOT NULL AND ?2 IS NOT NULL",
        "DELETE FROM history_branch_events WHERE run_id = ?3 AND ?1 IS NOT NULL AND "
        "?2 IS NOT NULL",
    };
    for (const char* sql : statements) {
      ASSIGN_STMT(del, db_.Prepare(sql));
      RETURN_IF_ERROR(del.Bind(1, namespace_id).Bind(2, workflow_id).Bind(3, run_id).Run());
    }
    return tx.Commit();
  }

  absl::StatusOr<std::vector<TaskQueueTask>> LoadTaskQueueTasks() override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
        "SELECT task_id, namespace_id, task_queue, kind, data FROM task_queue_tasks "
        "ORDER BY task_id"));
    return ReadTasks(q);
  }

  // The index task_queue_tasks_queue (migration 5) serves it in order, without a sort.
  absl::StatusOr<std::vector<TaskQueueTask>> LoadQueueTasks(
      const std::string& namespace_id, const std::string& task_queue, TaskKind kind,
      int32_t limit, const std::optional<ShardSet>& only = std::nullopt) override {
    std::lock_guard lock(db_.mutex());
    if (!only.has_value()) {
      ASSIGN_STMT(q, db_.Prepare(
          "SELECT task_id, namespace_id, task_queue, kind, data FROM task_queue_tasks "
          "WHERE namespace_id = ? AND task_queue = ? AND kind = ? ORDER BY task_id LIMIT ?"));
      q.Bind(1, namespace_id).Bind(2, task_queue).Bind(3, int64_t{static_cast<int>(kind)})
          .Bind(4, int64_t{limit});
      return ReadTasks(q);
    }
    ASSIGN_STMT(q, db_.Prepare(
        "SELECT task_id, namespace_id, task_queue, kind, data FROM task_queue_tasks "
        "WHERE namespace_id = ?1 AND task_queue = ?2 AND kind = ?3 AND "
        "(shard_id IN (SELECT value FROM json_each(?5)) OR (?6 AND shard_id IS NULL)) "
        "ORDER BY task_id LIMIT ?4"));
    q.Bind(1, namespace_id).Bind(2, task_queue).Bind(3, int64_t{static_cast<int>(kind)})
        .Bind(4, int64_t{limit}).Bind(5, JsonArray(only->shards))
        .Bind(6, int64_t{only->unsharded ? 1 : 0});
    return ReadTasks(q);
  }

  absl::StatusOr<std::vector<QueueName>> ListQueuesWithTasks(const ShardSet& only,
                                                            int32_t limit) override {
    static_assert(static_cast<int>(TaskKind::kTransfer) == 3);
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
        "SELECT DISTINCT namespace_id, task_queue, kind FROM task_queue_tasks "
        "WHERE kind <> 3 AND (shard_id IN (SELECT value FROM json_each(?1)) OR "
        "(?2 AND shard_id IS NULL)) LIMIT ?3"));
    q.Bind(1, JsonArray(only.shards)).Bind(2, int64_t{only.unsharded ? 1 : 0})
        .Bind(3, int64_t{limit});
    std::vector<QueueName> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      out.push_back({q.Text(0), q.Text(1), static_cast<TaskKind>(q.Int(2))});
      return absl::OkStatus();
    }));
    return out;
  }

  // Shards as a JSON array (json_each): one statement whatever their number.
  static std::string JsonArray(const std::vector<int32_t>& shards) {
    std::string out = "[";
    for (size_t i = 0; i < shards.size(); ++i) absl::StrAppend(&out, i == 0 ? "" : ",", shards[i]);
    return out + "]";
  }

  // One shard's transfer tasks through the index task_queue_tasks_transfer (shard_id,
  // task_id) WHERE kind = 3 (migrations 16, 17), in order; kUnshardedTransferTasks: the rows
  // from before migration 16 (NULL shard).
  absl::StatusOr<std::vector<TaskQueueTask>> LoadTransferTasks(int32_t shard_id,
                                                               int64_t after_task_id,
                                                               int32_t limit) override {
    static_assert(static_cast<int>(TaskKind::kTransfer) == 3);
    std::lock_guard lock(db_.mutex());
    const bool unsharded = shard_id == kUnshardedTransferTasks;
    ASSIGN_STMT(q, db_.Prepare(unsharded
        ? "SELECT task_id, namespace_id, task_queue, kind, data FROM task_queue_tasks "
          "WHERE kind = 3 AND shard_id IS NULL AND task_id > ?2 ORDER BY task_id LIMIT ?3"
        : "SELECT task_id, namespace_id, task_queue, kind, data FROM task_queue_tasks "
          "WHERE kind = 3 AND shard_id = ?1 AND task_id > ?2 ORDER BY task_id LIMIT ?3"));
    if (!unsharded) q.Bind(1, int64_t{shard_id});
    q.Bind(2, after_task_id).Bind(3, int64_t{limit});
    return ReadTasks(q);
  }

  absl::StatusOr<std::vector<TimerTaskRow>> LoadTimers(int32_t shard_id, const TimerCursor& after,
                                                       absl::Time until, int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
        "SELECT fire_ms, task_id, data FROM timer_tasks WHERE shard_id = ? "
        "AND (fire_ms, task_id) > (?, ?) AND fire_ms < ? ORDER BY fire_ms, task_id LIMIT ?"));
    q.Bind(1, int64_t{shard_id})
        .Bind(2, after.fire_time == absl::InfinitePast() ? INT64_MIN
                                                         : absl::ToUnixMillis(after.fire_time))
        .Bind(3, after.task_id)
        .Bind(4, until == absl::InfiniteFuture() ? INT64_MAX : absl::ToUnixMillis(until))
        .Bind(5, int64_t{limit});
    std::vector<TimerTaskRow> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      TimerTaskRow& t = out.emplace_back();
      t.shard_id = shard_id;
      t.fire_time = absl::FromUnixMillis(q.Int(0));
      t.task_id = q.Int(1);
      return t.task.ParseFromString(q.Blob(2)) ? absl::OkStatus()
                                                : absl::DataLossError("a stored timer cannot be parsed");
    }));
    return out;
  }

 private:
  // The shard's stored range id, -1 when it has no row: the fence of a transaction (a group
  // commit's, DeleteRun's), read under db_.mutex() after BEGIN IMMEDIATE.
  absl::StatusOr<int64_t> StoredRangeId(int32_t shard_id) {
    ASSIGN_STMT(fence, db_.Prepare("SELECT range_id FROM shards WHERE shard_id = ?"));
    auto row = fence.Bind(1, int64_t{shard_id}).Step();
    if (!row.ok()) return row.status();
    const int64_t stored = *row ? fence.Int(0) : -1;
    fence.Reset();
    return stored;
  }

  // Rows of (task_id, namespace_id, task_queue, kind, data), in the statement's order.
  static absl::StatusOr<std::vector<TaskQueueTask>> ReadTasks(Statement& q) {
    std::vector<TaskQueueTask> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      TaskQueueTask& t = out.emplace_back();
      t.task_id = q.Int(0);
      t.namespace_id = q.Text(1);
      t.task_queue = q.Text(2);
      t.kind = static_cast<TaskKind>(q.Int(3));
      return t.task.ParseFromString(q.Blob(4)) ? absl::OkStatus()
                                                : absl::DataLossError("a stored task cannot be parsed");
    }));
    return out;
  }

  // The serialized forms of a Commit's messages, made before the lock is taken; they live
  // until the group's transaction is over (the statements bind them without copying).
  struct Blobs : PreparedCommit {
    std::vector<std::string> states;               // per run
    std::vector<std::vector<EventBatch>> events;   // per run, per batch of its events
    std::vector<std::string> tasks;                // per new task
    std::vector<std::string> timers;               // per new timer
  };

  // Every blob is serialized in the caller's thread, before it queues: the group's
  // transaction holds the lock that serialises all writers for the SQLite work alone.
  std::unique_ptr<PreparedCommit> Prepare(const Commit& commit) override {
    auto prepared = std::make_unique<Blobs>();
    Blobs& blobs = *prepared;
    for (const RunWrite& run : commit.runs) {
      blobs.states.push_back(run.state.SerializeAsString());
      blobs.events.push_back(BatchEvents(run.events));
    }
    for (const TaskQueueTask& task : commit.new_tasks)
      blobs.tasks.push_back(task.task.SerializeAsString());
    for (const TimerTaskRow& timer : commit.new_timers)
      blobs.timers.push_back(timer.task.SerializeAsString());
    return prepared;
  }

  // A group's transaction: the connection's lock and BEGIN IMMEDIATE (SQLite's write lock,
  // which is also the fence: no other connection can change a range id until COMMIT).
  class Batch : public CommitBatchTransaction {
   public:
    explicit Batch(SqliteExecutionStore& store)
        : store_(store), lock_(store.db_.mutex()), tx_(store.db_) {}
    absl::Status Open() {
      RETURN_IF_ERROR(store_.ReserveIdsIfLow());
      return tx_.Begin();
    }

    absl::StatusOr<std::vector<int64_t>> RangeIds(const std::vector<int32_t>& shards) override {
      std::vector<int64_t> out;
      for (int32_t shard : shards) {
        absl::StatusOr<int64_t> range = store_.StoredRangeId(shard);
        if (!range.ok()) return range.status();
        out.push_back(*range);
      }
      return out;
    }

    absl::Status Write(absl::Span<const GroupItem> items, int& failed) override {
      for (size_t i = 0; i < items.size(); ++i) {
        absl::Status s =
            store_.WriteCommit(*items[i].commit, static_cast<const Blobs&>(*items[i].prepared));
        if (!s.ok()) {
          failed = static_cast<int>(i);
          return s;
        }
      }
      return absl::OkStatus();
    }

    absl::Status Savepoint() override {
      absl::Status s = store_.db_.Exec(savepoint_ ? "RELEASE g; SAVEPOINT g" : "SAVEPOINT g");
      savepoint_ = s.ok();
      return s;
    }
    absl::Status RollbackToSavepoint() override { return store_.db_.Exec("ROLLBACK TO g"); }
    absl::Status Commit() override { return tx_.Commit(); }

   private:
    SqliteExecutionStore& store_;
    std::lock_guard<std::mutex> lock_;
    Transaction tx_;  // after the lock: rolled back before it is let go
    bool savepoint_ = false;
  };

  absl::StatusOr<std::unique_ptr<CommitBatchTransaction>> Begin() override {
    auto batch = std::make_unique<Batch>(*this);
    RETURN_IF_ERROR(batch->Open());
    return batch;
  }

  // One commit's rows, inside a group's transaction (fenced already).
  absl::Status WriteCommit(Commit& commit, const Blobs& blobs) {
    for (size_t i = 0; i < commit.runs.size(); ++i) {
      RETURN_IF_ERROR(WriteRun(commit.shard_id, commit.runs[i], blobs, i));
    }
    for (size_t i = 0; i < commit.new_tasks.size(); ++i) {
      TaskQueueTask& task = commit.new_tasks[i];
      absl::StatusOr<int64_t> id = NextId();
      if (!id.ok()) return id.status();
      ASSIGN_STMT(ins, db_.Prepare(
          "INSERT INTO task_queue_tasks(task_id, namespace_id, task_queue, kind, data, shard_id) "
          "VALUES (?,?,?,?,?,?)"));
      // A commit's tasks are of its run's shard (LoadTransferTasks reads them by it).
      RETURN_IF_ERROR(ins.Bind(1, *id)
                          .Bind(2, task.namespace_id)
                          .Bind(3, task.task_queue)
                          .Bind(4, int64_t{static_cast<int>(task.kind)})
                          .BindBlobView(5, blobs.tasks[i])
                          .Bind(6, int64_t{commit.shard_id})
                          .Run());
      task.task_id = *id;
    }
    for (int64_t id : commit.done_task_ids) {
      ASSIGN_STMT(del, db_.Prepare("DELETE FROM task_queue_tasks WHERE task_id = ?"));
      RETURN_IF_ERROR(del.Bind(1, id).Run());
    }
    for (size_t i = 0; i < commit.new_timers.size(); ++i) {
      TimerTaskRow& timer = commit.new_timers[i];
      if (timer.task_id == 0) {
        absl::StatusOr<int64_t> id = NextId();
        if (!id.ok()) return id.status();
        timer.task_id = *id;
      }
      ASSIGN_STMT(ins, db_.Prepare(
          "INSERT INTO timer_tasks(shard_id, fire_ms, task_id, data) VALUES (?,?,?,?)"));
      RETURN_IF_ERROR(ins.Bind(1, int64_t{timer.shard_id})
                          .Bind(2, absl::ToUnixMillis(timer.fire_time))
                          .Bind(3, timer.task_id)
                          .BindBlobView(4, blobs.timers[i])
                          .Run());
    }
    for (const TimerTaskRow& timer : commit.done_timers) {
      ASSIGN_STMT(del, db_.Prepare(
          "DELETE FROM timer_tasks WHERE shard_id = ? AND fire_ms = ? AND task_id = ?"));
      RETURN_IF_ERROR(del.Bind(1, int64_t{timer.shard_id})
                          .Bind(2, absl::ToUnixMillis(timer.fire_time))
                          .Bind(3, timer.task_id)
                          .Run());
    }
    for (ReplicationTaskRow& task : commit.new_replication_tasks) {
      ASSIGN_STMT(ins, db_.Prepare("INSERT INTO replication_tasks(shard_id, data) VALUES (?,?)"));
      RETURN_IF_ERROR(
          ins.Bind(1, int64_t{commit.shard_id}).BindBlob(2, task.task.SerializeAsString()).Run());
      task.task_id = db_.LastInsertRowId();
    }
    return absl::OkStatus();
  }

  // Task ids and the ids of timers their caller left at 0 (the contract: "assigned by Commit
  // unless set"): unique and increasing across restarts, one sequence for both, as the
  // PostgreSQL store's. The sequence is the AUTOINCREMENT counter of task_queue_tasks in
  // sqlite_sequence (SQLite lets a program update it; a row inserted with an id below it
  // leaves it alone). Ids are handed out from a block of kIdBlock reserved ahead in a
  // transaction of its own, before a group's (ReserveIdsIfLow, from Batch::Open), so that a
  // commit neither reads nor writes the sequence, and no group's rollback can take back a
  // block whose ids are in use; a restart skips the rest of the block. A group that uses up
  // the block takes the next ids from the sequence itself, one by one, in its transaction.
  static constexpr int64_t kIdBlock = 100000;
  // Reserves a new block when fewer than a tenth of one are left. Requires the lock and no
  // open transaction.
  absl::Status ReserveIdsIfLow() {
    if (id_ceiling_ - next_id_ >= kIdBlock / 10) return absl::OkStatus();
    Transaction tx(db_);
    RETURN_IF_ERROR(tx.Begin());
    absl::StatusOr<int64_t> last = AdvanceSequence(kIdBlock);
    if (!last.ok()) return last.status();
    RETURN_IF_ERROR(tx.Commit());
    next_id_ = *last - kIdBlock + 1;
    id_ceiling_ = *last + 1;
    return absl::OkStatus();
  }
  // The next id. Requires the lock and an open transaction.
  absl::StatusOr<int64_t> NextId() {
    if (next_id_ < id_ceiling_) return next_id_++;
    return AdvanceSequence(1);
  }
  // Adds `n` to the sequence (creating its row at 0 first); returns its new value.
  absl::StatusOr<int64_t> AdvanceSequence(int64_t n) {
    ASSIGN_STMT(seed, db_.Prepare(
        "INSERT INTO sqlite_sequence(name, seq) SELECT 'task_queue_tasks', 0 WHERE NOT EXISTS "
        "(SELECT 1 FROM sqlite_sequence WHERE name = 'task_queue_tasks')"));
    RETURN_IF_ERROR(seed.Run());
    ASSIGN_STMT(next, db_.Prepare(
        "UPDATE sqlite_sequence SET seq = seq + ? WHERE name = 'task_queue_tasks' RETURNING seq"));
    next.Bind(1, n);
    absl::StatusOr<bool> row = next.Step();
    if (!row.ok()) return row.status();
    const int64_t last = *row ? next.Int(0) : 0;
    next.Reset();
    if (last == 0) return absl::InternalError("the task id sequence is missing");
    return last;
  }
  int64_t next_id_ = 0;     // [next_id_, id_ceiling_): reserved and unused; under db_.mutex()
  int64_t id_ceiling_ = 0;

  // The branch operations of a run (execution_store.h), in their order. Requires the lock
  // and an open transaction; rare (conflict resolution only).
  absl::Status WriteBranches(const RunWrite& run) {
    const std::string& run_id = run.state.execution().run_id();
    for (const BranchFork& fork : run.branch_forks) {
      if (!fork.from_token.empty()) {
        ASSIGN_STMT(copy, db_.Prepare(
            "INSERT INTO history_branch_events(run_id, branch_token, event_id, data) "
            "SELECT run_id, ?, event_id, data FROM history_branch_events WHERE run_id = ? AND "
            "branch_token = ? AND event_id <= ?"));
        RETURN_IF_ERROR(copy.BindBlob(1, fork.token).Bind(2, run_id).BindBlob(3, fork.from_token)
                            .Bind(4, fork.through_event_id).Run());
        continue;
      }
      RETURN_IF_ERROR(CopyHistoryToBranch(run_id, fork.token, fork.through_event_id));
    }
    if (run.branch_switch.has_value()) {
      const BranchSwitch& sw = *run.branch_switch;
      RETURN_IF_ERROR(CopyHistoryToBranch(run_id, sw.retire_as, -1));
      RETURN_IF_ERROR(CutHistory(run_id, sw.keep_through_event_id));
      if (!sw.promote.empty()) {
        ASSIGN_STMT(promoted, db_.Prepare(
            "SELECT event_id, data FROM history_branch_events WHERE run_id = ? AND "
            "branch_token = ? AND event_id > ? ORDER BY event_id"));
        promoted.Bind(1, run_id).BindBlob(2, sw.promote).Bind(3, sw.keep_through_event_id);
        std::vector<int64_t> ids;
        std::vector<std::string> events;
        RETURN_IF_ERROR(promoted.ForEachRow([&] {
          ids.push_back(promoted.Int(0));
          events.push_back(promoted.Blob(1));
          return absl::OkStatus();
        }));
        for (const EventBatch& batch : BatchEvents(ids, events)) {
          RETURN_IF_ERROR(InsertBatch(run_id, batch));
        }
        ASSIGN_STMT(drop, db_.Prepare(
            "DELETE FROM history_branch_events WHERE run_id = ? AND branch_token = ?"));
        RETURN_IF_ERROR(drop.Bind(1, run_id).BindBlob(2, sw.promote).Run());
      }
    }
    for (const BranchAppend& append : run.branch_appends) {
      for (const HistoryEvent& event : append.events) {
        ASSIGN_STMT(ins, db_.Prepare(
            "INSERT INTO history_branch_events(run_id, branch_token, event_id, data) "
            "VALUES (?,?,?,?)"));
        absl::Status s = ins.Bind(1, run_id)
                             .BindBlob(2, append.token)
                             .Bind(3, event.event_id())
                             .BindBlob(4, event.SerializeAsString())
                             .Run();
        if (!s.ok()) {
          return absl::AbortedError(absl::StrCat("event ", event.event_id(), " of a branch of run ",
                                                 run_id, " exists already"));
        }
      }
    }
    return absl::OkStatus();
  }

  // One run's rows, in this order: its row (with the version check), its current-run
  // pointer, its branch operations (whose switch frees the event ids the new events may
  // take), its events, its visibility record. Requires the lock and an open transaction.
  // `index`: the run's place in `blobs`.
  absl::Status WriteRun(int32_t shard_id, RunWrite& run, const Blobs& blobs, size_t index) {
    RETURN_IF_ERROR(WriteRunRow(shard_id, run, blobs.states[index]));
    RETURN_IF_ERROR(WriteCurrentRunPointer(run));
    RETURN_IF_ERROR(WriteBranches(run));
    RETURN_IF_ERROR(WriteEvents(run, blobs.events[index]));
    return WriteVisibility(run);
  }

  // The run's row: inserted at expected version 0 (ABORTED if it exists), else updated only
  // if its stored version is the expected one (ABORTED if another writer changed it).
  absl::Status WriteRunRow(int32_t shard_id, const RunWrite& run, const std::string& state) {
    const auto& exec = run.state.execution();
    if (run.expected_db_version == 0) {
      ASSIGN_STMT(ins, db_.Prepare(
          "INSERT INTO executions(namespace_id, workflow_id, run_id, shard_id, db_version, "
          "state) VALUES (?,?,?,?,?,?)"));
      absl::Status s = ins.Bind(1, exec.namespace_id())
                           .Bind(2, exec.workflow_id())
                           .Bind(3, exec.run_id())
                           .Bind(4, int64_t{shard_id})
                           .Bind(5, run.state.db_version())
                           .BindBlobView(6, state)
                           .Run();
      // A fixed message: SQLite's names the table and columns, and this one reaches clients.
      if (!s.ok()) {
        if (absl::IsUnavailable(s)) return s;
        return absl::AbortedError(absl::StrCat("run ", exec.run_id(), " exists already"));
      }
      return absl::OkStatus();
    }
    ASSIGN_STMT(
        upd,
        db_.Prepare("UPDATE executions SET db_version = ?, state = ? WHERE namespace_id = ? AND "
                    "workflow_id = ? AND run_id = ? AND db_version = ?"));
    RETURN_IF_ERROR(upd.Bind(1, run.state.db_version())
                        .BindBlobView(2, state)
                        .Bind(3, exec.namespace_id())
                        .Bind(4, exec.workflow_id())
                        .Bind(5, exec.run_id())
                        .Bind(6, run.expected_db_version)
                        .Run());
    if (db_.Changes() != 1) {
      return absl::AbortedError(
          absl::StrCat("run ", exec.run_id(), " was changed concurrently; nothing was written"));
    }
    return absl::OkStatus();
  }

  // The run's current-run pointer (execution_store.h's CurrentRunChange):
  //   kCreate: inserted unless the workflow id has one (ALREADY_EXISTS);
  //   kReplace: must still name the expected run (else ABORTED);
  //   kNone: its status follows the run's, only with a visibility record (see below).
  absl::Status WriteCurrentRunPointer(const RunWrite& run) {
    const auto& exec = run.state.execution();
    switch (run.current_run_change) {
      case CurrentRunChange::kCreate: {
        ASSIGN_STMT(ins, db_.Prepare(
            "INSERT INTO current_executions(namespace_id, workflow_id, run_id, status, "
            "start_request_id) VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING"));
        RETURN_IF_ERROR(ins.Bind(1, exec.namespace_id())
                            .Bind(2, exec.workflow_id())
                            .Bind(3, exec.run_id())
                            .Bind(4, int64_t{exec.status()})
                            .Bind(5, exec.start_request_id())
                            .Run());
        if (db_.Changes() != 1) {
          return absl::AlreadyExistsError(
              absl::StrCat("workflow id ", exec.workflow_id(), " already has a current run"));
        }
        break;
      }
      case CurrentRunChange::kReplace: {
        ASSIGN_STMT(upd, db_.Prepare(
            "UPDATE current_executions SET run_id = ?, status = ?, start_request_id = ? "
            "WHERE namespace_id = ? AND workflow_id = ? AND run_id = ?"));
        RETURN_IF_ERROR(upd.Bind(1, exec.run_id())
                            .Bind(2, int64_t{exec.status()})
                            .Bind(3, exec.start_request_id())
                            .Bind(4, exec.namespace_id())
                            .Bind(5, exec.workflow_id())
                            .Bind(6, run.expected_current_run_id)
                            .Run());
        if (db_.Changes() != 1) {
          return absl::AbortedError(absl::StrCat("the current run of ", exec.workflow_id(),
                                                 " changed concurrently"));
        }
        break;
      }
      case CurrentRunChange::kNone: {
        // A run's status only changes when it closes, and closing always rewrites its
        // visibility record: skip the page write on every other change.
        if (!run.visibility.has_value()) break;
        ASSIGN_STMT(upd, db_.Prepare(
            "UPDATE current_executions SET status = ? WHERE namespace_id = ? AND "
            "workflow_id = ? AND run_id = ?"));
        RETURN_IF_ERROR(upd.Bind(1, int64_t{exec.status()})
                            .Bind(2, exec.namespace_id())
                            .Bind(3, exec.workflow_id())
                            .Bind(4, exec.run_id())
                            .Run());
        break;
      }
    }
    return absl::OkStatus();
  }

  // The run's new events, in their order; `events`: their serialized blobs. An event id
  // taken already is ABORTED (with a fixed message, as for the run's row).
  absl::Status WriteEvents(const RunWrite& run, const std::vector<EventBatch>& batches) {
    for (const EventBatch& batch : batches) {
      RETURN_IF_ERROR(InsertBatch(run.state.execution().run_id(), batch));
    }
    return absl::OkStatus();
  }

  // A batch must follow the run's stored events (checked against the last batch, one probe
  // of the key): one that does not is ABORTED, with a fixed message as for the run's row.
  absl::Status InsertBatch(const std::string& run_id, const EventBatch& batch) {
    ASSIGN_STMT(ins, db_.Prepare(
        "INSERT INTO history_batches(run_id, first_event_id, last_event_id, data) "
        "SELECT ?1, ?2, ?3, ?4 WHERE COALESCE((SELECT last_event_id FROM history_batches "
        "WHERE run_id = ?1 ORDER BY first_event_id DESC LIMIT 1), 0) < ?2"));
    absl::Status s = ins.Bind(1, run_id)
                         .Bind(2, batch.first_event_id)
                         .Bind(3, batch.last_event_id())
                         .BindBlobView(4, batch.bytes)
                         .Run();
    if (absl::IsUnavailable(s) || (s.ok() && db_.Changes() == 1)) return s;
    return absl::AbortedError(
        absl::StrCat("event ", batch.first_event_id, " of run ", run_id, " exists already"));
  }

  // Events [first_event_id, next_event_id) of the run's history, at most `limit` (negative:
  // no limit), in order. Requires the lock. The first batch is the last one starting at or
  // before first_event_id (one probe of the key); the walk stops at the first batch past
  // the range, so it reads no more than the range's batches.
  absl::StatusOr<int64_t> VisitEventsLocked(
      const std::string& run_id, int64_t first_event_id, int64_t next_event_id, int64_t limit,
      absl::FunctionRef<void(int64_t, std::string_view)> visit) {
    ASSIGN_STMT(q, db_.Prepare(
        "SELECT first_event_id, data FROM history_batches WHERE run_id = ?1 AND "
        "first_event_id >= COALESCE((SELECT MAX(first_event_id) FROM history_batches "
        "WHERE run_id = ?1 AND first_event_id <= ?2), 0) AND first_event_id < ?3 "
        "ORDER BY first_event_id"));
    q.Bind(1, run_id).Bind(2, first_event_id).Bind(3, next_event_id);
    EventRangeRead read{first_event_id, next_event_id, limit};
    absl::Status result;
    while (result.ok() && !read.done) {
      absl::StatusOr<bool> row = q.Step();
      if (!row.ok()) result = row.status();
      if (!result.ok() || !*row) break;
      result = read.Visit(q.BlobView(1), q.Int(0), visit);
    }
    q.Reset();  // the walk may stop before the last row
    if (!result.ok()) return result;
    return read.visited;
  }

  // Copies the run's history, through `through_event_id` (negative: all of it), to the
  // branch `token`, one row per event as branches are stored. Requires the lock.
  absl::Status CopyHistoryToBranch(const std::string& run_id, const std::string& token,
                                   int64_t through_event_id) {
    ASSIGN_STMT(ins, db_.Prepare(
        "INSERT INTO history_branch_events(run_id, branch_token, event_id, data) "
        "VALUES (?,?,?,?)"));
    absl::Status inserted;
    absl::StatusOr<int64_t> copied = VisitEventsLocked(
        run_id, 1, through_event_id < 0 ? INT64_MAX : through_event_id + 1, -1,
        [&](int64_t id, std::string_view bytes) {
          if (!inserted.ok()) return;
          inserted = ins.Reset().Bind(1, run_id).BindBlob(2, token).Bind(3, id).BindBlobView(4, bytes).Run();
        });
    if (!copied.ok()) return copied.status();
    if (!inserted.ok() && !absl::IsUnavailable(inserted)) {
      return absl::AbortedError(
          absl::StrCat("an event of a branch of run ", run_id, " exists already"));
    }
    return inserted;
  }

  // Removes the run's events after `keep_through_event_id`: the batches that start after it
  // go, and the one that holds it keeps its events up to it. Requires the lock.
  absl::Status CutHistory(const std::string& run_id, int64_t keep_through_event_id) {
    ASSIGN_STMT(last, db_.Prepare(
        "SELECT first_event_id, data FROM history_batches WHERE run_id = ? AND "
        "first_event_id <= ? ORDER BY first_event_id DESC LIMIT 1"));
    last.Bind(1, run_id).Bind(2, keep_through_event_id);
    absl::StatusOr<bool> found = last.Step();
    if (!found.ok()) return found.status();
    std::optional<EventBatch> kept;
    absl::Status parsed;
    if (*found) {
      kept.emplace().first_event_id = last.Int(0);
      parsed = VisitBatch(last.BlobView(1), kept->first_event_id,
                          [&](int64_t id, std::string_view bytes) {
                            if (id > keep_through_event_id) return false;
                            AppendToBatch(kept->bytes, bytes);
                            ++kept->event_count;
                            return true;
                          });
    }
    last.Reset();
    RETURN_IF_ERROR(parsed);
    ASSIGN_STMT(cut, db_.Prepare(
        "DELETE FROM history_batches WHERE run_id = ? AND first_event_id > ?"));
    RETURN_IF_ERROR(cut.Bind(1, run_id).Bind(2, keep_through_event_id).Run());
    if (!kept.has_value()) return absl::OkStatus();
    ASSIGN_STMT(shorten, db_.Prepare(
        "UPDATE history_batches SET data = ?, last_event_id = ? WHERE run_id = ? AND "
        "first_event_id = ?"));
    return shorten.BindBlobView(1, kept->bytes)
        .Bind(2, kept->last_event_id())
        .Bind(3, run_id)
        .Bind(4, kept->first_event_id)
        .Run();
  }

  // The run's visibility record, if it has one, and its archival queue row when it closes
  // in a namespace that archives (kept as it is when the run was queued before, so the
  // archiver's progress is never reset).
  absl::Status WriteVisibility(const RunWrite& run) {
    if (!run.visibility.has_value()) return absl::OkStatus();
    const VisibilityRecord& v = *run.visibility;
    ASSIGN_STMT(up, db_.Prepare(VisibilityUpsertSql()));
    up.Bind(1, v.namespace_id)
        .Bind(2, v.run_id)
        .Bind(3, v.workflow_id)
        .Bind(4, v.workflow_type)
        .Bind(5, v.task_queue)
        .Bind(6, int64_t{v.status})
        .Bind(7, absl::ToUnixMillis(v.start_time))
        .Bind(8, absl::ToUnixMillis(v.execution_time));
    if (v.close_time.has_value()) {
      up.Bind(9, absl::ToUnixMillis(*v.close_time));
    } else {
      up.BindNull(9);
    }
    up.Bind(10, v.history_length).BindBlobView(11, v.info);
    if (v.custom_json.empty()) {
      up.BindNull(12);
    } else {
      up.Bind(12, v.custom_json);
    }
    RETURN_IF_ERROR(up.Run());
    if (!run.archive_on_close || !v.close_time.has_value()) return absl::OkStatus();
    ASSIGN_STMT(
        queue,
        db_.Prepare(
            "INSERT OR IGNORE INTO archival_queue(namespace_id, run_id, workflow_id, close_ms) "
            "VALUES (?,?,?,?)"));
    return queue.Bind(1, v.namespace_id)
        .Bind(2, v.run_id)
        .Bind(3, v.workflow_id)
        .Bind(4, absl::ToUnixMillis(*v.close_time))
        .Run();
  }

  SqliteDb& db_;
  GroupCommitter group_;
};

}  // namespace

std::unique_ptr<ExecutionStore> NewSqliteExecutionStore(SqliteDb& db) {
  return std::make_unique<SqliteExecutionStore>(db);
}

}  // namespace tock::persistence
