// The ReplicationStore contract (replication_store.h) on every backend: remote clusters
// saved by compare-and-swap on their version and deleted; the namespace replication queue
// filled by the namespace store in the same transaction as the version it names (global
// namespaces of several clusters changed here, not replicated ones), read in order after a
// cursor, with ack levels that only move forward.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server-core/persistence/replication_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

RemoteClusterRecord Remote(const std::string& name, const std::string& address) {
  RemoteClusterRecord r;
  r.set_name(name);
  r.set_cluster_id("id-" + name);
  r.set_address(address);
  r.set_history_shard_count(4);
  r.set_initial_failover_version(2);
  r.set_failover_version_increment(10);
  r.set_global_namespace_enabled(true);
  r.set_connection_enabled(true);
  return r;
}

NamespaceRecord Namespace(const std::string& id, const std::string& name, bool global,
                          std::vector<std::string> clusters) {
  NamespaceRecord r;
  r.mutable_info()->set_id(id);
  r.mutable_info()->set_name(name);
  r.mutable_info()->set_state(temporal::api::enums::v1::NAMESPACE_STATE_REGISTERED);
  r.set_is_global_namespace(global);
  r.mutable_replication_config()->set_active_cluster_name(clusters.front());
  for (const std::string& c : clusters) r.mutable_replication_config()->add_clusters()->set_cluster_name(c);
  r.set_failover_version(global ? 1 : 0);
  return r;
}

class ReplicationStoreTest : public BackendTest {};

TEST_P(ReplicationStoreTest, RemoteClustersAreSavedByCompareAndSwap) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ReplicationStore& store = p->replication();
  ASSERT_TRUE(store.SaveRemoteCluster(Remote("b", "127.0.0.1:2"), 0).ok());
  ASSERT_TRUE(store.SaveRemoteCluster(Remote("c", "127.0.0.1:3"), 0).ok());
  EXPECT_EQ(store.SaveRemoteCluster(Remote("b", "127.0.0.1:9"), 0).code(), absl::StatusCode::kAborted)
      << "an insert over an existing name";
  ASSERT_TRUE(store.SaveRemoteCluster(Remote("b", "127.0.0.1:4"), 1).ok());
  EXPECT_EQ(store.SaveRemoteCluster(Remote("b", "127.0.0.1:5"), 1).code(), absl::StatusCode::kAborted)
      << "a writer that read version 1 too";
  EXPECT_EQ(store.SaveRemoteCluster(Remote("z", "127.0.0.1:5"), 3).code(), absl::StatusCode::kAborted)
      << "a replace of a name never saved";

  auto listed = store.ListRemoteClusters();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].record.name(), "b");
  EXPECT_EQ((*listed)[0].version, 2);
  EXPECT_EQ((*listed)[0].record.address(), "127.0.0.1:4");
  EXPECT_EQ((*listed)[0].record.cluster_id(), "id-b");
  EXPECT_EQ((*listed)[1].record.name(), "c");
  EXPECT_EQ((*listed)[1].version, 1);

  ASSERT_TRUE(store.DeleteRemoteCluster("b").ok());
  EXPECT_EQ(store.DeleteRemoteCluster("b").code(), absl::StatusCode::kNotFound);
  listed = store.ListRemoteClusters();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].record.name(), "c");
}

TEST_P(ReplicationStoreTest, NamespaceChangesToReplicateAreQueuedWithTheirVersion) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  NamespaceStore& namespaces = p->namespaces();
  ReplicationStore& store = p->replication();
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  auto max = store.MaxNamespaceReplicationTaskId();
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(*max, 0);

  // Not queued: local, global of one cluster, and one created by replication.
  ASSERT_TRUE(namespaces.CreateNamespace(Namespace("id-local", "local", false, {"a"}), now).ok());
  ASSERT_TRUE(namespaces.CreateNamespace(Namespace("id-one", "one", true, {"a"}), now).ok());
  ASSERT_TRUE(namespaces
                  .CreateNamespace(Namespace("id-copy", "copy", true, {"b", "a"}), now,
                                   std::string(kReplicatedOperationPrefix) + "register")
                  .ok());
  // Queued: a global namespace of two clusters, registered then updated.
  NamespaceRecord global = Namespace("id-g", "g", true, {"a", "b"});
  ASSERT_TRUE(namespaces.CreateNamespace(global, now).ok());
  global.mutable_info()->set_description("second");
  ASSERT_TRUE(namespaces.AppendNamespaceVersion(global, 1, "update", now).ok());
  // A replicated change of it is not queued again.
  global.mutable_info()->set_description("third, from b");
  ASSERT_TRUE(namespaces
                  .AppendNamespaceVersion(global, 2, std::string(kReplicatedOperationPrefix) + "update", now)
                  .ok());

  auto tasks = store.ReadNamespaceReplicationTasks(0, 100);
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_LT((*tasks)[0].task_id, (*tasks)[1].task_id);
  EXPECT_EQ((*tasks)[0].version.version, 1);
  EXPECT_EQ((*tasks)[0].version.operation, "register");
  EXPECT_EQ((*tasks)[0].version.record.info().name(), "g");
  EXPECT_EQ((*tasks)[1].version.version, 2);
  EXPECT_EQ((*tasks)[1].version.operation, "update");
  EXPECT_EQ((*tasks)[1].version.record.info().description(), "second");

  auto after_first = store.ReadNamespaceReplicationTasks((*tasks)[0].task_id, 100);
  ASSERT_TRUE(after_first.ok());
  ASSERT_EQ(after_first->size(), 1u);
  EXPECT_EQ((*after_first)[0].task_id, (*tasks)[1].task_id);
  auto limited = store.ReadNamespaceReplicationTasks(0, 1);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 1u);
  max = store.MaxNamespaceReplicationTaskId();
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(*max, (*tasks)[1].task_id);

  // A refused append queues nothing.
  global.mutable_info()->set_description("lost the race");
  EXPECT_EQ(namespaces.AppendNamespaceVersion(global, 1, "update", now).status().code(),
            absl::StatusCode::kAborted);
  max = store.MaxNamespaceReplicationTaskId();
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(*max, (*tasks)[1].task_id);
}

