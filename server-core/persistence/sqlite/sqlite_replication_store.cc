// Replication on SQLite: remote clusters as records changed by compare-and-swap on their
// version; the namespace replication queue (filled by the namespace store) and the ack levels
// of the clusters pulling it.
#include "absl/strings/str_cat.h"
#include "server-core/persistence/replication_store.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"

namespace tock::persistence {
namespace {

class SqliteReplicationStore : public ReplicationStore {
 public:
  explicit SqliteReplicationStore(SqliteDb& db) : db_(db) {}

  absl::StatusOr<std::vector<StoredRemoteCluster>> ListRemoteClusters() override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT version, record FROM remote_clusters ORDER BY name"));
    std::vector<StoredRemoteCluster> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      StoredRemoteCluster& c = out.emplace_back();
      c.version = q.Int(0);
      const std::string_view bytes = q.BlobView(1);
      return c.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))
                 ? absl::OkStatus()
                 : absl::DataLossError("a stored remote cluster cannot be parsed");
    }));
    return out;
  }

  absl::Status SaveRemoteCluster(const RemoteClusterRecord& record,
                                 int64_t expected_version) override {
    std::lock_guard lock(db_.mutex());
    if (expected_version == 0) {
      ASSIGN_STMT(q, db_.Prepare("INSERT INTO remote_clusters(name, version, record) "
                                 "VALUES (?, 1, ?) ON CONFLICT DO NOTHING"));
      RETURN_IF_ERROR(q.Bind(1, record.name()).BindBlob(2, record.SerializeAsString()).Run());
    } else {
      ASSIGN_STMT(q, db_.Prepare("UPDATE remote_clusters SET version = version + 1, record = ? "
                                 "WHERE name = ? AND version = ?"));
      RETURN_IF_ERROR(q.BindBlob(1, record.SerializeAsString())
                          .Bind(2, record.name())
                          .Bind(3, expected_version)
                          .Run());
    }
    if (db_.Changes() == 0) {
      return absl::AbortedError(
          absl::StrCat("remote cluster ", record.name(), " was changed concurrently"));
    }
    return absl::OkStatus();
  }

  absl::Status DeleteRemoteCluster(const std::string& name) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("DELETE FROM remote_clusters WHERE name = ?"));
    RETURN_IF_ERROR(q.Bind(1, name).Run());
    if (db_.Changes() == 0) return absl::NotFoundError("no such remote cluster");
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<NamespaceReplicationTask>> ReadNamespaceReplicationTasks(
      int64_t after_task_id, int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "SELECT t.task_id, v.version, v.valid_from_ms, v.valid_to_ms, "
                       "v.operation, v.record FROM namespace_replication_tasks t "
                       "JOIN namespace_versions v ON v.namespace_id = t.namespace_id AND "
                       "v.version = t.version WHERE t.task_id > ? ORDER BY t.task_id LIMIT ?"));
    q.Bind(1, after_task_id).Bind(2, int64_t{limit});
    std::vector<NamespaceReplicationTask> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      NamespaceReplicationTask& t = out.emplace_back();
      t.task_id = q.Int(0);
      t.version.version = q.Int(1);
      t.version.valid_from = absl::FromUnixMillis(q.Int(2));
      if (!q.IsNull(3)) t.version.valid_to = absl::FromUnixMillis(q.Int(3));
      t.version.operation = q.Text(4);
      const std::string_view bytes = q.BlobView(5);
      return t.version.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))
                 ? absl::OkStatus()
                 : absl::DataLossError("a stored namespace record cannot be parsed");
    }));
    return out;
  }

  absl::StatusOr<int64_t> MaxNamespaceReplicationTaskId() override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT COALESCE(MAX(task_id), 0) FROM namespace_replication_tasks"));
    int64_t max = 0;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      max = q.Int(0);
      return absl::OkStatus();
    }));
    return max;
  }

  absl::Status AckNamespaceReplication(const std::string& cluster, int64_t task_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "INSERT INTO namespace_replication_acks(cluster_name, ack_task_id) "
                       "VALUES (?, ?) ON CONFLICT(cluster_name) DO UPDATE SET ack_task_id = "
                       "MAX(ack_task_id, excluded.ack_task_id)"));
    return q.Bind(1, cluster).Bind(2, task_id).Run();
  }

  absl::StatusOr<int64_t> NamespaceReplicationAck(const std::string& cluster) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "SELECT ack_task_id FROM namespace_replication_acks WHERE cluster_name = ?"));
    q.Bind(1, cluster);
    int64_t ack = 0;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      ack = q.Int(0);
      return absl::OkStatus();
    }));
    return ack;
  }

  absl::StatusOr<std::vector<ReplicationTaskRow>> LoadReplicationTasks(int32_t shard_id,
                                                                      int64_t after_task_id,
                                                                      int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT task_id, data FROM replication_tasks WHERE shard_id = ? "
                               "AND task_id > ? ORDER BY task_id LIMIT ?"));
    q.Bind(1, int64_t{shard_id}).Bind(2, after_task_id).Bind(3, int64_t{limit});
    std::vector<ReplicationTaskRow> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      ReplicationTaskRow& t = out.emplace_back();
      t.task_id = q.Int(0);
      const std::string_view bytes = q.BlobView(1);
      return t.task.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))
                 ? absl::OkStatus()
                 : absl::DataLossError("a stored replication task cannot be parsed");
    }));
    return out;
  }

  absl::StatusOr<int64_t> MaxReplicationTaskId(int32_t shard_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "SELECT COALESCE(MAX(task_id), 0) FROM replication_tasks WHERE shard_id = ?"));
    q.Bind(1, int64_t{shard_id});
    int64_t max = 0;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      max = q.Int(0);
      return absl::OkStatus();
    }));
    return max;
  }

  absl::Status AckReplication(const std::string& cluster, int32_t shard_id,
                              int64_t task_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "INSERT INTO replication_acks(cluster_name, shard_id, ack_task_id) "
                       "VALUES (?, ?, ?) ON CONFLICT(cluster_name, shard_id) DO UPDATE SET "
                       "ack_task_id = MAX(ack_task_id, excluded.ack_task_id)"));
    return q.Bind(1, cluster).Bind(2, int64_t{shard_id}).Bind(3, task_id).Run();
  }

  absl::StatusOr<int64_t> ReplicationAck(const std::string& cluster, int32_t shard_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT ack_task_id FROM replication_acks WHERE cluster_name = ? "
                               "AND shard_id = ?"));
    q.Bind(1, cluster).Bind(2, int64_t{shard_id});
    int64_t ack = 0;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      ack = q.Int(0);
      return absl::OkStatus();
    }));
    return ack;
  }

  absl::Status PutReplicationDlqTask(const ReplicationDlqTask& t) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "INSERT OR REPLACE INTO replication_dlq(source_cluster, source_shard, "
                       "task_id, namespace_id, workflow_id, run_id, first_event_id, "
                       "next_event_id, version, last_error, added_ms, kind, scheduled_event_id) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    return q.Bind(1, t.key.source_cluster)
        .Bind(2, int64_t{t.key.source_shard})
        .Bind(3, t.key.task_id)
        .Bind(4, t.namespace_id)
        .Bind(5, t.workflow_id)
        .Bind(6, t.run_id)
        .Bind(7, t.first_event_id)
        .Bind(8, t.next_event_id)
        .Bind(9, t.version)
        .Bind(10, t.last_error)
        .Bind(11, absl::ToUnixMillis(t.added))
        .Bind(12, int64_t{t.kind})
        .Bind(13, t.scheduled_event_id)
        .Run();
  }

  absl::StatusOr<std::vector<ReplicationDlqTask>> ReadReplicationDlq(
      const ReplicationDlqSelection& selection, const ReplicationDlqKey& after,
      int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare(
                       "SELECT source_cluster, source_shard, task_id, namespace_id, workflow_id, "
                       "run_id, first_event_id, next_event_id, version, last_error, added_ms, "
                       "kind, scheduled_event_id FROM replication_dlq WHERE (? = '' OR source_cluster = ?) AND "
                       "(? = 0 OR source_shard = ?) AND task_id <= ? AND "
                       "(source_cluster, source_shard, task_id) > (?, ?, ?) "
                       "ORDER BY source_cluster, source_shard, task_id LIMIT ?"));
    q.Bind(1, selection.source_cluster)
        .Bind(2, selection.source_cluster)
        .Bind(3, int64_t{selection.source_shard})
        .Bind(4, int64_t{selection.source_shard})
        .Bind(5, selection.max_task_id)
        .Bind(6, after.source_cluster)
        .Bind(7, int64_t{after.source_shard})
        .Bind(8, after.task_id)
        .Bind(9, int64_t{limit});
    std::vector<ReplicationDlqTask> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      ReplicationDlqTask& t = out.emplace_back();
      t.key.source_cluster = q.Text(0);
      t.key.source_shard = static_cast<int32_t>(q.Int(1));
      t.key.task_id = q.Int(2);
      t.namespace_id = q.Text(3);
      t.workflow_id = q.Text(4);
      t.run_id = q.Text(5);
      t.first_event_id = q.Int(6);
      t.next_event_id = q.Int(7);
      t.version = q.Int(8);
      t.last_error = q.Text(9);
      t.added = absl::FromUnixMillis(q.Int(10));
      t.kind = static_cast<tock::persistence::v1::ReplicationTask::Kind>(q.Int(11));
      t.scheduled_event_id = q.Int(12);
      return absl::OkStatus();
    }));
    return out;
  }

  absl::StatusOr<int64_t> PurgeReplicationDlq(const ReplicationDlqSelection& selection) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("DELETE FROM replication_dlq WHERE (? = '' OR source_cluster = ?) "
                               "AND (? = 0 OR source_shard = ?) AND task_id <= ?"));
    RETURN_IF_ERROR(q.Bind(1, selection.source_cluster)
                        .Bind(2, selection.source_cluster)
                        .Bind(3, int64_t{selection.source_shard})
                        .Bind(4, int64_t{selection.source_shard})
                        .Bind(5, selection.max_task_id)
                        .Run());
    return static_cast<int64_t>(db_.Changes());
  }

  absl::Status DeleteReplicationDlqTask(const ReplicationDlqKey& key) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("DELETE FROM replication_dlq WHERE source_cluster = ? AND "
                               "source_shard = ? AND task_id = ?"));
    return q.Bind(1, key.source_cluster)
        .Bind(2, int64_t{key.source_shard})
        .Bind(3, key.task_id)
        .Run();
  }

  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReplicationDlqWorkflows(
      const std::string& source_cluster, int32_t source_shard) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT DISTINCT namespace_id, workflow_id FROM replication_dlq "
                               "WHERE source_cluster = ? AND source_shard = ?"));
    q.Bind(1, source_cluster).Bind(2, int64_t{source_shard});
    std::vector<std::pair<std::string, std::string>> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      out.emplace_back(q.Text(0), q.Text(1));
      return absl::OkStatus();
    }));
    return out;
  }

  absl::StatusOr<std::map<int32_t, int64_t>> CountReplicationDlq(
      const std::string& source_cluster) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT source_shard, count(*) FROM replication_dlq "
                               "WHERE source_cluster = ? GROUP BY source_shard"));
    q.Bind(1, source_cluster);
    std::map<int32_t, int64_t> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      out[static_cast<int32_t>(q.Int(0))] = q.Int(1);
      return absl::OkStatus();
    }));
    return out;
  }

  absl::StatusOr<std::vector<std::pair<std::string, int32_t>>> ReplicationDlqShards(
      const ReplicationDlqSelection& selection) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT DISTINCT source_cluster, source_shard FROM replication_dlq "
                               "WHERE (? = '' OR source_cluster = ?) AND (? = 0 OR source_shard = ?) "
                               "AND task_id <= ? ORDER BY source_cluster, source_shard"));
    q.Bind(1, selection.source_cluster)
        .Bind(2, selection.source_cluster)
        .Bind(3, int64_t{selection.source_shard})
        .Bind(4, int64_t{selection.source_shard})
        .Bind(5, selection.max_task_id);
    std::vector<std::pair<std::string, int32_t>> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      out.emplace_back(q.Text(0), static_cast<int32_t>(q.Int(1)));
      return absl::OkStatus();
    }));
    return out;
  }

  absl::Status PutNamespaceDlqTask(const NamespaceDlqTask& t) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("INSERT OR REPLACE INTO namespace_replication_dlq(source_cluster, "
                               "task_id, operation, record, last_error, added_ms) "
                               "VALUES (?, ?, ?, ?, ?, ?)"));
    return q.Bind(1, t.source_cluster)
        .Bind(2, t.task_id)
        .Bind(3, t.operation)
        .BindBlob(4, t.record.SerializeAsString())
        .Bind(5, t.last_error)
        .Bind(6, absl::ToUnixMillis(t.added))
        .Run();
  }

  absl::StatusOr<std::vector<NamespaceDlqTask>> ReadNamespaceDlq(
      const ReplicationDlqSelection& selection, const std::string& after_cluster,
      int64_t after_task_id, int32_t limit) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT source_cluster, task_id, operation, record, last_error, "
                               "added_ms FROM namespace_replication_dlq WHERE (? = '' OR "
                               "source_cluster = ?) AND task_id <= ? AND (source_cluster, task_id) "
                               "> (?, ?) ORDER BY source_cluster, task_id LIMIT ?"));
    q.Bind(1, selection.source_cluster)
        .Bind(2, selection.source_cluster)
        .Bind(3, selection.max_task_id)
        .Bind(4, after_cluster)
        .Bind(5, after_task_id)
        .Bind(6, int64_t{limit});
    std::vector<NamespaceDlqTask> out;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      NamespaceDlqTask& t = out.emplace_back();
      t.source_cluster = q.Text(0);
      t.task_id = q.Int(1);
      t.operation = q.Text(2);
      const std::string_view bytes = q.BlobView(3);
      if (!t.record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        return absl::DataLossError("a namespace DLQ task cannot be parsed");
      }
      t.last_error = q.Text(4);
      t.added = absl::FromUnixMillis(q.Int(5));
      return absl::OkStatus();
    }));
    return out;
  }

  absl::StatusOr<int64_t> PurgeNamespaceDlq(const ReplicationDlqSelection& selection) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("DELETE FROM namespace_replication_dlq WHERE (? = '' OR "
                               "source_cluster = ?) AND task_id <= ?"));
    RETURN_IF_ERROR(q.Bind(1, selection.source_cluster)
                        .Bind(2, selection.source_cluster)
                        .Bind(3, selection.max_task_id)
                        .Run());
    return static_cast<int64_t>(db_.Changes());
  }

  absl::Status DeleteNamespaceDlqTask(const std::string& source_cluster, int64_t task_id) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("DELETE FROM namespace_replication_dlq WHERE source_cluster = ? "
                               "AND task_id = ?"));
    return q.Bind(1, source_cluster).Bind(2, task_id).Run();
  }

  absl::StatusOr<int64_t> CountNamespaceDlq(const std::string& source_cluster) override {
    std::lock_guard lock(db_.mutex());
    ASSIGN_STMT(q, db_.Prepare("SELECT count(*) FROM namespace_replication_dlq WHERE "
                               "source_cluster = ?"));
    q.Bind(1, source_cluster);
    int64_t count = 0;
    RETURN_IF_ERROR(q.ForEachRow([&] {
      count = q.Int(0);
      return absl::OkStatus();
    }));
    return count;
  }

 private:
  SqliteDb& db_;
};

}  // namespace

std::unique_ptr<ReplicationStore> NewSqliteReplicationStore(SqliteDb& db) {
  return std::make_unique<SqliteReplicationStore>(db);
}

}  // namespace tock::persistence
