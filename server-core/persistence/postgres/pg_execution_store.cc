// The PostgreSQL ExecutionStore: the contract of execution_store.h for several hosts that
// share one database, with Temporal's locking rules (READ COMMITTED plus row locks):
//
//   - Write goes through the group committer (group_commit.h): concurrent commits of one
//     shard share a transaction, which locks the shard's row FOR SHARE and compares the
//     range id once, before it changes anything (Batch::RangeId). A steal (AcquireShard)
//     takes the same row's exclusive lock, so it waits for the writers in flight, and every
//     writer after it reads the new range id and writes nothing (FAILED_PRECONDITION).
//   - A run's db_version and the current-run pointer are checked by the statement that
//     changes them (UPDATE ... WHERE db_version = expected; INSERT ... ON CONFLICT DO
//     NOTHING; UPDATE ... WHERE run_id = expected). Each takes the row's lock exactly as
//     Temporal's SELECT ... FOR UPDATE does, and under READ COMMITTED a statement that
//     waited for a concurrent writer re-checks its condition on the row that writer
//     committed, so the check and the lock are one round trip instead of two. A second
//     writer of a run therefore waits, then finds the version moved on: ABORTED.
//   - Task ids (task_queue_tasks.task_id, a BIGSERIAL) come from one database sequence, so
//     they increase across hosts and restarts without range-id blocks: the database hands
//     out ids under its own lock, and a sequence never goes back. Timers the caller leaves
//     at id 0 draw from the same sequence (the history engine sets its own ids, from its
//     range-id block, so this is not on its path). Ids are drawn when a transaction
//     inserts, not when it commits: two concurrent commits may become visible in the
//     opposite order of their ids. LoadQueueTasks therefore always reads a queue from its
//     oldest task (matching skips the ones it holds), never after a cursor that could pass
//     the ids of transactions that may still commit.
//
// Round trips: commit latency to PostgreSQL bounds throughput, so a group sends its rows
// in one pipeline whatever their count: the events, tasks and timers of its commits go as
// arrays (their serialized messages concatenated in one bytea, cut by offsets on the
// server), never one INSERT per row; each run's row and its events are one statement
// (AddRun), the new and consumed tasks of the group another. A group (of one change or of
// many) is one round trip: BEGIN, the fence, its statements and COMMIT (Batch::
// WriteAllAtOnce); a group in which a commit does not pass is then written the careful way:
// BEGIN with the fence, its statements after a savepoint, COMMIT.
// bench/execution_store_bench measures it against one-row transactions.
#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/visibility_store.h"
#include "server-core/persistence/group_commit.h"
#include "server-core/persistence/history_batches.h"
#include "server-core/persistence/postgres/pg_stores.h"

namespace tock::persistence {
namespace {

// The CTEs that write a visibility record ($7..$17) and queue it for archival ($18): the
// fixed columns, then every custom column taken from $19, the record's CustomValuesJson
// (NULL or an absent key leaves the column NULL).
const std::string& VisibilityUpsertSql() {
  static const auto* sql = [] {
    std::string columns, values, updates;
    for (const CustomColumn& c : AllCustomColumns()) {
      const std::string name = CustomColumnName(c);
      const char* cast = c.type == CustomType::kDouble    ? "::double precision"
                         : c.type == CustomType::kKeywordList ? "::jsonb"
                         : c.type == CustomType::kKeyword || c.type == CustomType::kText ? ""
                                                                                       : "::bigint";
      absl::StrAppend(&columns, ", ", name);
      absl::StrAppend(&values, ", ($19::jsonb->>'", name, "')", cast);
      absl::StrAppend(&updates, ", ", name, " = EXCLUDED.", name);
    }
    for (const std::string& name : VersioningColumns()) {
      absl::StrAppend(&columns, ", ", name);
      absl::StrAppend(&values, ", ($19::jsonb->>'", name, "')");
      absl::StrAppend(&updates, ", ", name, " = EXCLUDED.", name);
    }
    return new std::string(absl::StrCat(
        ", v AS (INSERT INTO visibility(namespace_id, run_id, workflow_id, workflow_type, "
        "task_queue, status, start_ms, execution_ms, close_ms, history_length, info",
        columns, ") VALUES ($7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17", values,
        ") ON CONFLICT (namespace_id, run_id) DO UPDATE SET status = EXCLUDED.status, "
        "close_ms = EXCLUDED.close_ms, history_length = EXCLUDED.history_length, "
        "info = EXCLUDED.info",
        updates,
        "), a AS (INSERT INTO archival_queue(namespace_id, run_id, workflow_id, close_ms) "
        "SELECT $7, $8, $9, $15 WHERE $18 ON CONFLICT DO NOTHING)"));
  }();
  return *sql;
}

// The sequence of task_queue_tasks' BIGSERIAL (PostgreSQL names it table_column_seq).
constexpr char kTaskIdSequence[] = "task_queue_tasks_task_id_seq";

// The database's clock in milliseconds: hosts' clocks may differ, the database's is one.
constexpr char kNowMs[] = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

// Array literals for parameters sent as text and cast on the server ($1::bigint[]): the
// values are still bound, never part of the statement, so quoting matters for correctness
// only. Integers need no quoting; text elements are double-quoted with \ and " escaped.
std::string IntArray(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    absl::StrAppend(&out, values[i]);
  }
  out += '}';
  return out;
}

std::string TextArray(const std::vector<std::string_view>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

// Messages serialized back to back into one bytea, with each one's 1-based offset and
// length (substring()'s arguments), so that any number of rows is one parameter.
struct Packed {
  std::string bytes;
  std::vector<int64_t> offsets;
  std::vector<int64_t> lengths;

  template <typename Message>
  void Add(const Message& m) {
    const size_t before = bytes.size();
    m.AppendToString(&bytes);
    offsets.push_back(static_cast<int64_t>(before) + 1);
    lengths.push_back(static_cast<int64_t>(bytes.size() - before));
  }
  void AddBytes(std::string_view b) {
    offsets.push_back(static_cast<int64_t>(bytes.size()) + 1);
    lengths.push_back(static_cast<int64_t>(b.size()));
    bytes.append(b);
  }
};

// A run's new events as batches (history_batches.h), packed, with each batch's first id.
struct PackedBatches : Packed {
  std::vector<int64_t> first_ids, last_ids;
};

class PgExecutionStore : public ExecutionStore, private CommitBatchWriter {
 public:
  explicit PgExecutionStore(PgPool& pool) : pool_(pool), group_(*this) {}

  // (PostgreSQL's own WAL is measured by the benchmark, pg_current_wal_lsn.)
  void SetWriteObserver(WriteObserver* observer) override { group_.SetObserver(observer); }

  // One upsert: the first acquisition inserts range id 1; later ones increment under the
  // row's exclusive lock (ON CONFLICT DO UPDATE locks the row as SELECT ... FOR UPDATE
  // would), which waits for every writer holding the row FOR SHARE. Two hosts inserting
  // the row at once cannot both insert: the loser's ON CONFLICT turns into the update.
  absl::StatusOr<int64_t> AcquireShard(int32_t shard_id, const std::string& owner) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        absl::StrCat("INSERT INTO shards(shard_id, range_id, owner, claimed_ms) VALUES ($1, 1, "
                     "$2, ",
                     kNowMs,
                     ") ON CONFLICT (shard_id) DO UPDATE SET "
                     "range_id = shards.range_id + 1, owner = EXCLUDED.owner, "
                     "claimed_ms = EXCLUDED.claimed_ms RETURNING range_id"),
        {PgParam::Int(shard_id), PgParam::Text(owner)});
    if (!r.ok()) return r.status();
    if (r->rows() != 1) return absl::InternalError("acquiring a shard returned no range id");
    return r->Int(0, 0);
  }

