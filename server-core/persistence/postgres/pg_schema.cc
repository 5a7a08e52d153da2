#include "server-core/persistence/postgres/pg_schema.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::persistence {

// Conventions of every table (the same as the SQLite schema's, so the stores of both
// backends read alike):
//   - times are BIGINT milliseconds since the Unix epoch (`*_ms`);
//   - protobuf records and payloads are BYTEA;
//   - enums and flags are BIGINT (the pool reads int2/4/8 alike; BIGINT matches the int8 of
//     every bound parameter, so comparisons need no casts);
//   - text is COLLATE "C": byte order, as SQLite's BINARY collation orders it, whatever
//     locale the database was created with (list orders and page tokens depend on it);
//   - where SQLite has AUTOINCREMENT, a BIGSERIAL: one sequence for the whole database, so
//     ids keep increasing across the hosts that share it.
const std::vector<PgMigration>& PostgresMigrations() {
  static const std::vector<PgMigration> migrations = {
      {1, "namespaces as a valid-time table; cluster metadata", R"sql(
CREATE TABLE namespace_versions (
  namespace_id  TEXT COLLATE "C" NOT NULL,
  name          TEXT COLLATE "C" NOT NULL,
  version       BIGINT NOT NULL,
  valid_from_ms BIGINT NOT NULL,
  valid_to_ms   BIGINT,
  operation     TEXT COLLATE "C" NOT NULL,
  record        BYTEA  NOT NULL,
  deleted       BIGINT NOT NULL,
  PRIMARY KEY (namespace_id, version)
);
COMMENT ON TABLE namespace_versions IS
  'Every version of every namespace (valid time): valid_from_ms <= t < valid_to_ms; the current version has valid_to_ms NULL';
COMMENT ON COLUMN namespace_versions.record IS 'tock.persistence.v1.NamespaceRecord';
COMMENT ON COLUMN namespace_versions.deleted IS '1 when record.info.state is DELETED, for list filtering';
CREATE UNIQUE INDEX namespace_current_name ON namespace_versions(name) WHERE valid_to_ms IS NULL;
CREATE INDEX namespace_name_time ON namespace_versions(name, valid_from_ms);
CREATE TABLE cluster_metadata (
  key   TEXT COLLATE "C" PRIMARY KEY,
  value TEXT COLLATE "C" NOT NULL
);
COMMENT ON TABLE cluster_metadata IS
  'Facts fixed when the database is created (history shard count, cluster name), checked at every start';
)sql"},
      {2, "workflow runs: shards, mutable state, history, tasks, timers, visibility", R"sql(
CREATE TABLE shards (
  shard_id   BIGINT PRIMARY KEY,
  range_id   BIGINT NOT NULL,
  owner      TEXT COLLATE "C" NOT NULL,
  claimed_ms BIGINT NOT NULL
);
COMMENT ON TABLE shards IS
  'History shards: the owner and its range id; every shard write checks the range id (FOR SHARE), a steal increments it (FOR UPDATE)';
CREATE TABLE executions (
  namespace_id TEXT COLLATE "C" NOT NULL,
  workflow_id  TEXT COLLATE "C" NOT NULL,
  run_id       TEXT COLLATE "C" NOT NULL,
  shard_id     BIGINT NOT NULL,
  db_version   BIGINT NOT NULL,
  state        BYTEA  NOT NULL,
  PRIMARY KEY (namespace_id, workflow_id, run_id)
);
COMMENT ON TABLE executions IS 'The mutable state of every run; db_version detects concurrent changes';
COMMENT ON COLUMN executions.state IS 'tock.persistence.v1.MutableState';
CREATE TABLE current_executions (
  namespace_id     TEXT COLLATE "C" NOT NULL,
  workflow_id      TEXT COLLATE "C" NOT NULL,
  run_id           TEXT COLLATE "C" NOT NULL,
  status           BIGINT NOT NULL,
  start_request_id TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (namespace_id, workflow_id)
);
COMMENT ON TABLE current_executions IS 'The current (latest) run of each workflow id';
CREATE TABLE history_events (
  run_id   TEXT COLLATE "C" NOT NULL,
  event_id BIGINT NOT NULL,
  data     BYTEA  NOT NULL,
  PRIMARY KEY (run_id, event_id)
);
COMMENT ON TABLE history_events IS 'The history of every run, one row per event';
COMMENT ON COLUMN history_events.data IS 'temporal.api.history.v1.HistoryEvent';
CREATE TABLE task_queue_tasks (
  task_id      BIGSERIAL PRIMARY KEY,
  namespace_id TEXT COLLATE "C" NOT NULL,
  task_queue   TEXT COLLATE "C" NOT NULL,
  kind         BIGINT NOT NULL,
  data         BYTEA  NOT NULL
);
COMMENT ON TABLE task_queue_tasks IS
  'Workflow and activity tasks waiting for a poller; task_id from one sequence, increasing across hosts';
COMMENT ON COLUMN task_queue_tasks.data IS 'tock.persistence.v1.TransferTask';
CREATE TABLE timer_tasks (
  shard_id BIGINT NOT NULL,
  fire_ms  BIGINT NOT NULL,
  task_id  BIGINT NOT NULL,
  data     BYTEA  NOT NULL,
  PRIMARY KEY (shard_id, fire_ms, task_id)
);
COMMENT ON TABLE timer_tasks IS 'Durable timers of each shard, in firing order';
COMMENT ON COLUMN timer_tasks.data IS 'tock.persistence.v1.TimerTask';
CREATE TABLE visibility (
  namespace_id   TEXT COLLATE "C" NOT NULL,
  run_id         TEXT COLLATE "C" NOT NULL,
  workflow_id    TEXT COLLATE "C" NOT NULL,
  workflow_type  TEXT COLLATE "C" NOT NULL,
  task_queue     TEXT COLLATE "C" NOT NULL,
  status         BIGINT NOT NULL,
  start_ms       BIGINT NOT NULL,
  execution_ms   BIGINT NOT NULL,
  close_ms       BIGINT,
  history_length BIGINT NOT NULL,
  info           BYTEA  NOT NULL,
  PRIMARY KEY (namespace_id, run_id)
);
COMMENT ON TABLE visibility IS 'One row per run for List/Count/Describe; close_ms NULL while open';
COMMENT ON COLUMN visibility.info IS 'temporal.api.workflow.v1.WorkflowExecutionInfo';
CREATE INDEX visibility_start ON visibility(namespace_id, start_ms DESC);
CREATE INDEX visibility_workflow ON visibility(namespace_id, workflow_id);
)sql"},
      {3, "archival queue: closed runs of archiving namespaces and the archiver's progress", R"sql(
CREATE TABLE archival_queue (
  namespace_id     TEXT COLLATE "C" NOT NULL,
  run_id           TEXT COLLATE "C" NOT NULL,
  workflow_id      TEXT COLLATE "C" NOT NULL,
  close_ms         BIGINT NOT NULL,
  visibility_step  BIGINT NOT NULL DEFAULT 0,
  history_step     BIGINT NOT NULL DEFAULT 0,
  run_deleted      BIGINT NOT NULL DEFAULT 0,
  attempts         BIGINT NOT NULL DEFAULT 0,
  last_error       TEXT COLLATE "C" NOT NULL DEFAULT '',
  next_attempt_ms  BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (namespace_id, run_id)
);
COMMENT ON TABLE archival_queue IS
  'Closed runs of archiving namespaces and the archiver''s progress (steps: 0 pending, 1 archived, 2 skipped)';
CREATE INDEX archival_queue_visibility ON archival_queue(close_ms) WHERE visibility_step = 0;
CREATE INDEX archival_queue_live ON archival_queue(namespace_id, close_ms) WHERE run_deleted = 0;
)sql"},
      {4, "cluster membership: one heartbeat row per tock-server process", R"sql(
CREATE TABLE cluster_membership (
  host_id           TEXT COLLATE "C" PRIMARY KEY,
  address           TEXT COLLATE "C" NOT NULL,
  session_start_ms  BIGINT NOT NULL,
  last_heartbeat_ms BIGINT NOT NULL
);
COMMENT ON TABLE cluster_membership IS
  'One row per tock-server host, upserted every heartbeat; last_heartbeat_ms is the database''s clock, so hosts agree on who is alive';
)sql"},
      {5, "task queues paged per queue: the tasks of one queue, and the transfer tasks, by id", R"sql(
CREATE INDEX task_queue_tasks_queue ON task_queue_tasks(namespace_id, task_queue, kind, task_id);
CREATE INDEX task_queue_tasks_transfer ON task_queue_tasks(task_id) WHERE kind = 3;
)sql"},
      {6, "custom search attributes: pre-allocated typed visibility columns, indexed where set",
       CustomSearchAttributeColumnsSql(true)},
      {7, "batch operations: one record per job, rewritten as it progresses", R"sql(
CREATE TABLE batch_operations (
  namespace_id TEXT COLLATE "C" NOT NULL,
  job_id       TEXT COLLATE "C" NOT NULL,
  running      BIGINT  NOT NULL,   -- 1 while the batch runs
  start_ms     BIGINT  NOT NULL,
  record       BYTEA NOT NULL,   -- tock.persistence.v1.BatchOperationRecord
  PRIMARY KEY (namespace_id, job_id)
);
CREATE INDEX batch_operations_start ON batch_operations(namespace_id, start_ms);
CREATE INDEX batch_operations_running ON batch_operations(running) WHERE running = 1;
)sql"},
      {8, "schedules: one record per schedule, changed by compare-and-swap on its revision", R"sql(
CREATE TABLE schedules (
  namespace_id TEXT COLLATE "C" NOT NULL,
  schedule_id  TEXT COLLATE "C" NOT NULL,
  revision     BIGINT NOT NULL,   -- 1 when created, +1 by each update
  record       BYTEA NOT NULL,   -- tock.persistence.v1.ScheduleRecord
  PRIMARY KEY (namespace_id, schedule_id)
);
)sql"},
      {9, "replication: remote clusters, the namespace replication queue and its ack levels",
       R"sql(
CREATE TABLE remote_clusters (
  name    TEXT COLLATE "C" PRIMARY KEY,
  version BIGINT NOT NULL,   -- 1 when saved first, +1 by each save
  record  BYTEA NOT NULL     -- tock.persistence.v1.RemoteCluster
);
CREATE TABLE namespace_replication_tasks (
  task_id      BIGSERIAL PRIMARY KEY,
  namespace_id TEXT COLLATE "C" NOT NULL,
  version      BIGINT NOT NULL   -- of namespace_versions: what is sent
);
CREATE TABLE namespace_replication_acks (
  cluster_name TEXT COLLATE "C" PRIMARY KEY,
  ack_task_id  BIGINT NOT NULL   -- the highest task id the cluster applied
);
)sql"},
      {10, "history replication: each shard's replication queue and the remotes' ack levels",
       R"sql(
CREATE TABLE replication_tasks (
  shard_id BIGINT NOT NULL,
  task_id  BIGINT NOT NULL,   -- from replication_task_ids, drawn under its row lock
  data     BYTEA NOT NULL,    -- tock.persistence.v1.ReplicationTask
  PRIMARY KEY (shard_id, task_id)
);
CREATE TABLE replication_task_ids (
  shard_id BIGINT PRIMARY KEY,
  last_id  BIGINT NOT NULL
);
CREATE TABLE replication_acks (
  cluster_name TEXT COLLATE "C" NOT NULL,
  shard_id     BIGINT NOT NULL,
  ack_task_id  BIGINT NOT NULL,   -- the highest task id of the shard the cluster applied
  PRIMARY KEY (cluster_name, shard_id)
);
)sql"},
      {11, "history branches: the events of a run's non-current branches (conflict resolution)",
       R"sql(
CREATE TABLE history_branch_events (
  run_id       TEXT COLLATE "C" NOT NULL,
  branch_token BYTEA  NOT NULL,
  event_id     BIGINT NOT NULL,
  data         BYTEA  NOT NULL,
  PRIMARY KEY (run_id, branch_token, event_id)
);
COMMENT ON TABLE history_branch_events IS
  'The events of the non-current branches of a run (its current branch is in history_events)';
)sql"},
      {12, "replication DLQ: remote tasks that kept failing here, by source cluster and shard",
       R"sql(
CREATE TABLE replication_dlq (
  source_cluster TEXT COLLATE "C" NOT NULL,
  source_shard   BIGINT NOT NULL,
  task_id        BIGINT NOT NULL,
  namespace_id   TEXT COLLATE "C" NOT NULL,
  workflow_id    TEXT COLLATE "C" NOT NULL,
  run_id         TEXT COLLATE "C" NOT NULL,
  first_event_id BIGINT NOT NULL,
  next_event_id  BIGINT NOT NULL,
  version        BIGINT NOT NULL,
  last_error     TEXT NOT NULL,
  added_ms       BIGINT NOT NULL,
  PRIMARY KEY (source_cluster, source_shard, task_id)
);
CREATE INDEX replication_dlq_workflows
  ON replication_dlq(source_cluster, source_shard, namespace_id, workflow_id);
COMMENT ON TABLE replication_dlq IS
  'History replication tasks of a remote cluster that kept failing here (tock cluster dlq)';
)sql"},
      {13, "timer service: durable timers with HTTP callbacks, in the history shards",
       R"sql(
CREATE TABLE timers (
  namespace_id TEXT COLLATE "C" NOT NULL,
  timer_id     TEXT COLLATE "C" NOT NULL,
  shard_id     BIGINT NOT NULL,
  revision     BIGINT NOT NULL,
  state        BIGINT NOT NULL,
  due_ms       BIGINT,
  record       BYTEA NOT NULL,
  PRIMARY KEY (namespace_id, timer_id)
);
CREATE INDEX timers_due ON timers(shard_id, due_ms, namespace_id, timer_id)
  WHERE due_ms IS NOT NULL;
CREATE INDEX timers_state ON timers(namespace_id, state, timer_id);
COMMENT ON TABLE timers IS
  'Timer service (tock.timer.v1): one row per timer, written only by its shard''s owner';
COMMENT ON COLUMN timers.due_ms IS
  'When the owner must act: a pending timer''s next firing, a firing one''s attempt start; NULL: nothing to do';
)sql"},
      {14, "replication DLQ: what a task was (history or an activity's state); the namespace DLQ",
       R"sql(
ALTER TABLE replication_dlq ADD COLUMN kind BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN scheduled_event_id BIGINT NOT NULL DEFAULT 0;
COMMENT ON COLUMN replication_dlq.kind IS
  'tock.persistence.v1.ReplicationTask.Kind: 0 events, 1 the state of the activity at scheduled_event_id';
CREATE TABLE namespace_replication_dlq (
  source_cluster TEXT COLLATE "C" NOT NULL,
  task_id        BIGINT NOT NULL,
  operation      TEXT NOT NULL,
  record         BYTEA NOT NULL,
  last_error     TEXT NOT NULL,
  added_ms       BIGINT NOT NULL,
  PRIMARY KEY (source_cluster, task_id)
);
COMMENT ON TABLE namespace_replication_dlq IS
  'Namespace replication tasks of a remote cluster that kept failing here (tock cluster dlq --type namespace)';
)sql"},
      {15, "timers: a firing timer keeps its passed due time (its attempt's record leaves the due index alone)",
       R"sql(
COMMENT ON COLUMN timers.due_ms IS
  'When the owner must act: a pending timer''s next firing, a firing one''s passed due time (sent again by the next owner); NULL: nothing to do';
)sql"},
      {16, "timers: a FIRING timer is listed with the PENDING ones (its attempt's record changes no indexed column)",
       R"sql(
ALTER TABLE timers ADD COLUMN listed_state BIGINT NOT NULL DEFAULT 0;
UPDATE timers SET listed_state = CASE state WHEN 2 THEN 1 ELSE state END;
DROP INDEX timers_state;
CREATE INDEX timers_state ON timers(namespace_id, listed_state, timer_id);
COMMENT ON COLUMN timers.listed_state IS
  'The state the timers_state index lists the timer under: its state, but FIRING (2) as PENDING (1)';
)sql"},
      {17, "task-queue tasks carry their history shard: a host taking a shard reads its own transfer tasks",
       R"sql(
ALTER TABLE task_queue_tasks ADD COLUMN shard_id INTEGER;
DROP INDEX task_queue_tasks_transfer;
CREATE INDEX task_queue_tasks_transfer ON task_queue_tasks(kind, shard_id, task_id);
COMMENT ON COLUMN task_queue_tasks.shard_id IS
  'The history shard of the commit that wrote the task; NULL for tasks written before schema version 17 (their shard, a hash of namespace and workflow id modulo the shard count, is computed by the server when it reads them)';
)sql"},
      {18, "history in batches: one row per stretch of consecutive events a commit wrote (history_batches.h)",
       R"sql(
CREATE TABLE history_batches (
  run_id         TEXT COLLATE "C" NOT NULL,
  first_event_id BIGINT NOT NULL,
  last_event_id  BIGINT NOT NULL,
  data           BYTEA  NOT NULL,
  PRIMARY KEY (run_id, first_event_id)
);
COMMENT ON TABLE history_batches IS
  'The history of every run: one row per stretch of consecutive events that one commit wrote, first_event_id to last_event_id';
COMMENT ON COLUMN history_batches.data IS
  'temporal.api.history.v1.History: each event as field 1, length-delimited';
-- One event's entry in a batch: the tag of History.events, the length as a varint, the
-- event (history_batches.h's AppendToBatch).
CREATE FUNCTION tock_history_entry(event BYTEA) RETURNS BYTEA
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  n BIGINT := length(event);
  prefix BYTEA := '\x0a';
BEGIN
  WHILE n >= 128 LOOP
    prefix := prefix || set_byte('\x00'::bytea, 0, (n % 128 + 128)::int);
    n := n / 128;
  END LOOP;
  RETURN prefix || set_byte('\x00'::bytea, 0, n::int) || event;
END $$;
-- The events of a batch whose first event is first_id, with their ids (VisitBatch).
CREATE FUNCTION tock_history_events(batch BYTEA, first_id BIGINT)
RETURNS TABLE (event_id BIGINT, data BYTEA)
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  pos INT := 0;
  len BIGINT;
  shift INT;
  b INT;
BEGIN
  event_id := first_id;
  WHILE pos < length(batch) LOOP
    IF get_byte(batch, pos) <> 10 THEN
      RAISE EXCEPTION 'a stored history batch cannot be parsed';
    END IF;
    pos := pos + 1;
    len := 0;
    shift := 0;
    LOOP
      b := get_byte(batch, pos);
      pos := pos + 1;
      len := len | ((b & 127)::bigint << shift);
      EXIT WHEN b < 128;
      shift := shift + 7;
    END LOOP;
    IF pos + len > length(batch) THEN
      RAISE EXCEPTION 'a stored history batch cannot be parsed';
    END IF;
    data := substring(batch FROM pos + 1 FOR len::int);
    RETURN NEXT;
    pos := pos + len::int;
    event_id := event_id + 1;
  END LOOP;
END $$;
INSERT INTO history_batches(run_id, first_event_id, last_event_id, data)
  SELECT run_id, event_id, event_id, tock_history_entry(data) FROM history_events;
DROP TABLE history_events;
)sql"},
      {19, "worker deployments: one record per deployment, changed by compare-and-swap on its revision",
       R"sql(
CREATE TABLE worker_deployments (
  namespace_id TEXT COLLATE "C" NOT NULL,
  name         TEXT COLLATE "C" NOT NULL,
  revision     BIGINT NOT NULL,
  record       BYTEA NOT NULL,
  PRIMARY KEY (namespace_id, name)
);
COMMENT ON TABLE worker_deployments IS
  'Worker Deployments: one row per deployment with its versions and routing config, rewritten by compare-and-swap on revision (1 when created, +1 by each update)';
COMMENT ON COLUMN worker_deployments.record IS 'tock.persistence.v1.WorkerDeploymentRecord';
)sql"},
      {20, "visibility: the Worker Deployment search attributes in columns of their own (queries, drainage)",
       R"sql(
ALTER TABLE visibility ADD COLUMN worker_deployment TEXT COLLATE "C";
ALTER TABLE visibility ADD COLUMN deployment_version TEXT COLLATE "C";
ALTER TABLE visibility ADD COLUMN versioning_behavior TEXT COLLATE "C";
CREATE INDEX visibility_deployment_version ON visibility(namespace_id, deployment_version, status)
  WHERE deployment_version IS NOT NULL;
COMMENT ON COLUMN visibility.deployment_version IS
  'TemporalWorkerDeploymentVersion (deployment:build) of a versioned run; NULL otherwise';
)sql"},
      {21, "Nexus endpoints: cluster-global, by id with a unique name",
       R"sql(
CREATE TABLE nexus_endpoints (
  id      TEXT COLLATE "C" PRIMARY KEY,
  name    TEXT COLLATE "C" NOT NULL UNIQUE,
  version BIGINT NOT NULL,
  record  BYTEA NOT NULL
);
COMMENT ON TABLE nexus_endpoints IS
  'Nexus endpoints (cluster-global): one row per endpoint by id (a UUID), its name unique, its version 1 when created and +1 by each update (compare-and-swap)';
COMMENT ON COLUMN nexus_endpoints.record IS
  'temporal.api.nexus.v1.Endpoint, a worker target naming its namespace by id';
)sql"},
  };
  return migrations;
}

namespace {

// A database whose current schema holds tables but no schema_version belongs to another
// program: refuse it rather than mix Tock's tables into it.
absl::Status CheckIsTocks(PgConn& conn, const PgPool& pool) {
  absl::StatusOr<PgResult> tables = conn.Query(
      "SELECT count(*), count(*) FILTER (WHERE table_name = 'schema_version') "
      "FROM information_schema.tables WHERE table_schema = current_schema()");
  if (!tables.ok()) return tables.status();
  if (tables->Int(0, 0) > 0 && tables->Int(0, 1) == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the database ", pool.location(),
        " belongs to another program (tables of its own and no Tock schema); give "
        "tock-server a new database"));
  }
  return absl::OkStatus();
}

