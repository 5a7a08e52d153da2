// Replication on PostgreSQL: remote clusters as records changed by compare-and-swap on
// their version; the namespace replication queue (filled by the namespace store) and the
// ack levels of the clusters pulling it. One autocommit statement per call.
#include "absl/strings/str_cat.h"
#include "server-core/persistence/postgres/pg_stores.h"
#include "server-core/persistence/replication_store.h"

namespace tock::persistence {
namespace {

class PgReplicationStore : public ReplicationStore {
 public:
  explicit PgReplicationStore(PgPool& pool) : pool_(pool) {}

  absl::StatusOr<std::vector<StoredRemoteCluster>> ListRemoteClusters() override {
    absl::StatusOr<PgResult> r =
        pool_.Query("SELECT version, record FROM remote_clusters ORDER BY name");
    if (!r.ok()) return r.status();
    std::vector<StoredRemoteCluster> out;
    for (int i = 0; i < r->rows(); ++i) {
      StoredRemoteCluster& c = out.emplace_back();
      c.version = r->Int(i, 0);
      const std::string_view bytes = r->View(i, 1);
      if (!c.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        return absl::DataLossError("a stored remote cluster cannot be parsed");
      }
    }
    return out;
  }

  absl::Status SaveRemoteCluster(const RemoteClusterRecord& record,
                                 int64_t expected_version) override {
    const std::string bytes = record.SerializeAsString();
    absl::StatusOr<PgResult> r =
        expected_version == 0
            ? pool_.Query("INSERT INTO remote_clusters(name, version, record) VALUES ($1, 1, $2) "
                          "ON CONFLICT DO NOTHING RETURNING 1",
                          {PgParam::Text(record.name()), PgParam::Bytes(bytes)})
            : pool_.Query("UPDATE remote_clusters SET version = version + 1, record = $2 "
                          "WHERE name = $1 AND version = $3 RETURNING 1",
                          {PgParam::Text(record.name()), PgParam::Bytes(bytes),
                           PgParam::Int(expected_version)});
    if (!r.ok()) return r.status();
    if (r->rows() == 0) {
      return absl::AbortedError(
          absl::StrCat("remote cluster ", record.name(), " was changed concurrently"));
    }
    return absl::OkStatus();
  }