TEST_P(ReplicationStoreTest, AckLevelsOnlyMoveForward) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ReplicationStore& store = p->replication();
  auto ack = store.NamespaceReplicationAck("b");
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(*ack, 0);
  ASSERT_TRUE(store.AckNamespaceReplication("b", 7).ok());
  ASSERT_TRUE(store.AckNamespaceReplication("b", 3).ok()) << "a late, older ack is fine";
  ASSERT_TRUE(store.AckNamespaceReplication("c", 1).ok());
  ack = store.NamespaceReplicationAck("b");
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(*ack, 7);
  ack = store.NamespaceReplicationAck("c");
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(*ack, 1);
}

ReplicationTaskRow HistoryTask(const std::string& run_id, int64_t first, int64_t next) {
  ReplicationTaskRow row;
  row.task.set_namespace_id("ns");
  row.task.set_workflow_id("wf-" + run_id);
  row.task.set_run_id(run_id);
  row.task.set_first_event_id(first);
  row.task.set_next_event_id(next);
  row.task.set_version(1);
  return row;
}

TEST_P(ReplicationStoreTest, ShardReplicationQueuesAreWrittenByCommitsAndReadInOrder) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ExecutionStore& executions = p->executions();
  ReplicationStore& store = p->replication();
  auto range1 = executions.AcquireShard(1, "host");
  auto range2 = executions.AcquireShard(2, "host");
  ASSERT_TRUE(range1.ok() && range2.ok());
  Commit first;
  first.shard_id = 1;
  first.range_id = *range1;
  first.new_replication_tasks = {HistoryTask("r1", 1, 3), HistoryTask("r2", 1, 2)};
  ASSERT_TRUE(executions.Write(first).ok());
  EXPECT_GT(first.new_replication_tasks[0].task_id, 0);
  EXPECT_LT(first.new_replication_tasks[0].task_id, first.new_replication_tasks[1].task_id);
  Commit other_shard;
  other_shard.shard_id = 2;
  other_shard.range_id = *range2;
  other_shard.new_replication_tasks = {HistoryTask("r3", 1, 5)};
  ASSERT_TRUE(executions.Write(other_shard).ok());
  Commit second;
  second.shard_id = 1;
  second.range_id = *range1;
  second.new_replication_tasks = {HistoryTask("r1", 3, 7)};
  ASSERT_TRUE(executions.Write(second).ok());
  // A fenced-out commit queues nothing.
  Commit stale;
  stale.shard_id = 1;
  stale.range_id = *range1 - 1;
  stale.new_replication_tasks = {HistoryTask("lost", 1, 2)};
  EXPECT_EQ(executions.Write(stale).code(), absl::StatusCode::kFailedPrecondition);

  auto tasks = store.LoadReplicationTasks(1, 0, 10);
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 3u);
  EXPECT_EQ((*tasks)[0].task.run_id(), "r1");
  EXPECT_EQ((*tasks)[0].task.next_event_id(), 3);
  EXPECT_EQ((*tasks)[1].task.run_id(), "r2");
  EXPECT_EQ((*tasks)[2].task.first_event_id(), 3);
  EXPECT_LT((*tasks)[1].task_id, (*tasks)[2].task_id);
  auto after = store.LoadReplicationTasks(1, (*tasks)[0].task_id, 1);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ((*after)[0].task_id, (*tasks)[1].task_id);
  auto shard2 = store.LoadReplicationTasks(2, 0, 10);
  ASSERT_TRUE(shard2.ok());
  ASSERT_EQ(shard2->size(), 1u);
  EXPECT_EQ((*shard2)[0].task.run_id(), "r3");
  auto max = store.MaxReplicationTaskId(1);
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(*max, (*tasks)[2].task_id);
  max = store.MaxReplicationTaskId(3);
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(*max, 0);

  ASSERT_TRUE(store.AckReplication("b", 1, (*tasks)[1].task_id).ok());
  ASSERT_TRUE(store.AckReplication("b", 1, (*tasks)[0].task_id).ok()) << "older, ignored";
  ASSERT_TRUE(store.AckReplication("b", 2, 1).ok());
  auto ack = store.ReplicationAck("b", 1);
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(*ack, (*tasks)[1].task_id);
  ack = store.ReplicationAck("c", 1);
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(*ack, 0);
}

TEST_P(ReplicationStoreTest, EverythingOutlivesAReopen) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database does not outlive its connection";
  {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(p->replication().SaveRemoteCluster(Remote("b", "127.0.0.1:2"), 0).ok());
    ASSERT_TRUE(p->replication().AckNamespaceReplication("b", 4).ok());
    ASSERT_TRUE(p->namespaces()
                    .CreateNamespace(Namespace("id-g", "g", true, {"a", "b"}), absl::Now())
                    .ok());
  }
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto listed = p->replication().ListRemoteClusters();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].record.address(), "127.0.0.1:2");
  auto ack = p->replication().NamespaceReplicationAck("b");
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(*ack, 4);
  auto tasks = p->replication().ReadNamespaceReplicationTasks(0, 10);
  ASSERT_TRUE(tasks.ok());
  EXPECT_EQ(tasks->size(), 1u);
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(ReplicationStoreTest);

}  // namespace
}  // namespace tock::persistence
