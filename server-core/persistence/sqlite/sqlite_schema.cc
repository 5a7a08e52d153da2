#include "server-core/persistence/sqlite/sqlite_schema.h"

#include "absl/strings/str_cat.h"
#include "server-core/persistence/history_batches.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::persistence {

namespace {

// Migration 18's step: each stored event becomes a batch of one (SQL cannot write the
// length prefix), then the table of events goes.
absl::Status CopyEventsIntoBatches(SqliteDb& db) {
  auto read = db.Prepare("SELECT run_id, event_id, data FROM history_events");
  if (!read.ok()) return read.status();
  auto write = db.Prepare(
      "INSERT INTO history_batches(run_id, first_event_id, last_event_id, data) "
      "VALUES (?1, ?2, ?2, ?3)");
  if (!write.ok()) return write.status();
  std::string batch;
  absl::Status copied = (*read)->ForEachRow([&] {
    batch.clear();
    AppendToBatch(batch, (*read)->BlobView(2));
    return (*write)->Reset().Bind(1, (*read)->Text(0)).Bind(2, (*read)->Int(1)).BindBlobView(3, batch).Run();
  });
  if (!copied.ok()) return copied;
  return db.Exec("DROP TABLE history_events");
}

}  // namespace

const std::vector<Migration>& SqliteMigrations() {
  static const std::vector<Migration> migrations = {
      {1, "namespaces as a valid-time table; cluster metadata", R"sql(
CREATE TABLE namespace_versions (
  namespace_id  TEXT    NOT NULL,
  name          TEXT    NOT NULL,
  version       INTEGER NOT NULL,
  valid_from_ms INTEGER NOT NULL,
  valid_to_ms   INTEGER,            -- NULL: the current version
  operation     TEXT    NOT NULL,
  record        BLOB    NOT NULL,   -- tock.persistence.v1.NamespaceRecord
  deleted       INTEGER NOT NULL,   -- record.info.state == DELETED, for list filtering
  PRIMARY KEY (namespace_id, version)
);
CREATE UNIQUE INDEX namespace_current_name ON namespace_versions(name) WHERE valid_to_ms IS NULL;
CREATE INDEX namespace_name_time ON namespace_versions(name, valid_from_ms);
CREATE TABLE cluster_metadata (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
)sql"},
      {2, "workflow runs: shards, mutable state, history, tasks, timers, visibility", R"sql(
CREATE TABLE shards (
  shard_id    INTEGER PRIMARY KEY,
  range_id    INTEGER NOT NULL,
  owner       TEXT    NOT NULL,
  claimed_ms  INTEGER NOT NULL
);
CREATE TABLE executions (
  namespace_id TEXT    NOT NULL,
  workflow_id  TEXT    NOT NULL,
  run_id       TEXT    NOT NULL,
  shard_id     INTEGER NOT NULL,
  db_version   INTEGER NOT NULL,
  state        BLOB    NOT NULL,   -- tock.persistence.v1.MutableState
  PRIMARY KEY (namespace_id, workflow_id, run_id)
) WITHOUT ROWID;
CREATE TABLE current_executions (
  namespace_id     TEXT    NOT NULL,
  workflow_id      TEXT    NOT NULL,
  run_id           TEXT    NOT NULL,
  status           INTEGER NOT NULL,
  start_request_id TEXT    NOT NULL,
  PRIMARY KEY (namespace_id, workflow_id)
) WITHOUT ROWID;
CREATE TABLE history_events (
  run_id   TEXT    NOT NULL,
  event_id INTEGER NOT NULL,
  data     BLOB    NOT NULL,       -- temporal.api.history.v1.HistoryEvent
  PRIMARY KEY (run_id, event_id)
) WITHOUT ROWID;
CREATE TABLE task_queue_tasks (
  task_id      INTEGER PRIMARY KEY AUTOINCREMENT,
  namespace_id TEXT    NOT NULL,
  task_queue   TEXT    NOT NULL,
  kind         INTEGER NOT NULL,
  data         BLOB    NOT NULL    -- tock.persistence.v1.TransferTask
);
CREATE TABLE timer_tasks (
  shard_id INTEGER NOT NULL,
  fire_ms  INTEGER NOT NULL,
  task_id  INTEGER NOT NULL,
  data     BLOB    NOT NULL,       -- tock.persistence.v1.TimerTask
  PRIMARY KEY (shard_id, fire_ms, task_id)
) WITHOUT ROWID;
CREATE TABLE visibility (
  namespace_id   TEXT    NOT NULL,
  run_id         TEXT    NOT NULL,
  workflow_id    TEXT    NOT NULL,
  workflow_type  TEXT    NOT NULL,
  task_queue     TEXT    NOT NULL,
  status         INTEGER NOT NULL,
  start_ms       INTEGER NOT NULL,
  execution_ms   INTEGER NOT NULL,
  close_ms       INTEGER,
  history_length INTEGER NOT NULL,
  info           BLOB    NOT NULL, -- temporal.api.workflow.v1.WorkflowExecutionInfo
  PRIMARY KEY (namespace_id, run_id)
) WITHOUT ROWID;
CREATE INDEX visibility_start ON visibility(namespace_id, start_ms DESC);
CREATE INDEX visibility_workflow ON visibility(namespace_id, workflow_id);
)sql"},
      {3, "archival queue: closed runs of archiving namespaces and the archiver's progress", R"sql(
CREATE TABLE archival_queue (
  namespace_id     TEXT    NOT NULL,
  run_id           TEXT    NOT NULL,
  workflow_id      TEXT    NOT NULL,
  close_ms         INTEGER NOT NULL,
  visibility_step  INTEGER NOT NULL DEFAULT 0,  -- 0 pending, 1 archived, 2 skipped
  history_step     INTEGER NOT NULL DEFAULT 0,
  run_deleted      INTEGER NOT NULL DEFAULT 0,
  attempts         INTEGER NOT NULL DEFAULT 0,
  last_error       TEXT    NOT NULL DEFAULT '',
  next_attempt_ms  INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (namespace_id, run_id)
) WITHOUT ROWID;
CREATE INDEX archival_queue_visibility ON archival_queue(close_ms) WHERE visibility_step = 0;
CREATE INDEX archival_queue_live ON archival_queue(namespace_id, close_ms) WHERE run_deleted = 0;
)sql"},
      {4, "cluster membership: one heartbeat row per tock-server process", R"sql(
CREATE TABLE cluster_membership (
  host_id            TEXT    PRIMARY KEY,
  address            TEXT    NOT NULL,
  session_start_ms   INTEGER NOT NULL,
  last_heartbeat_ms  INTEGER NOT NULL   -- the database's clock
);
)sql"},
      {5, "task queues paged per queue: the tasks of one queue, and the transfer tasks, by id", R"sql(
CREATE INDEX task_queue_tasks_queue ON task_queue_tasks(namespace_id, task_queue, kind, task_id);
CREATE INDEX task_queue_tasks_transfer ON task_queue_tasks(task_id) WHERE kind = 3;
)sql"},
      {6, "custom search attributes: pre-allocated typed visibility columns, indexed where set",
       CustomSearchAttributeColumnsSql(false)},
      {7, "batch operations: one record per job, rewritten as it progresses", R"sql(
CREATE TABLE batch_operations (
  namespace_id TEXT NOT NULL,
  job_id       TEXT NOT NULL,
  running      INTEGER  NOT NULL,   -- 1 while the batch runs
  start_ms     INTEGER  NOT NULL,
  record       BLOB NOT NULL,   -- tock.persistence.v1.BatchOperationRecord
  PRIMARY KEY (namespace_id, job_id)
);
CREATE INDEX batch_operations_start ON batch_operations(namespace_id, start_ms);
CREATE INDEX batch_operations_running ON batch_operations(running) WHERE running = 1;
)sql"},
      {8, "schedules: one record per schedule, changed by compare-and-swap on its revision", R"sql(
CREATE TABLE schedules (
  namespace_id TEXT NOT NULL,
  schedule_id  TEXT NOT NULL,
  revision     INTEGER NOT NULL,   -- 1 when created, +1 by each update
  record       BLOB NOT NULL,   -- tock.persistence.v1.ScheduleRecord
  PRIMARY KEY (namespace_id, schedule_id)
);
)sql"},
      {9, "replication: remote clusters, the namespace replication queue and its ack levels",
       R"sql(
CREATE TABLE remote_clusters (
  name    TEXT PRIMARY KEY,
  version INTEGER NOT NULL,   -- 1 when saved first, +1 by each save
  record  BLOB NOT NULL       -- tock.persistence.v1.RemoteCluster
);
CREATE TABLE namespace_replication_tasks (
  task_id      INTEGER PRIMARY KEY AUTOINCREMENT,
  namespace_id TEXT NOT NULL,
  version      INTEGER NOT NULL   -- of namespace_versions: what is sent
);
CREATE TABLE namespace_replication_acks (
  cluster_name TEXT PRIMARY KEY,
  ack_task_id  INTEGER NOT NULL   -- the highest task id the cluster applied
);
)sql"},
      {10, "history replication: each shard's replication queue and the remotes' ack levels",
       R"sql(
CREATE TABLE replication_tasks (
  task_id  INTEGER PRIMARY KEY AUTOINCREMENT,   -- one writer at a time: commit order
  shard_id INTEGER NOT NULL,
  data     BLOB NOT NULL                        -- tock.persistence.v1.ReplicationTask
);
CREATE INDEX replication_tasks_shard ON replication_tasks(shard_id, task_id);
CREATE TABLE replication_acks (
  cluster_name TEXT NOT NULL,
  shard_id     INTEGER NOT NULL,
  ack_task_id  INTEGER NOT NULL,   -- the highest task id of the shard the cluster applied
  PRIMARY KEY (cluster_name, shard_id)
);
)sql"},
      {11, "history branches: the events of a run's non-current branches (conflict resolution)",
       R"sql(
CREATE TABLE history_branch_events (
  run_id       TEXT    NOT NULL,
  branch_token BLOB    NOT NULL,   -- the branch's VersionHistory.branch_token
  event_id     INTEGER NOT NULL,
  data         BLOB    NOT NULL,   -- temporal.api.history.v1.HistoryEvent
  PRIMARY KEY (run_id, branch_token, event_id)
) WITHOUT ROWID;
)sql"},
      {12, "replication DLQ: remote tasks that kept failing here, by source cluster and shard",
       R"sql(
CREATE TABLE replication_dlq (
  source_cluster TEXT    NOT NULL,
  source_shard   INTEGER NOT NULL,
  task_id        INTEGER NOT NULL,   -- in the source shard's replication queue
  namespace_id   TEXT    NOT NULL,
  workflow_id    TEXT    NOT NULL,
  run_id         TEXT    NOT NULL,
  first_event_id INTEGER NOT NULL,
  next_event_id  INTEGER NOT NULL,
  version        INTEGER NOT NULL,
  last_error     TEXT    NOT NULL,
  added_ms       INTEGER NOT NULL,
  PRIMARY KEY (source_cluster, source_shard, task_id)
) WITHOUT ROWID;
CREATE INDEX replication_dlq_workflows
  ON replication_dlq(source_cluster, source_shard, namespace_id, workflow_id);
)sql"},
      {13, "timer service: durable timers with HTTP callbacks, in the history shards",
       R"sql(
CREATE TABLE timers (
  namespace_id TEXT    NOT NULL,
  timer_id     TEXT    NOT NULL,
  shard_id     INTEGER NOT NULL,
  revision     INTEGER NOT NULL,   -- 1 when written first, +1 by every write
  state        INTEGER NOT NULL,   -- tock.timer.v1.TimerState, for list filtering
  due_ms       INTEGER,            -- when the owner must act; NULL: nothing to do
  record       BLOB    NOT NULL,   -- tock.timer.v1.Timer
  PRIMARY KEY (namespace_id, timer_id)
) WITHOUT ROWID;
CREATE INDEX timers_due ON timers(shard_id, due_ms, namespace_id, timer_id)
  WHERE due_ms IS NOT NULL;
CREATE INDEX timers_state ON timers(namespace_id, state, timer_id);
)sql"},
      {14, "replication DLQ: what a task was (history or an activity's state); the namespace DLQ",
       R"sql(
ALTER TABLE replication_dlq ADD COLUMN kind INTEGER NOT NULL DEFAULT 0;  -- ReplicationTask.Kind
ALTER TABLE replication_dlq ADD COLUMN scheduled_event_id INTEGER NOT NULL DEFAULT 0;
CREATE TABLE namespace_replication_dlq (
  source_cluster TEXT    NOT NULL,
  task_id        INTEGER NOT NULL,   -- in the source's namespace replication queue
  operation      TEXT    NOT NULL,
  record         BLOB    NOT NULL,   -- tock.persistence.v1.NamespaceRecord, as sent
  last_error     TEXT    NOT NULL,
  added_ms       INTEGER NOT NULL,
  PRIMARY KEY (source_cluster, task_id)
) WITHOUT ROWID;
)sql"},
      {15, "timers: a FIRING timer is listed with the PENDING ones (its attempt's record leaves the state index alone)",
       R"sql(
-- The state the timers_state index lists a timer under (persistence::ListedState): its
-- state, but FIRING (2) as PENDING (1); lists by state filter on it, then on state.
ALTER TABLE timers ADD COLUMN listed_state INTEGER NOT NULL DEFAULT 0;
UPDATE timers SET listed_state = CASE state WHEN 2 THEN 1 ELSE state END;
DROP INDEX timers_state;
CREATE INDEX timers_state ON timers(namespace_id, listed_state, timer_id);
)sql"},
      {16, "task-queue tasks carry their history shard: a host taking a shard reads its own transfer tasks",
       R"sql(
-- The shard of the Commit that wrote the row. Rows written before are left NULL: their shard
-- is a hash of namespace and workflow id modulo the configured shard count, which SQL cannot
-- compute; the engine reads them apart (LoadTransferTasks(kUnshardedTransferTasks, ...)).
ALTER TABLE task_queue_tasks ADD COLUMN shard_id INTEGER;
DROP INDEX task_queue_tasks_transfer;
CREATE INDEX task_queue_tasks_transfer ON task_queue_tasks(kind, shard_id, task_id);
)sql"},
      {17, "the transfer tasks' index holds transfer tasks only: a workflow or activity task's row no longer writes a page of it",
       R"sql(
DROP INDEX task_queue_tasks_transfer;
CREATE INDEX task_queue_tasks_transfer ON task_queue_tasks(shard_id, task_id) WHERE kind = 3;
)sql"},
      {18, "history in batches: one row per stretch of consecutive events a commit wrote (history_batches.h)",
       R"sql(
CREATE TABLE history_batches (
  run_id         TEXT    NOT NULL,
  first_event_id INTEGER NOT NULL,
  last_event_id  INTEGER NOT NULL,
  data           BLOB    NOT NULL,  -- temporal.api.history.v1.History: events first..last
  PRIMARY KEY (run_id, first_event_id)
) WITHOUT ROWID;
)sql",
       &CopyEventsIntoBatches},
      {19, "worker deployments: one record per deployment, changed by compare-and-swap on its revision",
       R"sql(
CREATE TABLE worker_deployments (
  namespace_id TEXT NOT NULL,
  name         TEXT NOT NULL,
  revision     INTEGER NOT NULL,   -- 1 when created, +1 by each update
  record       BLOB NOT NULL,      -- tock.persistence.v1.WorkerDeploymentRecord
  PRIMARY KEY (namespace_id, name)
);
)sql"},
      {20, "visibility: the Worker Deployment search attributes in columns of their own (queries, drainage)",
       R"sql(
ALTER TABLE visibility ADD COLUMN worker_deployment TEXT;
ALTER TABLE visibility ADD COLUMN deployment_version TEXT;
ALTER TABLE visibility ADD COLUMN versioning_behavior TEXT;
CREATE INDEX visibility_deployment_version ON visibility(namespace_id, deployment_version, status)
  WHERE deployment_version IS NOT NULL;
)sql"},
      {21, "Nexus endpoints: cluster-global, by id with a unique name",
       R"sql(
CREATE TABLE nexus_endpoints (
  id      TEXT PRIMARY KEY,   -- a UUID
  name    TEXT NOT NULL UNIQUE,
  version INTEGER NOT NULL,   -- 1 when created, +1 by each update
  record  BLOB NOT NULL       -- temporal.api.nexus.v1.Endpoint (worker target by namespace id)
);
)sql"},
  };
  return migrations;
}