// One step of the migration: under the advisory lock, applies the next pending migration.
// Sets `done` when none is left.
absl::Status MigrateOneStep(PgConn& conn, const PgPool& pool, bool& done) {
  absl::StatusOr<PgResult> locked =
      conn.Query("SELECT pg_advisory_xact_lock($1)", {PgParam::Int(kPgMigrationLockKey)});
  if (!locked.ok()) return locked.status();
  if (absl::Status s = CheckIsTocks(conn, pool); !s.ok()) return s;
  if (absl::Status s = conn.Exec(
          "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT PRIMARY KEY, "
          "description TEXT NOT NULL, applied_ms BIGINT NOT NULL)");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<PgResult> current =
      conn.Query("SELECT COALESCE(MAX(version), 0) FROM schema_version");
  if (!current.ok()) return current.status();
  const int64_t applied = current->Int(0, 0);
  const int known = PostgresMigrations().back().version;
  if (applied > known) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the database ", pool.location(), " has schema version ", applied,
        " but this tock-server knows versions up to ", known, "; use a newer tock-server"));
  }
  for (const PgMigration& m : PostgresMigrations()) {
    if (m.version <= applied) continue;
    if (absl::Status s = conn.Exec(m.sql); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("schema migration ", m.version, " failed: ",
                                                 s.message()));
    }
    absl::StatusOr<PgResult> recorded = conn.Query(
        "INSERT INTO schema_version(version, description, applied_ms) VALUES ($1, $2, "
        "(extract(epoch FROM clock_timestamp()) * 1000)::bigint)",
        {PgParam::Int(m.version), PgParam::Text(m.description)});
    return recorded.status();
  }
  done = true;
  return absl::OkStatus();
}

}  // namespace

absl::Status MigratePostgres(PgPool& pool) {
  // One transaction per migration (plus a last one that finds nothing to do); the bound
  // only guards against a bug that would loop forever.
  const size_t max_steps = PostgresMigrations().size() + 1;
  for (size_t step = 0; step < max_steps; ++step) {
    bool done = false;
    absl::Status s =
        pool.InTransaction([&](PgConn& conn) { return MigrateOneStep(conn, pool, done); });
    if (!s.ok()) return s;
    if (done) return absl::OkStatus();
  }
  return absl::InternalError("schema migration did not finish after one step per migration");
}

}  // namespace tock::persistence