  // Setting range_id + 1 (not incrementing) under both conditions makes a retry idempotent;
  // (R + 1, owner) is this process's own renewal because the owner names one process start.
  // The UPDATE takes the row's exclusive lock, so it waits for the Writes holding the row
  // FOR SHARE (this host drained its own first: ShardController) and re-checks its condition
  // on the row a concurrent AcquireShard committed.
  absl::Status RenewShardRange(int32_t shard_id, int64_t range_id,
                               const std::string& owner) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "UPDATE shards SET range_id = $2::bigint + 1 WHERE shard_id = $1 AND owner = $3 "
        "AND range_id IN ($2::bigint, $2::bigint + 1)",
        {PgParam::Int(shard_id), PgParam::Int(range_id), PgParam::Text(owner)});
    if (!r.ok()) return r.status();
    if (r->affected() == 1) return absl::OkStatus();
    return ShardOwnedElsewhere(shard_id, absl::StrCat("range id ", range_id, " is no longer ours"),
                               "its range was not renewed");
  }

  // Through the group committer: concurrent commits of this host share a transaction
  // (group_commit.h: one group per host).
  absl::Status Write(Commit& commit) override { return group_.Write(commit); }
  void WriteAsync(Commit& commit, Written written) override {
    group_.WriteAsync(commit, std::move(written));
  }

  absl::StatusOr<MutableStateRecord> GetRun(const std::string& namespace_id,
                                            const std::string& workflow_id,
                                            const std::string& run_id) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT state FROM executions WHERE namespace_id = $1 AND workflow_id = $2 AND "
        "run_id = $3",
        {PgParam::Text(namespace_id), PgParam::Text(workflow_id), PgParam::Text(run_id)});
    if (!r.ok()) return r.status();
    if (r->rows() == 0) {
      return absl::NotFoundError(absl::StrCat("workflow execution not found for workflow id ",
                                              workflow_id, " and run id ", run_id));
    }
    MutableStateRecord state;
    const std::string_view bytes = r->View(0, 0);
    if (!state.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return absl::DataLossError("a stored mutable state cannot be parsed");
    }
    return state;
  }

  absl::StatusOr<CurrentRun> GetCurrentRun(const std::string& namespace_id,
                                           const std::string& workflow_id) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT run_id, status, start_request_id FROM current_executions "
        "WHERE namespace_id = $1 AND workflow_id = $2",
        {PgParam::Text(namespace_id), PgParam::Text(workflow_id)});
    if (!r.ok()) return r.status();
    if (r->rows() == 0) {
      return absl::NotFoundError(
          absl::StrCat("workflow execution not found for workflow id ", workflow_id));
    }
    return CurrentRun{r->Text(0, 0), static_cast<int>(r->Int(0, 1)), r->Text(0, 2)};
  }

  // Pages of at most kEventPage rows, each one result read in binary; each event's bytes
  // are handed over in place (no copy, no parse). Paging bounds the memory of a whole-history
  // read (the archiver and replays ask for every event) at a round trip per page; events are
  // append-only, so pages read at different moments still join up. The connection is back in
  // the pool before `visit` runs, so, unlike SQLite's, this store would even allow `visit` to
  // call it.
  absl::StatusOr<int64_t> VisitEventBytes(
      const std::string& run_id, int64_t first_event_id, int64_t next_event_id, int32_t limit,
      absl::FunctionRef<void(std::string_view)> visit) override {
    constexpr int64_t kBatchPage = 200;
    int64_t visited = 0;
    int64_t from = first_event_id;
    // A negative limit is none, as SQLite's. Bounded: every full page moves `from` past
    // kBatchPage stored batches. The first batch of a page is the last one starting at or
    // before `from` (one probe of the key).
    while (limit < 0 || visited < limit) {
      absl::StatusOr<PgResult> r = pool_.Query(
          "SELECT first_event_id, data FROM history_batches WHERE run_id = $1 AND "
          "first_event_id >= COALESCE((SELECT max(first_event_id) FROM history_batches "
          "WHERE run_id = $1 AND first_event_id <= $2), 0) AND first_event_id < $3 "
          "ORDER BY first_event_id LIMIT $4",
          {PgParam::Text(run_id), PgParam::Int(from), PgParam::Int(next_event_id),
           PgParam::Int(kBatchPage)});
      if (!r.ok()) return r.status();
      EventRangeRead read{from, next_event_id, limit < 0 ? -1 : limit - visited};
      for (int i = 0; i < r->rows() && !read.done; ++i) {
        absl::Status parsed =
            read.Visit(r->View(i, 1), r->Int(i, 0), [&](int64_t id, std::string_view bytes) {
              visit(bytes);
              from = id + 1;
            });
        if (!parsed.ok()) return parsed;
      }
      visited += read.visited;
      if (read.done || r->rows() < kBatchPage) break;
    }
    return visited;
  }

  absl::StatusOr<std::vector<HistoryEvent>> ReadBranchEvents(const std::string& run_id,
                                                             const std::string& branch_token,
                                                             int64_t first_event_id,
                                                             int64_t next_event_id,
                                                             int32_t limit) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT data FROM history_branch_events WHERE run_id = $1 AND branch_token = $2 AND "
        "event_id >= $3 AND event_id < $4 ORDER BY event_id LIMIT $5",
        {PgParam::Text(run_id), PgParam::Bytes(branch_token), PgParam::Int(first_event_id),
         PgParam::Int(next_event_id), PgParam::Int(limit < 0 ? 100000 : limit)});
    if (!r.ok()) return r.status();
    std::vector<HistoryEvent> events(static_cast<size_t>(r->rows()));
    for (int i = 0; i < r->rows(); ++i) {
      const std::string_view bytes = r->View(i, 0);
      if (!events[static_cast<size_t>(i)].ParseFromArray(bytes.data(),
                                                         static_cast<int>(bytes.size()))) {
        return absl::DataLossError("a stored history event cannot be parsed");
      }
    }
    return events;
  }

  // One statement (data-modifying CTEs run together, atomically), so one round trip. The
  // fence is the shard's row FOR SHARE, as a Write's (Batch::RangeId): a steal waits for the
  // delete, and a delete after a steal finds the new range id and deletes nothing.
  absl::Status DeleteRun(int32_t shard_id, int64_t range_id, const std::string& namespace_id,
                         const std::string& workflow_id, const std::string& run_id) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "WITH f AS (SELECT 1 FROM shards WHERE shard_id = $4 AND range_id = $5 FOR SHARE), "
        "e AS (DELETE FROM executions WHERE namespace_id = $1 AND workflow_id = $2 AND "
        "run_id = $3 AND EXISTS (SELECT 1 FROM f)), c AS (DELETE FROM current_executions "
        "WHERE namespace_id = $1 AND workflow_id = $2 AND run_id = $3 AND EXISTS (SELECT 1 "
        "FROM f)), v AS (DELETE FROM visibility WHERE namespace_id = $1 AND run_id = $3 AND "
        "workflow_id = $2 AND EXISTS (SELECT 1 FROM f)), b AS (DELETE FROM "
        "history_branch_events WHERE run_id = $3 AND EXISTS (SELECT 1 FROM f)), h AS (DELETE "
        "FROM history_batches WHERE run_id = $3 AND EXISTS (SELECT 1 FROM f)) "
        "SELECT count(*) FROM f",
        {PgParam::Text(namespace_id), PgParam::Text(workflow_id), PgParam::Text(run_id),
         PgParam::Int(shard_id), PgParam::Int(range_id)});
    if (!r.ok()) return r.status();
    if (r->Int(0, 0) == 0) {
      return ShardOwnedElsewhere(shard_id,
                                 absl::StrCat("range id ", range_id, " is no longer ours"),
                                 "the run was not deleted");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<TaskQueueTask>> LoadTaskQueueTasks() override {
    return ReadTasks(pool_.Query(
        "SELECT task_id, namespace_id, task_queue, kind, data FROM task_queue_tasks "
        "ORDER BY task_id"));
  }

  // The index task_queue_tasks_queue (migration 5) serves it in order, without a sort.
  absl::StatusOr<std::vector<TaskQueueTask>> LoadQueueTasks(
      const std::string& namespace_id, const std::string& task_queue, TaskKind kind,
      int32_t limit, const std::optional<ShardSet>& only = std::nullopt) override {
    if (!only.has_value()) {
      return ReadTasks(pool_.Query(
          "SELECT task_id, namespace_id, task_queue, kind, data FROM task_queue_tasks "
          "WHERE namespace_id = $1 AND task_queue = $2 AND kind = $3 ORDER BY task_id LIMIT $4",
          {PgParam::Text(namespace_id), PgParam::Text(task_queue),
           PgParam::Int(static_cast<int>(kind)), PgParam::Int(limit)}));
    }
    std::vector<int64_t> shards(only->shards.begin(), only->shards.end());
    const std::string shard_array = IntArray(shards);
    return ReadTasks(pool_.Query(
        "SELECT task_id, namespace_id, task_queue, kind, data FROM task_queue_tasks "
        "WHERE namespace_id = $1 AND task_queue = $2 AND kind = $3 AND "
        "(shard_id = ANY($5::int[]) OR ($6::boolean AND shard_id IS NULL)) ORDER BY task_id "
        "LIMIT $4",
        {PgParam::Text(namespace_id), PgParam::Text(task_queue),
         PgParam::Int(static_cast<int>(kind)), PgParam::Int(limit), PgParam::Text(shard_array),
         PgParam::Text(only->unsharded ? "true" : "false")}));
  }

  absl::StatusOr<std::vector<QueueName>> ListQueuesWithTasks(const ShardSet& only,
                                                            int32_t limit) override {
    static_assert(static_cast<int>(TaskKind::kTransfer) == 3);
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT DISTINCT namespace_id, task_queue, kind FROM task_queue_tasks "
        "WHERE kind <> 3 AND (shard_id = ANY($1::int[]) OR ($2::boolean AND shard_id IS NULL)) "
        "LIMIT $3",
        {PgParam::Text(IntArray({only.shards.begin(), only.shards.end()})),
         PgParam::Text(only.unsharded ? "true" : "false"), PgParam::Int(limit)});
    if (!r.ok()) return r.status();
    std::vector<QueueName> out;
    for (int i = 0; i < r->rows(); ++i) {
      out.push_back({r->Text(i, 0), r->Text(i, 1), static_cast<TaskKind>(r->Int(i, 2))});
    }
    return out;
  }

  // One shard's rows through the index task_queue_tasks_transfer (kind, shard_id, task_id)
  // (migration 17), in order; kUnshardedTransferTasks: the rows from before it (NULL shard).
  absl::StatusOr<std::vector<TaskQueueTask>> LoadTransferTasks(int32_t shard_id,
                                                               int64_t after_task_id,
                                                               int32_t limit) override {
    static_assert(static_cast<int>(TaskKind::kTransfer) == 3);
    if (shard_id == kUnshardedTransferTasks) {
      return ReadTasks(pool_.Query(
          "SELECT task_id, namespace_id, task_queue, kind, data FROM task_queue_tasks "
          "WHERE kind = 3 AND shard_id IS NULL AND task_id > $1 ORDER BY task_id LIMIT $2",
          {PgParam::Int(after_task_id), PgParam::Int(limit)}));
    }
    return ReadTasks(pool_.Query(
        "SELECT task_id, namespace_id, task_queue, kind, data FROM task_queue_tasks "
        "WHERE kind = 3 AND shard_id = $1 AND task_id > $2 ORDER BY task_id LIMIT $3",
        {PgParam::Int(shard_id), PgParam::Int(after_task_id), PgParam::Int(limit)}));
  }

  // Rows of (task_id, namespace_id, task_queue, kind, data), in the query's order.
  static absl::StatusOr<std::vector<TaskQueueTask>> ReadTasks(absl::StatusOr<PgResult> r) {
    if (!r.ok()) return r.status();
    std::vector<TaskQueueTask> out(r->rows());
    for (int i = 0; i < r->rows(); ++i) {
      TaskQueueTask& t = out[i];
      t.task_id = r->Int(i, 0);
      t.namespace_id = r->Text(i, 1);
      t.task_queue = r->Text(i, 2);
      t.kind = static_cast<TaskKind>(r->Int(i, 3));
      const std::string_view bytes = r->View(i, 4);
      if (!t.task.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        return absl::DataLossError("a stored task cannot be parsed");
      }
    }
    return out;
  }

  absl::StatusOr<std::vector<TimerTaskRow>> LoadTimers(int32_t shard_id, const TimerCursor& after,
                                                       absl::Time until, int32_t limit) override {
    // The row comparison walks the primary key (shard_id, fire_ms, task_id) in order.
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT fire_ms, task_id, data FROM timer_tasks WHERE shard_id = $1 AND "
        "(fire_ms, task_id) > ($2, $3) AND fire_ms < $4 ORDER BY fire_ms, task_id LIMIT $5",
        {PgParam::Int(shard_id),
         PgParam::Int(after.fire_time == absl::InfinitePast()
                          ? INT64_MIN
                          : absl::ToUnixMillis(after.fire_time)),
         PgParam::Int(after.task_id),
         PgParam::Int(until == absl::InfiniteFuture() ? INT64_MAX : absl::ToUnixMillis(until)),
         limit < 0 ? PgParam::Null() : PgParam::Int(limit)});
    if (!r.ok()) return r.status();
    std::vector<TimerTaskRow> out(r->rows());
    for (int i = 0; i < r->rows(); ++i) {
      TimerTaskRow& t = out[i];
      t.shard_id = shard_id;
      t.fire_time = absl::FromUnixMillis(r->Int(i, 0));
      t.task_id = r->Int(i, 1);
      const std::string_view bytes = r->View(i, 2);
      if (!t.task.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        return absl::DataLossError("a stored timer cannot be parsed");
      }
    }
    return out;
  }

 private:
  // A commit's messages, serialized in its caller's thread before it queues, so the group's
  // connection is leased for the database work alone.
  struct Serialized : PreparedCommit {
    std::vector<std::string> states;  // per run
    std::vector<PackedBatches> events;  // per run
    Packed tasks, timers;
  };

  std::unique_ptr<PreparedCommit> Prepare(const Commit& commit) override {
    auto out = std::make_unique<Serialized>();
    out->events.resize(commit.runs.size());
    for (size_t i = 0; i < commit.runs.size(); ++i) {
      out->states.push_back(commit.runs[i].state.SerializeAsString());
      for (const EventBatch& batch : BatchEvents(commit.runs[i].events)) {
        out->events[i].AddBytes(batch.bytes);
        out->events[i].first_ids.push_back(batch.first_event_id);
        out->events[i].last_ids.push_back(batch.last_event_id());
      }
    }
    for (const TaskQueueTask& t : commit.new_tasks) out->tasks.Add(t.task);
    for (const TimerTaskRow& t : commit.new_timers) out->timers.Add(t.task);
    return out;
  }

  static const Serialized& SerializedOf(const GroupItem& item) {
    return static_cast<const Serialized&>(*item.prepared);
  }

  // Statements of a group's transaction sent together in one round trip (PgConn::Pipeline),
  // each with the commit it belongs to (-1: several) and the check of its answer. Owns the
  // texts its parameters view.
  class StatementBatch {
   public:
    // Gets the statement's answer and its commit (which it may change: the commit of the
    // run that failed); returns what the answer means.
    using Check = std::function<absl::Status(absl::StatusOr<PgResult>&, int& item)>;
    std::string_view Keep(std::string text) { return texts_.emplace_back(std::move(text)); }
    void Add(std::string sql, std::vector<PgParam> params, int item, Check check) {
      statements_.push_back(PgStatement{std::move(sql), std::move(params)});
      items_.push_back(item);
      checks_.push_back(std::move(check));
    }
    // Runs them; the first failure in statement order (an error, or what a check makes of
    // an answer) is returned, with its commit in `failed`.
    absl::Status Run(PgConn& conn, int& failed) {
      if (statements_.empty()) return absl::OkStatus();
      std::vector<absl::StatusOr<PgResult>> results = conn.Pipeline(statements_);
      for (size_t i = 0; i < results.size(); ++i) {
        int item = items_[i];
        absl::Status s = checks_[i] ? checks_[i](results[i], item) : results[i].status();
        if (!s.ok()) {
          failed = item;
          return s;
        }
      }
      return absl::OkStatus();
    }

   private:
    std::deque<std::string> texts_;
    std::vector<PgStatement> statements_;
    std::vector<int> items_;
    std::vector<Check> checks_;
  };

  // A group's transaction on one leased connection (READ COMMITTED): all at once (one round
  // trip), or the careful way: BEGIN with the fence (one round trip), the group's rows (one
  // round trip: a pipeline, which also carries the savepoint), COMMIT. A transaction not
  // committed is rolled back when this is destroyed (and a connection that cannot roll back
  // is closed by the pool instead of reused).
  class Batch : public CommitBatchTransaction {
   public:
    Batch(PgExecutionStore& store, PgPool::Lease lease)
        : store_(store), lease_(std::move(lease)) {}
    ~Batch() override {
      if (begun_ && !committed_ && lease_->healthy()) lease_->Exec("ROLLBACK").IgnoreError();
    }

    // The fence: the shard's row FOR SHARE, so a steal (AcquireShard's exclusive lock) waits
    // for this transaction and every writer after the steal reads the new range id. FOR KEY
    // SHARE would not do: it does not conflict with an UPDATE that leaves the key alone.
    // All the group's shards in one statement, with BEGIN in the same round trip.
    absl::StatusOr<std::vector<int64_t>> RangeIds(const std::vector<int32_t>& shards) override {
      const std::string shard_array = IntArray({shards.begin(), shards.end()});
      std::vector<PgStatement> statements;
      if (!begun_) statements.push_back(PgStatement{"BEGIN", {}});
      statements.push_back(PgStatement{
          "SELECT shard_id, range_id FROM shards WHERE shard_id = ANY($1::int[]) FOR SHARE",
          {PgParam::Text(shard_array)}});
      std::vector<absl::StatusOr<PgResult>> r = lease_->Pipeline(statements);
      begun_ = true;
      for (const absl::StatusOr<PgResult>& each : r) {
        if (!each.ok()) return each.status();
      }
      const PgResult& rows = *r.back();
      std::vector<int64_t> out(shards.size(), -1);
      for (int i = 0; i < rows.rows(); ++i) {
        auto at = std::find(shards.begin(), shards.end(), static_cast<int32_t>(rows.Int(i, 0)));
        if (at != shards.end()) out[at - shards.begin()] = rows.Int(i, 1);
      }
      return out;
    }

    // BEGIN, the fence, every row and COMMIT in one pipeline: one round trip. The fence and
    // the checks are errors in SQL here (Checks::kRaised), so a group where one does not
    // pass never reaches COMMIT: it is rolled back, and the committer writes it the careful
    // way. When the connection breaks, COMMIT may have run: the outcome is unknown, and
    // writing again could write twice, so every commit gets that answer instead.
    AtOnce WriteAllAtOnce(absl::Span<const GroupItem> items, const std::vector<int32_t>& shards,
                          const std::vector<int64_t>& ranges) override {
      if (begun_ || NeedOneByOne(items)) return {AtOnce::kNotTried, {}};
      // Before anything is sent, so that a failure of the draw is known to have written
      // nothing (WriteItems then finds no id left to draw).
      if (!store_.DrawTimerIds(*lease_, items).ok()) return {AtOnce::kDidNotPass, {}};
      StatementBatch batch;
      batch.Add("BEGIN", {}, -1, nullptr);
      // 1 / 0 unless every shard's row holds the range id expected.
      batch.Add(
          "SELECT 1 / (count(*) = cardinality($1::int[]))::int FROM (SELECT shard_id, range_id "
          "FROM shards WHERE shard_id = ANY($1::int[]) FOR SHARE) s JOIN unnest($1::int[], "
          "$2::bigint[]) AS e(shard, range) ON s.shard_id = e.shard AND s.range_id = e.range",
          {PgParam::Text(batch.Keep(IntArray({shards.begin(), shards.end()}))),
           PgParam::Text(batch.Keep(IntArray(ranges)))},
          -1, nullptr);
      begun_ = true;
      int failed = -1;
      const absl::Status s =
          store_.WriteItems(*lease_, std::move(batch), items, failed, Checks::kRaised);
      if (s.ok()) {
        committed_ = true;
        return {AtOnce::kWritten, s};
      }
      if (!lease_->healthy()) {
        return {AtOnce::kWritten,
                absl::UnavailableError(absl::StrCat(
                    "the connection to PostgreSQL broke while the commit was sent; whether it "
                    "was written is unknown: read it back (",
                    s.message().substr(0, 200), ")"))};
      }
      // Not in a failed transaction: COMMIT itself failed, and PostgreSQL rolled back.
      if (!lease_->in_failed_transaction()) return {AtOnce::kWritten, s};
      begun_ = !lease_->Exec("ROLLBACK").ok();
      return {AtOnce::kDidNotPass, {}};
    }

    // The savepoint travels at the head of the next Write's pipeline.
    absl::Status Savepoint() override {
      if (savepoint_) pending_.push_back("RELEASE SAVEPOINT g");
      pending_.push_back("SAVEPOINT g");
      savepoint_ = true;
      return absl::OkStatus();
    }
    absl::Status Write(absl::Span<const GroupItem> items, int& failed) override {
      StatementBatch batch;
      for (std::string& sql : pending_) batch.Add(std::move(sql), {}, -1, nullptr);
      pending_.clear();
      return store_.WriteItems(*lease_, std::move(batch), items, failed);
    }
    absl::Status RollbackToSavepoint() override { return lease_->Exec("ROLLBACK TO SAVEPOINT g"); }
    absl::Status Commit() override {
      // COMMIT of a transaction in which a statement failed would answer success and roll
      // back: never reached (every failure is rolled back to the savepoint), but checked.
      if (lease_->in_failed_transaction()) {
        return absl::InternalError(
            "postgres: a statement of the transaction failed and the transaction was rolled "
            "back");
      }
      absl::Status s = lease_->Exec("COMMIT");
      committed_ = s.ok();
      return s;
    }

   private:
    PgExecutionStore& store_;
    PgPool::Lease lease_;
    bool begun_ = false;
    bool committed_ = false;
    bool savepoint_ = false;
    std::vector<std::string> pending_;  // savepoint statements for the next Write
  };

  absl::StatusOr<std::unique_ptr<CommitBatchTransaction>> Begin() override {
    absl::StatusOr<PgPool::Lease> lease = pool_.Acquire();
    if (!lease.ok()) return lease.status();
    return std::make_unique<Batch>(*this, std::move(*lease));
  }

  // Every row of `items` after the statements already in `batch` (a savepoint; or BEGIN and
  // the fence), in ONE round trip: each run's row and events in one statement (AddRun), each
  // run that starts or closes one for its current-run pointer and visibility record, the
  // tasks of every commit in one, their timers in one.
  //   kAnswered: the checks are read from the answers. The statements after a failed check
  //     still run (their answers are not looked at) and are rolled back with it. A failure
  //     names its commit when it can: a run's check names the run's commit; a duplicate key
  //     in a statement of several commits cannot be traced to one (-1, and the group
  //     committer writes them one at a time).
  //   kRaised: a failed check is an error in SQL (a division by zero), so that COMMIT can
  //     end the same pipeline: PostgreSQL skips it once a statement fails. For groups that
  //     NeedOneByOne does not hold; which commit failed is not told.
  enum class Checks { kAnswered, kRaised };
  absl::Status WriteItems(PgConn& conn, StatementBatch batch, absl::Span<const GroupItem> items,
                          int& failed, Checks checks = Checks::kAnswered) {
    const bool single = items.size() == 1;
    if (NeedOneByOne(items)) {
      if (absl::Status s = batch.Run(conn, failed); !s.ok()) return s;
      for (size_t i = 0; i < items.size(); ++i) {
        int ignored = -1;
        if (absl::Status s = WriteItems(conn, StatementBatch(), items.subspan(i, 1), ignored);
            !s.ok()) {
          failed = static_cast<int>(i);
          return s;
        }
      }
      return absl::OkStatus();
    }
    // Timer ids left to the store are drawn first (the history engine sets its own, so this
    // round trip is off its path).
    if (absl::Status s = DrawTimerIds(conn, items); !s.ok()) {
      failed = single ? 0 : -1;
      return s;
    }
    // One statement per run: a statement joining arrays of runs to their rows measured
    // several times slower in PostgreSQL than the same runs' statements one by one (0.55 ms
    // against 0.05 ms per run), and the pipeline sends them all in one round trip anyway.
    for (size_t i = 0; i < items.size(); ++i) {
      const Commit& commit = *items[i].commit;
      const Serialized& blobs = SerializedOf(items[i]);
      for (size_t r = 0; r < commit.runs.size(); ++r) {
        AddBranches(batch, static_cast<int>(i), commit.runs[r]);
        AddRun(batch, static_cast<int>(i), commit, commit.runs[r], blobs.states[r],
               blobs.events[r], checks);
      }
    }
    for (size_t i = 0; i < items.size(); ++i) {
      for (const RunWrite& run : items[i].commit->runs) {
        AddPointerAndVisibility(batch, static_cast<int>(i), run, checks);
      }
    }
    AddTasks(batch, single ? 0 : -1, items);
    AddTimers(batch, single ? 0 : -1, items);
    AddReplicationTasks(batch, single ? 0 : -1, items);
    if (checks == Checks::kRaised) batch.Add("COMMIT", {}, -1, nullptr);
    return batch.Run(conn, failed);
  }

  // The run's row and its events in one statement; the events are gated on the run's
  // change. The answer says whether the run's check passed.
  void AddRun(StatementBatch& batch, int item, const Commit& commit, const RunWrite& run,
              const std::string& state, const PackedBatches& events, Checks checks) {
    const auto& exec = run.state.execution();
    // $1 shard, $2 db_version, $3 state, $4 namespace, $5 workflow, $6 run,
    // $7 expected db_version, $8 packed event batches, $9 their first ids, $10 offsets,
    // $11 lengths, $12 last ids. A batch that does not follow the run's stored events (the
    // last batch's, one probe of the key) is not written, and the answer's count says so.
    static constexpr char kEvents[] =
        ", ev AS (INSERT INTO history_batches(run_id, first_event_id, last_event_id, data) "
        "SELECT $6, e.id, e.last, substring($8 FROM e.off::int FOR e.len::int) "
        "FROM unnest($9::bigint[], $12::bigint[], $10::bigint[], $11::bigint[]) "
        "AS e(id, last, off, len) WHERE EXISTS (SELECT 1 FROM run) AND "
        "COALESCE((SELECT h.last_event_id FROM history_batches h WHERE h.run_id = $6 "
        "ORDER BY h.first_event_id DESC LIMIT 1), 0) < e.id RETURNING 1) ";
    // $13 the count of batches, with raised checks.
    const char* answer = checks == Checks::kRaised
                             ? "SELECT 1 / ((SELECT count(*) FROM run) = 1 AND "
                               "(SELECT count(*) FROM ev) = $13)::int"
                             : "SELECT (SELECT count(*) FROM run), (SELECT count(*) FROM ev)";
    std::string sql =
        run.expected_db_version == 0
            ? absl::StrCat("WITH run AS (INSERT INTO executions(namespace_id, workflow_id, "
                           "run_id, shard_id, db_version, state) SELECT $4, $5, $6, $1, $2, $3 "
                           "WHERE $7 = 0 ON CONFLICT DO NOTHING RETURNING 1)",
                           kEvents, answer)
            : absl::StrCat("WITH run AS (UPDATE executions SET db_version = $2, state = $3 "
                           "WHERE namespace_id = $4 AND workflow_id = $5 AND run_id = $6 AND "
                           "db_version = $7 RETURNING 1)",
                           kEvents, answer);
    std::vector<PgParam> params = {
        PgParam::Int(commit.shard_id), PgParam::Int(run.state.db_version()),
        PgParam::Bytes(state), PgParam::Text(exec.namespace_id()),
        PgParam::Text(exec.workflow_id()), PgParam::Text(exec.run_id()),
        PgParam::Int(run.expected_db_version), PgParam::Bytes(events.bytes),
        PgParam::Text(batch.Keep(IntArray(events.first_ids))),
        PgParam::Text(batch.Keep(IntArray(events.offsets))),
        PgParam::Text(batch.Keep(IntArray(events.lengths))),
        PgParam::Text(batch.Keep(IntArray(events.last_ids)))};
    if (checks == Checks::kRaised) {
      params.push_back(PgParam::Int(static_cast<int64_t>(events.first_ids.size())));
      batch.Add(std::move(sql), std::move(params), item, nullptr);
      return;
    }
    batch.Add(std::move(sql), std::move(params), item,
              [&run, batches = static_cast<int64_t>(events.first_ids.size())](
                  absl::StatusOr<PgResult>& r, int&) -> absl::Status {
                const std::string& run_id = run.state.execution().run_id();
                if (r.ok() && r->Int(0, 0) != 1) return RunCheckFailed(run);
                if (r.ok() && r->Int(0, 1) == batches) return absl::OkStatus();
                if (!r.ok() && r.status().code() != absl::StatusCode::kAlreadyExists) {
                  return r.status();
                }
                return absl::AbortedError(absl::StrCat(
                    "an event of run ", run_id, " exists already; nothing was written"));
              });
  }

  // The branch operations of a run (execution_store.h), in their order, before its row and
  // events (AddRun), whose events may take the ids a switch frees. Rare: conflict resolution.
  void AddBranches(StatementBatch& batch, int item, const RunWrite& run) {
    const std::string_view run_id = batch.Keep(run.state.execution().run_id());
    auto check = [run_id = std::string(run_id)](absl::StatusOr<PgResult>& r, int&) -> absl::Status {
      if (r.ok()) return absl::OkStatus();
      if (r.status().code() != absl::StatusCode::kAlreadyExists) return r.status();
      return absl::AbortedError(
          absl::StrCat("an event of a branch of run ", run_id, " exists already"));
    };
    for (const BranchFork& fork : run.branch_forks) {
      if (!fork.from_token.empty()) {
        batch.Add(
            "INSERT INTO history_branch_events(run_id, branch_token, event_id, data) "
            "SELECT run_id, $2, event_id, data FROM history_branch_events WHERE run_id = $1 "
            "AND branch_token = $4 AND event_id <= $3",
            {PgParam::Text(run_id), PgParam::Bytes(batch.Keep(fork.token)),
             PgParam::Int(fork.through_event_id), PgParam::Bytes(batch.Keep(fork.from_token))},
            item, check);
        continue;
      }
      batch.Add(
          "INSERT INTO history_branch_events(run_id, branch_token, event_id, data) "
          "SELECT $1, $2, e.event_id, e.data FROM history_batches b, "
          "tock_history_events(b.data, b.first_event_id) e WHERE b.run_id = $1 AND "
          "b.first_event_id <= $3 AND e.event_id <= $3",
          {PgParam::Text(run_id), PgParam::Bytes(batch.Keep(fork.token)),
           PgParam::Int(fork.through_event_id)},
          item, check);
    }
    if (run.branch_switch.has_value()) {
      const BranchSwitch& sw = *run.branch_switch;
      // The loser's events are kept as a branch; the batches after keep_through go, and
      // the one holding it keeps its events up to it (no change when it ends there).
      batch.Add(
          "WITH kept AS (INSERT INTO history_branch_events(run_id, branch_token, event_id, "
          "data) SELECT $1, $2, e.event_id, e.data FROM history_batches b, "
          "tock_history_events(b.data, b.first_event_id) e WHERE b.run_id = $1), "
          "cut AS (DELETE FROM history_batches WHERE run_id = $1 AND first_event_id > $3) "
          "UPDATE history_batches b SET last_event_id = LEAST(b.last_event_id, $3), "
          "data = (SELECT string_agg(tock_history_entry(e.data), ''::bytea ORDER BY "
          "e.event_id) FROM tock_history_events(b.data, b.first_event_id) e "
          "WHERE e.event_id <= $3) WHERE b.run_id = $1 AND b.first_event_id = (SELECT "
          "max(first_event_id) FROM history_batches WHERE run_id = $1 AND first_event_id <= $3)",
          {PgParam::Text(run_id), PgParam::Bytes(batch.Keep(sw.retire_as)),
           PgParam::Int(sw.keep_through_event_id)},
          item, check);
      if (!sw.promote.empty()) {
        batch.Add(
            "WITH moved AS (DELETE FROM history_branch_events WHERE run_id = $1 AND "
            "branch_token = $2 RETURNING event_id, data) INSERT INTO history_batches(run_id, "
            "first_event_id, last_event_id, data) SELECT $1, event_id, event_id, "
            "tock_history_entry(data) FROM moved WHERE event_id > $3",
            {PgParam::Text(run_id), PgParam::Bytes(batch.Keep(sw.promote)),
             PgParam::Int(sw.keep_through_event_id)},
            item, check);
      }
    }
    for (const BranchAppend& append : run.branch_appends) {
      for (const HistoryEvent& event : append.events) {
        batch.Add(
            "INSERT INTO history_branch_events(run_id, branch_token, event_id, data) "
            "VALUES ($1, $2, $3, $4)",
            {PgParam::Text(run_id), PgParam::Bytes(batch.Keep(append.token)),
             PgParam::Int(event.event_id()), PgParam::Bytes(batch.Keep(event.SerializeAsString()))},
            item, check);
      }
    }
  }

  static absl::Status RunCheckFailed(const RunWrite& run) {
    const std::string& run_id = run.state.execution().run_id();
    return absl::AbortedError(
        run.expected_db_version == 0
            ? absl::StrCat("run ", run_id, " exists already")
            : absl::StrCat("run ", run_id, " was changed concurrently; nothing was written"));
  }

  static bool RetiresANewTimer(absl::Span<const GroupItem> items) {
    std::set<std::tuple<int32_t, int64_t, int64_t>> created;
    for (const GroupItem& item : items) {
      for (const TimerTaskRow& t : item.commit->new_timers) {
        created.emplace(t.shard_id, absl::ToUnixMillis(t.fire_time), t.task_id);
      }
    }
    for (const GroupItem& item : items) {
      for (const TimerTaskRow& t : item.commit->done_timers) {
        if (created.count({t.shard_id, absl::ToUnixMillis(t.fire_time), t.task_id}) != 0) {
          return true;
        }
      }
    }
    return false;
  }

  // Two commits of one run in a group (a stale writer's), or one retiring a timer another
  // creates: written one after the other, so the second sees the first's rows (one
  // statement's DELETE does not see its own INSERT).
  static bool NeedOneByOne(absl::Span<const GroupItem> items) {
    return items.size() > 1 && (!DistinctRuns(items) || RetiresANewTimer(items));
  }

  static bool DistinctRuns(absl::Span<const GroupItem> items) {
    std::set<std::tuple<std::string_view, std::string_view, std::string_view>> seen;
    for (const GroupItem& item : items) {
      for (const RunWrite& run : item.commit->runs) {
        const auto& exec = run.state.execution();
        if (!seen.emplace(exec.namespace_id(), exec.workflow_id(), exec.run_id()).second) {
          return false;
        }
      }
    }
    return true;
  }

  // Draws the ids of the timers left at 0 from the task id sequence (one statement for all).
  absl::Status DrawTimerIds(PgConn& conn, absl::Span<const GroupItem> items) {
    std::vector<TimerTaskRow*> unset;
    for (const GroupItem& item : items) {
      for (TimerTaskRow& t : item.commit->new_timers) {
        if (t.task_id == 0) unset.push_back(&t);
      }
    }
    if (unset.empty()) return absl::OkStatus();
    absl::StatusOr<PgResult> ids =
        conn.Query(absl::StrCat("SELECT nextval('", kTaskIdSequence,
                                "') FROM generate_series(1, $1) AS n ORDER BY n"),
                   {PgParam::Int(static_cast<int64_t>(unset.size()))});
    if (!ids.ok()) return ids.status();
    if (ids->rows() != static_cast<int>(unset.size())) {
      return absl::InternalError("the task id sequence gave no ids");
    }
    std::vector<int64_t> sorted;
    for (int i = 0; i < ids->rows(); ++i) sorted.push_back(ids->Int(i, 0));
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < unset.size(); ++i) unset[i]->task_id = sorted[i];
    return absl::OkStatus();
  }

  // The run's current-run pointer change and its visibility record (with its archival
  // queue row) in one statement: a run that starts or closes costs one round trip more,
  // not two. Only distinct tables change, so the CTEs cannot touch one row twice.
  //   kCreate: a concurrent insert of the same workflow id makes this one wait for its
  //     outcome; if it committed, nothing is inserted (ALREADY_EXISTS);
  //   kReplace: the pointer must still name the expected run (else ABORTED);
  //   kNone: a run's status changes only when it closes, and closing always rewrites its
  //     visibility record, so the pointer's status follows with the record, and a change
  //     without one costs no statement at all.
  // The archival queue row is inserted only when the run closes in a namespace that
  // archives, and kept as it is when the run was queued before (the archiver's progress
  // is never reset).
  void AddPointerAndVisibility(StatementBatch& batch, int item, const RunWrite& run,
                               Checks checks) {
    const bool has_visibility = run.visibility.has_value();
    if (run.current_run_change == CurrentRunChange::kNone && !has_visibility) return;
    const auto& exec = run.state.execution();
    // $1 namespace, $2 workflow, $3 run, $4 status, $5 start request id, $6 expected run.
    std::string sql = "WITH p AS (";
    switch (run.current_run_change) {
      case CurrentRunChange::kCreate:
        sql +=
            "INSERT INTO current_executions(namespace_id, workflow_id, run_id, status, "
            "start_request_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING 1)";
        break;
      case CurrentRunChange::kReplace:
        sql +=
            "UPDATE current_executions SET run_id = $3, status = $4, start_request_id = $5 "
            "WHERE namespace_id = $1 AND workflow_id = $2 AND run_id = $6 RETURNING 1)";
        break;
      case CurrentRunChange::kNone:
        sql +=
            "UPDATE current_executions SET status = $4 WHERE namespace_id = $1 AND "
            "workflow_id = $2 AND run_id = $3 RETURNING 1)";
        break;
    }
    std::vector<PgParam> params = {
        PgParam::Text(exec.namespace_id()),     PgParam::Text(exec.workflow_id()),
        PgParam::Text(exec.run_id()),           PgParam::Int(exec.status()),
        PgParam::Text(exec.start_request_id()), PgParam::Text(run.expected_current_run_id)};
    if (has_visibility) {
      // $7 namespace, $8 run, $9 workflow, $10 type, $11 queue, $12 status, $13 start,
      // $14 execution, $15 close (NULL while open), $16 history length, $17 info,
      // $18 queue for archival, $19 the custom columns' CustomValuesJson (NULL for none).
      sql += VisibilityUpsertSql();
      const VisibilityRecord& v = *run.visibility;
      params.insert(
          params.end(),
          {PgParam::Text(v.namespace_id), PgParam::Text(v.run_id), PgParam::Text(v.workflow_id),
           PgParam::Text(v.workflow_type), PgParam::Text(v.task_queue), PgParam::Int(v.status),
           PgParam::Int(absl::ToUnixMillis(v.start_time)),
           PgParam::Int(absl::ToUnixMillis(v.execution_time)),
           v.close_time.has_value() ? PgParam::Int(absl::ToUnixMillis(*v.close_time))
                                    : PgParam::Null(),
           PgParam::Int(v.history_length), PgParam::Bytes(v.info),
           PgParam::Bool(run.archive_on_close && v.close_time.has_value()),
           v.custom_json.empty() ? PgParam::Null() : PgParam::Text(v.custom_json)});
    }
    if (checks == Checks::kRaised && run.current_run_change != CurrentRunChange::kNone) {
      sql += " SELECT 1 / (count(*) = 1)::int FROM p";
      batch.Add(std::move(sql), std::move(params), item, nullptr);
      return;
    }
    sql += " SELECT count(*) FROM p";
    batch.Add(std::move(sql), std::move(params), item,
              [&run](absl::StatusOr<PgResult>& r, int&) -> absl::Status {
                if (!r.ok()) return r.status();
                const bool moved = r->rows() == 1 && r->Int(0, 0) == 1;
                const std::string& workflow_id = run.state.execution().workflow_id();
                if (run.current_run_change == CurrentRunChange::kCreate && !moved) {
                  return absl::AlreadyExistsError(
                      absl::StrCat("workflow id ", workflow_id, " already has a current run"));
                }
                if (run.current_run_change == CurrentRunChange::kReplace && !moved) {
                  return absl::AbortedError(
                      absl::StrCat("the current run of ", workflow_id, " changed concurrently"));
                }
                return absl::OkStatus();
              });
  }

  // The new tasks and the consumed ones of every commit in one statement (the DELETE runs
  // as a CTE). Fills in the ids: the rows are inserted in the commits' order (ORDER BY the
  // ordinal), so the sequence gives them increasing ids in that order; the returned ids are
  // sorted before they are handed back, which does not depend on RETURNING's order.
  void AddTasks(StatementBatch& batch, int item, absl::Span<const GroupItem> items) {
    std::vector<std::string_view> namespaces, queues;
    std::vector<int64_t> kinds, shards, offsets, lengths, done;
    std::string bytes;
    for (const GroupItem& each : items) {
      const Packed& packed = SerializedOf(each).tasks;
      const int64_t base = static_cast<int64_t>(bytes.size());
      bytes += packed.bytes;
      for (size_t i = 0; i < each.commit->new_tasks.size(); ++i) {
        const TaskQueueTask& t = each.commit->new_tasks[i];
        namespaces.push_back(t.namespace_id);
        queues.push_back(t.task_queue);
        kinds.push_back(static_cast<int64_t>(t.kind));
        shards.push_back(each.commit->shard_id);  // a commit's tasks are of its run's shard
        offsets.push_back(base + packed.offsets[i]);
        lengths.push_back(packed.lengths[i]);
      }
      done.insert(done.end(), each.commit->done_task_ids.begin(),
                  each.commit->done_task_ids.end());
    }
    if (kinds.empty() && done.empty()) return;
    if (kinds.empty()) {
      batch.Add("DELETE FROM task_queue_tasks WHERE task_id = ANY($1::bigint[])",
                {PgParam::Text(batch.Keep(IntArray(done)))}, item, nullptr);
      return;
    }
    const size_t count = kinds.size();
    batch.Add(
        "WITH done AS (DELETE FROM task_queue_tasks WHERE task_id = ANY($7::bigint[])) "
        "INSERT INTO task_queue_tasks(namespace_id, task_queue, kind, data, shard_id) "
        "SELECT t.ns, t.queue, t.kind, substring($1 FROM t.off::int FOR t.len::int), t.shard "
        "FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], "
        "$8::bigint[]) WITH ORDINALITY AS t(ns, queue, kind, off, len, shard, n) ORDER BY t.n "
        "RETURNING task_id",
        {PgParam::Bytes(batch.Keep(std::move(bytes))),
         PgParam::Text(batch.Keep(TextArray(namespaces))),
         PgParam::Text(batch.Keep(TextArray(queues))), PgParam::Text(batch.Keep(IntArray(kinds))),
         PgParam::Text(batch.Keep(IntArray(offsets))),
         PgParam::Text(batch.Keep(IntArray(lengths))), PgParam::Text(batch.Keep(IntArray(done))),
         PgParam::Text(batch.Keep(IntArray(shards)))},
        item, [items, count](absl::StatusOr<PgResult>& ins, int&) -> absl::Status {
          if (!ins.ok()) return ins.status();
          if (ins->rows() != static_cast<int>(count)) {
            return absl::InternalError("inserting tasks returned the wrong number of ids");
          }
          std::vector<int64_t> ids;
          for (int i = 0; i < ins->rows(); ++i) ids.push_back(ins->Int(i, 0));
          std::sort(ids.begin(), ids.end());
          size_t next = 0;
          for (const GroupItem& each : items) {
            for (TaskQueueTask& t : each.commit->new_tasks) t.task_id = ids[next++];
          }
          return absl::OkStatus();
        });
  }

  // The new timers and the retired ones of every commit in one statement (the DELETE runs
  // as a CTE); their ids are set (DrawTimerIds).
  void AddTimers(StatementBatch& batch, int item, absl::Span<const GroupItem> items) {
    std::vector<int64_t> shards, fire_ms, task_ids, offsets, lengths, done_shards, done_fire_ms,
        done_ids;
    std::string bytes;
    for (const GroupItem& each : items) {
      const Packed& packed = SerializedOf(each).timers;
      const int64_t base = static_cast<int64_t>(bytes.size());
      bytes += packed.bytes;
      for (size_t i = 0; i < each.commit->new_timers.size(); ++i) {
        const TimerTaskRow& t = each.commit->new_timers[i];
        shards.push_back(t.shard_id);
        fire_ms.push_back(absl::ToUnixMillis(t.fire_time));
        task_ids.push_back(t.task_id);
        offsets.push_back(base + packed.offsets[i]);
        lengths.push_back(packed.lengths[i]);
      }
      for (const TimerTaskRow& t : each.commit->done_timers) {
        done_shards.push_back(t.shard_id);
        done_fire_ms.push_back(absl::ToUnixMillis(t.fire_time));
        done_ids.push_back(t.task_id);
      }
    }
    if (shards.empty() && done_shards.empty()) return;
    batch.Add(
        "WITH done AS (DELETE FROM timer_tasks t USING unnest($7::bigint[], $8::bigint[], "
        "$9::bigint[]) AS d(shard, fire, id) WHERE t.shard_id = d.shard AND "
        "t.fire_ms = d.fire AND t.task_id = d.id) "
        "INSERT INTO timer_tasks(shard_id, fire_ms, task_id, data) "
        "SELECT t.shard, t.fire, t.id, substring($1 FROM t.off::int FOR t.len::int) "
        "FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], "
        "$6::bigint[]) AS t(shard, fire, id, off, len)",
        {PgParam::Bytes(batch.Keep(std::move(bytes))), PgParam::Text(batch.Keep(IntArray(shards))),
         PgParam::Text(batch.Keep(IntArray(fire_ms))),
         PgParam::Text(batch.Keep(IntArray(task_ids))),
         PgParam::Text(batch.Keep(IntArray(offsets))),
         PgParam::Text(batch.Keep(IntArray(lengths))),
         PgParam::Text(batch.Keep(IntArray(done_shards))),
         PgParam::Text(batch.Keep(IntArray(done_fire_ms))),
         PgParam::Text(batch.Keep(IntArray(done_ids)))},
        item, [](absl::StatusOr<PgResult>& r, int&) -> absl::Status {
          // ALREADY_EXISTS means "the workflow id has a current run" to callers of Write; a
          // timer key given twice is the caller's bug, and says so.
          if (r.status().code() == absl::StatusCode::kAlreadyExists) {
            return absl::InternalError(
                "a new timer has the fire time and task id of a stored one; nothing was "
                "written");
          }
          return r.status();
        });
  }

  // The replication tasks of every commit, last in the transaction, one statement per shard
  // (in shard order): their ids are drawn from the shard's row of replication_task_ids,
  // whose lock is then held to the commit, so a shard's tasks become visible in id order (a
  // remote reading after the last id it saw misses none). Taken last, the lock is held for
  // the commit's round trip only, and never before a lock of a run.
  void AddReplicationTasks(StatementBatch& batch, int item, absl::Span<const GroupItem> items) {
    std::map<int32_t, std::vector<ReplicationTaskRow*>> by_shard;
    for (const GroupItem& each : items) {
      for (ReplicationTaskRow& t : each.commit->new_replication_tasks) {
        by_shard[each.commit->shard_id].push_back(&t);
      }
    }
    for (auto& [shard_id, rows] : by_shard) {
      Packed packed;
      for (const ReplicationTaskRow* t : rows) packed.Add(t->task);
      const int64_t count = static_cast<int64_t>(rows.size());
      batch.Add(
          "WITH seq AS (INSERT INTO replication_task_ids(shard_id, last_id) VALUES ($1, $2) "
          "ON CONFLICT (shard_id) DO UPDATE SET last_id = replication_task_ids.last_id + $2 "
          "RETURNING last_id) "
          "INSERT INTO replication_tasks(shard_id, task_id, data) "
          "SELECT $1, (SELECT last_id FROM seq) - $2 + t.n, "
          "substring($3 FROM t.off::int FOR t.len::int) "
          "FROM unnest($4::bigint[], $5::bigint[]) WITH ORDINALITY AS t(off, len, n) "
          "RETURNING task_id",
          {PgParam::Int(shard_id), PgParam::Int(count),
           PgParam::Bytes(batch.Keep(std::move(packed.bytes))),
           PgParam::Text(batch.Keep(IntArray(packed.offsets))),
           PgParam::Text(batch.Keep(IntArray(packed.lengths)))},
          item, [rows](absl::StatusOr<PgResult>& ins, int&) -> absl::Status {
            if (!ins.ok()) return ins.status();
            if (ins->rows() != static_cast<int>(rows.size())) {
              return absl::InternalError(
                  "inserting replication tasks returned the wrong number of ids");
            }
            std::vector<int64_t> ids;
            for (int i = 0; i < ins->rows(); ++i) ids.push_back(ins->Int(i, 0));
            std::sort(ids.begin(), ids.end());
            for (size_t i = 0; i < rows.size(); ++i) rows[i]->task_id = ids[i];
            return absl::OkStatus();
          });
    }
  }

  PgPool& pool_;
  GroupCommitter group_;  // last: it calls back into this store
};

}  // namespace

std::unique_ptr<ExecutionStore> NewPostgresExecutionStore(PgPool& pool) {
  return std::make_unique<PgExecutionStore>(pool);
}

}  // namespace tock::persistence