namespace {

// PRAGMA application_id of Tock's databases ("Tock" in ASCII): file(1) and sqlite3 show it,
// and a database of another program is refused instead of being filled with Tock's tables.
constexpr int64_t kTockApplicationId = 0x546f636b;

absl::StatusOr<int64_t> QueryInt(SqliteDb& db, const std::string& sql) {
  auto q = db.Prepare(sql);
  if (!q.ok()) return q.status();
  auto row = (*q)->Step();
  if (!row.ok()) return row.status();
  const int64_t value = *row ? (*q)->Int(0) : 0;
  (*q)->Reset();
  return value;
}

// A database that is neither empty nor Tock's is refused (FAILED_PRECONDITION).
absl::Status CheckIsTocks(SqliteDb& db) {
  absl::StatusOr<int64_t> app = QueryInt(db, "PRAGMA application_id");
  if (!app.ok()) return app.status();
  absl::StatusOr<int64_t> tables = QueryInt(
      db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  if (!tables.ok()) return tables.status();
  absl::StatusOr<int64_t> ours = QueryInt(
      db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
  if (!ours.ok()) return ours.status();
  const bool foreign = (*app != 0 && *app != kTockApplicationId) || (*tables > 0 && *ours == 0);
  if (foreign) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the database ", db.location(),
        " belongs to another program (an SQLite file with tables of its own and no Tock "
        "schema); give tock-server a new file"));
  }
  if (*app == 0) {
    return db.Exec(absl::StrCat("PRAGMA application_id = ", kTockApplicationId));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status MigrateSqlite(SqliteDb& db) {
  std::lock_guard lock(db.mutex());
  if (absl::Status s = CheckIsTocks(db); !s.ok()) return s;
  if (absl::Status s = db.Exec(
          "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
          "description TEXT NOT NULL, applied_ms INTEGER NOT NULL)");
      !s.ok()) {
    return s;
  }
  auto current = db.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_version");
  if (!current.ok()) return current.status();
  auto row = (*current)->Step();
  if (!row.ok()) return row.status();
  const int64_t applied = (*current)->Int(0);
  (*current)->Reset();
  const int known = SqliteMigrations().back().version;
  if (applied > known) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the database ", db.location(), " has schema version ", applied,
        " but this tock-server knows versions up to ", known, "; use a newer tock-server"));
  }
  for (const Migration& m : SqliteMigrations()) {
    if (m.version <= applied) continue;
    Transaction tx(db);
    if (absl::Status s = tx.Begin(); !s.ok()) return s;
    absl::Status s = db.Exec(m.sql);
    if (s.ok() && m.then != nullptr) s = m.then(db);
    if (!s.ok()) {
      return absl::InternalError(
          absl::StrCat("schema migration ", m.version, " failed: ", s.message()));
    }
    auto record = db.Prepare(
        "INSERT INTO schema_version(version, description, applied_ms) VALUES (?, ?, "
        "CAST(strftime('%s','now') AS INTEGER) * 1000)");
    if (!record.ok()) return record.status();
    if (absl::Status s = (*record)->Bind(1, int64_t{m.version}).Bind(2, m.description).Run();
        !s.ok()) {
      return s;
    }
    if (absl::Status s = tx.Commit(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace tock::persistence