  absl::Status DeleteRemoteCluster(const std::string& name) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "DELETE FROM remote_clusters WHERE name = $1 RETURNING 1", {PgParam::Text(name)});
    if (!r.ok()) return r.status();
    if (r->rows() == 0) return absl::NotFoundError("no such remote cluster");
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<NamespaceReplicationTask>> ReadNamespaceReplicationTasks(
      int64_t after_task_id, int32_t limit) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT t.task_id, v.version, v.valid_from_ms, v.valid_to_ms, v.operation, v.record "
        "FROM namespace_replication_tasks t JOIN namespace_versions v ON "
        "v.namespace_id = t.namespace_id AND v.version = t.version "
        "WHERE t.task_id > $1 ORDER BY t.task_id LIMIT $2",
        {PgParam::Int(after_task_id), PgParam::Int(limit)});
    if (!r.ok()) return r.status();
    std::vector<NamespaceReplicationTask> out;
    for (int i = 0; i < r->rows(); ++i) {
      NamespaceReplicationTask& t = out.emplace_back();
      t.task_id = r->Int(i, 0);
      t.version.version = r->Int(i, 1);
      t.version.valid_from = absl::FromUnixMillis(r->Int(i, 2));
      if (!r->IsNull(i, 3)) t.version.valid_to = absl::FromUnixMillis(r->Int(i, 3));
      t.version.operation = std::string(r->View(i, 4));
      const std::string_view bytes = r->View(i, 5);
      if (!t.version.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        return absl::DataLossError("a stored namespace record cannot be parsed");
      }
    }
    return out;
  }

  absl::StatusOr<int64_t> MaxNamespaceReplicationTaskId() override {
    absl::StatusOr<PgResult> r =
        pool_.Query("SELECT COALESCE(MAX(task_id), 0) FROM namespace_replication_tasks");
    if (!r.ok()) return r.status();
    return r->Int(0, 0);
  }

  absl::Status AckNamespaceReplication(const std::string& cluster, int64_t task_id) override {
    return pool_
        .Query("INSERT INTO namespace_replication_acks(cluster_name, ack_task_id) VALUES ($1, $2) "
               "ON CONFLICT (cluster_name) DO UPDATE SET ack_task_id = "
               "GREATEST(namespace_replication_acks.ack_task_id, EXCLUDED.ack_task_id)",
               {PgParam::Text(cluster), PgParam::Int(task_id)})
        .status();
  }

  absl::StatusOr<int64_t> NamespaceReplicationAck(const std::string& cluster) override {
    absl::StatusOr<PgResult> r =
        pool_.Query("SELECT ack_task_id FROM namespace_replication_acks WHERE cluster_name = $1",
                    {PgParam::Text(cluster)});
    if (!r.ok()) return r.status();
    return r->rows() == 0 ? int64_t{0} : r->Int(0, 0);
  }

  absl::StatusOr<std::vector<ReplicationTaskRow>> LoadReplicationTasks(int32_t shard_id,
                                                                      int64_t after_task_id,
                                                                      int32_t limit) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT task_id, data FROM replication_tasks WHERE shard_id = $1 AND task_id > $2 "
        "ORDER BY task_id LIMIT $3",
        {PgParam::Int(shard_id), PgParam::Int(after_task_id), PgParam::Int(limit)});
    if (!r.ok()) return r.status();
    std::vector<ReplicationTaskRow> out;
    for (int i = 0; i < r->rows(); ++i) {
      ReplicationTaskRow& t = out.emplace_back();
      t.task_id = r->Int(i, 0);
      const std::string_view bytes = r->View(i, 1);
      if (!t.task.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        return absl::DataLossError("a stored replication task cannot be parsed");
      }
    }
    return out;
  }

  absl::StatusOr<int64_t> MaxReplicationTaskId(int32_t shard_id) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT COALESCE(MAX(task_id), 0) FROM replication_tasks WHERE shard_id = $1",
        {PgParam::Int(shard_id)});
    if (!r.ok()) return r.status();
    return r->Int(0, 0);
  }

  absl::Status AckReplication(const std::string& cluster, int32_t shard_id,
                              int64_t task_id) override {
    return pool_
        .Query("INSERT INTO replication_acks(cluster_name, shard_id, ack_task_id) "
               "VALUES ($1, $2, $3) ON CONFLICT (cluster_name, shard_id) DO UPDATE SET "
               "ack_task_id = GREATEST(replication_acks.ack_task_id, EXCLUDED.ack_task_id)",
               {PgParam::Text(cluster), PgParam::Int(shard_id), PgParam::Int(task_id)})
        .status();
  }

  absl::StatusOr<int64_t> ReplicationAck(const std::string& cluster, int32_t shard_id) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT ack_task_id FROM replication_acks WHERE cluster_name = $1 AND shard_id = $2",
        {PgParam::Text(cluster), PgParam::Int(shard_id)});
    if (!r.ok()) return r.status();
    return r->rows() == 0 ? int64_t{0} : r->Int(0, 0);
  }

  absl::Status PutReplicationDlqTask(const ReplicationDlqTask& t) override {
    return pool_
        .Query("INSERT INTO replication_dlq(source_cluster, source_shard, task_id, namespace_id, "
               "workflow_id, run_id, first_event_id, next_event_id, version, last_error, "
               "added_ms, kind, scheduled_event_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
               "$10, $11, $12, $13) "
               "ON CONFLICT (source_cluster, source_shard, task_id) DO UPDATE SET "
               "namespace_id = EXCLUDED.namespace_id, workflow_id = EXCLUDED.workflow_id, "
               "run_id = EXCLUDED.run_id, first_event_id = EXCLUDED.first_event_id, "
               "next_event_id = EXCLUDED.next_event_id, version = EXCLUDED.version, "
               "last_error = EXCLUDED.last_error, added_ms = EXCLUDED.added_ms, "
               "kind = EXCLUDED.kind, scheduled_event_id = EXCLUDED.scheduled_event_id",
               {PgParam::Text(t.key.source_cluster), PgParam::Int(t.key.source_shard),
                PgParam::Int(t.key.task_id), PgParam::Text(t.namespace_id),
                PgParam::Text(t.workflow_id), PgParam::Text(t.run_id),
                PgParam::Int(t.first_event_id), PgParam::Int(t.next_event_id),
                PgParam::Int(t.version), PgParam::Text(t.last_error),
                PgParam::Int(absl::ToUnixMillis(t.added)), PgParam::Int(t.kind),
                PgParam::Int(t.scheduled_event_id)})
        .status();
  }

  absl::StatusOr<std::vector<ReplicationDlqTask>> ReadReplicationDlq(
      const ReplicationDlqSelection& selection, const ReplicationDlqKey& after,
      int32_t limit) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT source_cluster, source_shard, task_id, namespace_id, workflow_id, run_id, "
        "first_event_id, next_event_id, version, last_error, added_ms, kind, scheduled_event_id "
        "FROM replication_dlq "
        "WHERE ($1 = '' OR source_cluster = $1) AND ($2 = 0 OR source_shard = $2) AND "
        "task_id <= $3 AND (source_cluster, source_shard, task_id) > ($4, $5, $6) "
        "ORDER BY source_cluster, source_shard, task_id LIMIT $7",
        {PgParam::Text(selection.source_cluster), PgParam::Int(selection.source_shard),
         PgParam::Int(selection.max_task_id), PgParam::Text(after.source_cluster),
         PgParam::Int(after.source_shard), PgParam::Int(after.task_id), PgParam::Int(limit)});
    if (!r.ok()) return r.status();
    std::vector<ReplicationDlqTask> out;
    for (int i = 0; i < r->rows(); ++i) {
      ReplicationDlqTask& t = out.emplace_back();
      t.key.source_cluster = std::string(r->View(i, 0));
      t.key.source_shard = static_cast<int32_t>(r->Int(i, 1));
      t.key.task_id = r->Int(i, 2);
      t.namespace_id = std::string(r->View(i, 3));
      t.workflow_id = std::string(r->View(i, 4));
      t.run_id = std::string(r->View(i, 5));
      t.first_event_id = r->Int(i, 6);
      t.next_event_id = r->Int(i, 7);
      t.version = r->Int(i, 8);
      t.last_error = std::string(r->View(i, 9));
      t.added = absl::FromUnixMillis(r->Int(i, 10));
      t.kind = static_cast<tock::persistence::v1::ReplicationTask::Kind>(r->Int(i, 11));
      t.scheduled_event_id = r->Int(i, 12);
    }
    return out;
  }

  absl::StatusOr<int64_t> PurgeReplicationDlq(const ReplicationDlqSelection& selection) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "WITH gone AS (DELETE FROM replication_dlq WHERE ($1 = '' OR source_cluster = $1) AND "
        "($2 = 0 OR source_shard = $2) AND task_id <= $3 RETURNING 1) SELECT count(*) FROM gone",
        {PgParam::Text(selection.source_cluster), PgParam::Int(selection.source_shard),
         PgParam::Int(selection.max_task_id)});
    if (!r.ok()) return r.status();
    return r->Int(0, 0);
  }

  absl::Status DeleteReplicationDlqTask(const ReplicationDlqKey& key) override {
    return pool_
        .Query("DELETE FROM replication_dlq WHERE source_cluster = $1 AND source_shard = $2 AND "
               "task_id = $3",
               {PgParam::Text(key.source_cluster), PgParam::Int(key.source_shard),
                PgParam::Int(key.task_id)})
        .status();
  }

  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReplicationDlqWorkflows(
      const std::string& source_cluster, int32_t source_shard) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT DISTINCT namespace_id, workflow_id FROM replication_dlq "
        "WHERE source_cluster = $1 AND source_shard = $2",
        {PgParam::Text(source_cluster), PgParam::Int(source_shard)});
    if (!r.ok()) return r.status();
    std::vector<std::pair<std::string, std::string>> out;
    for (int i = 0; i < r->rows(); ++i) {
      out.emplace_back(std::string(r->View(i, 0)), std::string(r->View(i, 1)));
    }
    return out;
  }

  absl::StatusOr<std::map<int32_t, int64_t>> CountReplicationDlq(
      const std::string& source_cluster) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT source_shard, count(*) FROM replication_dlq WHERE source_cluster = $1 "
        "GROUP BY source_shard",
        {PgParam::Text(source_cluster)});
    if (!r.ok()) return r.status();
    std::map<int32_t, int64_t> out;
    for (int i = 0; i < r->rows(); ++i) out[static_cast<int32_t>(r->Int(i, 0))] = r->Int(i, 1);
    return out;
  }

  absl::StatusOr<std::vector<std::pair<std::string, int32_t>>> ReplicationDlqShards(
      const ReplicationDlqSelection& selection) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT DISTINCT source_cluster, source_shard FROM replication_dlq "
        "WHERE ($1 = '' OR source_cluster = $1) AND ($2 = 0 OR source_shard = $2) AND "
        "task_id <= $3 ORDER BY source_cluster, source_shard",
        {PgParam::Text(selection.source_cluster), PgParam::Int(selection.source_shard),
         PgParam::Int(selection.max_task_id)});
    if (!r.ok()) return r.status();
    std::vector<std::pair<std::string, int32_t>> out;
    for (int i = 0; i < r->rows(); ++i) {
      out.emplace_back(std::string(r->View(i, 0)), static_cast<int32_t>(r->Int(i, 1)));
    }
    return out;
  }

  absl::Status PutNamespaceDlqTask(const NamespaceDlqTask& t) override {
    const std::string bytes = t.record.SerializeAsString();
    return pool_
        .Query("INSERT INTO namespace_replication_dlq(source_cluster, task_id, operation, record, "
               "last_error, added_ms) VALUES ($1, $2, $3, $4, $5, $6) "
               "ON CONFLICT (source_cluster, task_id) DO UPDATE SET operation = "
               "EXCLUDED.operation, record = EXCLUDED.record, last_error = EXCLUDED.last_error, "
               "added_ms = EXCLUDED.added_ms",
               {PgParam::Text(t.source_cluster), PgParam::Int(t.task_id),
                PgParam::Text(t.operation), PgParam::Bytes(bytes), PgParam::Text(t.last_error),
                PgParam::Int(absl::ToUnixMillis(t.added))})
        .status();
  }

  absl::StatusOr<std::vector<NamespaceDlqTask>> ReadNamespaceDlq(
      const ReplicationDlqSelection& selection, const std::string& after_cluster,
      int64_t after_task_id, int32_t limit) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT source_cluster, task_id, operation, record, last_error, added_ms FROM "
        "namespace_replication_dlq WHERE ($1 = '' OR source_cluster = $1) AND task_id <= $2 AND "
        "(source_cluster, task_id) > ($3, $4) ORDER BY source_cluster, task_id LIMIT $5",
        {PgParam::Text(selection.source_cluster), PgParam::Int(selection.max_task_id),
         PgParam::Text(after_cluster), PgParam::Int(after_task_id), PgParam::Int(limit)});
    if (!r.ok()) return r.status();
    std::vector<NamespaceDlqTask> out;
    for (int i = 0; i < r->rows(); ++i) {
      NamespaceDlqTask& t = out.emplace_back();
      t.source_cluster = std::string(r->View(i, 0));
      t.task_id = r->Int(i, 1);
      t.operation = std::string(r->View(i, 2));
      const std::string_view bytes = r->View(i, 3);
      if (!t.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        return absl::DataLossError("a namespace DLQ task cannot be parsed");
      }
      t.last_error = std::string(r->View(i, 4));
      t.added = absl::FromUnixMillis(r->Int(i, 5));
    }
    return out;
  }

  absl::StatusOr<int64_t> PurgeNamespaceDlq(const ReplicationDlqSelection& selection) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "WITH gone AS (DELETE FROM namespace_replication_dlq WHERE ($1 = '' OR source_cluster = "
        "$1) AND task_id <= $2 RETURNING 1) SELECT count(*) FROM gone",
        {PgParam::Text(selection.source_cluster), PgParam::Int(selection.max_task_id)});
    if (!r.ok()) return r.status();
    return r->Int(0, 0);
  }

  absl::Status DeleteNamespaceDlqTask(const std::string& source_cluster, int64_t task_id) override {
    return pool_
        .Query("DELETE FROM namespace_replication_dlq WHERE source_cluster = $1 AND task_id = $2",
               {PgParam::Text(source_cluster), PgParam::Int(task_id)})
        .status();
  }

  absl::StatusOr<int64_t> CountNamespaceDlq(const std::string& source_cluster) override {
    absl::StatusOr<PgResult> r = pool_.Query(
        "SELECT count(*) FROM namespace_replication_dlq WHERE source_cluster = $1",
        {PgParam::Text(source_cluster)});
    if (!r.ok()) return r.status();
    return r->Int(0, 0);
  }

 private:
  PgPool& pool_;
};

}  // namespace

std::unique_ptr<ReplicationStore> NewPostgresReplicationStore(PgPool& pool) {
  return std::make_unique<PgReplicationStore>(pool);
}

}  // namespace tock::persistence
