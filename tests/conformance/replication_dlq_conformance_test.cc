// The replication DLQ of ReplicationStore (replication_store.h) on every backend: tasks kept
// by (source cluster, source shard, task id) with every field, stored again in place, read
// in key order by pages and selections, the workflows that have tasks there, counts per
// shard, deleted one by one (merge) or by selection (purge), and kept across a reopen; what
// a task was (history or an activity's state); the source shards of a selection; the
// namespace DLQ the same way.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "server-core/persistence/replication_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

ReplicationDlqTask Task(const std::string& cluster, int32_t shard, int64_t task_id,
                        const std::string& workflow_id) {
  ReplicationDlqTask t;
  t.key = {cluster, shard, task_id};
  t.namespace_id = "ns-1";
  t.workflow_id = workflow_id;
  t.run_id = "run-" + workflow_id;
  t.first_event_id = task_id * 10;
  t.next_event_id = task_id * 10 + 3;
  t.version = 2;
  t.last_error = "apply failed: " + std::to_string(task_id);
  t.added = absl::FromUnixMillis(1'700'000'000'000 + task_id);
  return t;
}

std::vector<int64_t> Ids(const std::vector<ReplicationDlqTask>& tasks) {
  std::vector<int64_t> ids;
  for (const ReplicationDlqTask& t : tasks) ids.push_back(t.key.task_id);
  return ids;
}

class ReplicationDlqTest : public BackendTest {};

TEST_P(ReplicationDlqTest, TasksAreKeptWithEveryFieldAndStoredAgainInPlace) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ReplicationStore& store = p->replication();
  ReplicationDlqTask t = Task("a", 1, 7, "w");
  ASSERT_TRUE(store.PutReplicationDlqTask(t).ok());
  t.last_error = "failed again";
  ASSERT_TRUE(store.PutReplicationDlqTask(t).ok()) << "the same key stored again";

  auto read = store.ReadReplicationDlq({}, {}, 10);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  const ReplicationDlqTask& got = read->front();
  EXPECT_EQ(got.key.source_cluster, "a");
  EXPECT_EQ(got.key.source_shard, 1);
  EXPECT_EQ(got.key.task_id, 7);
  EXPECT_EQ(got.namespace_id, "ns-1");
  EXPECT_EQ(got.workflow_id, "w");
  EXPECT_EQ(got.run_id, "run-w");
  EXPECT_EQ(got.first_event_id, 70);
  EXPECT_EQ(got.next_event_id, 73);
  EXPECT_EQ(got.version, 2);
  EXPECT_EQ(got.last_error, "failed again");
  EXPECT_EQ(got.added, absl::FromUnixMillis(1'700'000'000'007));
}

TEST_P(ReplicationDlqTest, ReadsAreInKeyOrderByPagesAndSelections) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ReplicationStore& store = p->replication();
  // Stored out of order, over two clusters and two shards.
  for (const ReplicationDlqTask& t : {Task("b", 1, 4, "x"), Task("a", 2, 3, "y"), Task("a", 1, 9, "w"),
                                      Task("a", 1, 5, "w"), Task("a", 2, 1, "y")}) {
    ASSERT_TRUE(store.PutReplicationDlqTask(t).ok());
  }
  auto all = store.ReadReplicationDlq({}, {}, 100);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 5u);
  EXPECT_EQ((*all)[0].key.source_cluster, "a");
  EXPECT_EQ(Ids(*all), (std::vector<int64_t>{5, 9, 1, 3, 4})) << "cluster, shard, then task id";

  // Pages of two, each after the last key of the one before.
  std::vector<int64_t> paged;
  ReplicationDlqKey after;
  for (int page = 0; page < 10; ++page) {
    auto got = store.ReadReplicationDlq({}, after, 2);
    ASSERT_TRUE(got.ok()) << got.status();
    if (got->empty()) break;
    for (const ReplicationDlqTask& t : *got) paged.push_back(t.key.task_id);
    after = got->back().key;
  }
  EXPECT_EQ(paged, (std::vector<int64_t>{5, 9, 1, 3, 4}));

  auto of_a = store.ReadReplicationDlq({.source_cluster = "a"}, {}, 100);
  ASSERT_TRUE(of_a.ok());
  EXPECT_EQ(Ids(*of_a), (std::vector<int64_t>{5, 9, 1, 3}));
  auto shard_2 = store.ReadReplicationDlq({.source_cluster = "a", .source_shard = 2}, {}, 100);
  ASSERT_TRUE(shard_2.ok());
  EXPECT_EQ(Ids(*shard_2), (std::vector<int64_t>{1, 3}));
  auto up_to_4 = store.ReadReplicationDlq({.source_cluster = "a", .max_task_id = 4}, {}, 100);
  ASSERT_TRUE(up_to_4.ok());
  EXPECT_EQ(Ids(*up_to_4), (std::vector<int64_t>{1, 3})) << "task ids up to 4, every shard";
  auto none = store.ReadReplicationDlq({.source_cluster = "c"}, {}, 100);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(ReplicationDlqTest, WorkflowsAndCountsArePerSourceShard) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ReplicationStore& store = p->replication();
  for (const ReplicationDlqTask& t : {Task("a", 1, 1, "w"), Task("a", 1, 2, "w"), Task("a", 1, 3, "v"),
                                      Task("a", 2, 1, "z"), Task("b", 1, 1, "q")}) {
    ASSERT_TRUE(store.PutReplicationDlqTask(t).ok());
  }
  auto workflows = store.ReplicationDlqWorkflows("a", 1);
  ASSERT_TRUE(workflows.ok()) << workflows.status();
  std::sort(workflows->begin(), workflows->end());
  EXPECT_EQ(*workflows, (std::vector<std::pair<std::string, std::string>>{{"ns-1", "v"}, {"ns-1", "w"}}))
      << "each workflow once";
  auto empty = store.ReplicationDlqWorkflows("a", 3);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());

  auto counts = store.CountReplicationDlq("a");
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(*counts, (std::map<int32_t, int64_t>{{1, 3}, {2, 1}}));
  auto none = store.CountReplicationDlq("c");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(ReplicationDlqTest, TasksAreDeletedOneByOneOrBySelection) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ReplicationStore& store = p->replication();
  for (const ReplicationDlqTask& t : {Task("a", 1, 1, "w"), Task("a", 1, 2, "w"), Task("a", 1, 3, "w"),
                                      Task("a", 2, 1, "z"), Task("b", 1, 1, "q")}) {
    ASSERT_TRUE(store.PutReplicationDlqTask(t).ok());
  }
  ASSERT_TRUE(store.DeleteReplicationDlqTask({"a", 1, 2}).ok());
  ASSERT_TRUE(store.DeleteReplicationDlqTask({"a", 1, 2}).ok()) << "gone already is fine";
  auto left = store.ReadReplicationDlq({.source_cluster = "a", .source_shard = 1}, {}, 100);
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(Ids(*left), (std::vector<int64_t>{1, 3}));

  auto purged = store.PurgeReplicationDlq({.source_cluster = "a", .source_shard = 1, .max_task_id = 1});
  ASSERT_TRUE(purged.ok()) << purged.status();
  EXPECT_EQ(*purged, 1);
  purged = store.PurgeReplicationDlq({.source_cluster = "a"});
  ASSERT_TRUE(purged.ok());
  EXPECT_EQ(*purged, 2) << "task 3 of shard 1 and task 1 of shard 2";
  purged = store.PurgeReplicationDlq({.source_cluster = "a"});
  ASSERT_TRUE(purged.ok());
  EXPECT_EQ(*purged, 0);
  auto rest = store.ReadReplicationDlq({}, {}, 100);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ(rest->front().key.source_cluster, "b") << "another cluster's tasks stay";
}

TEST_P(ReplicationDlqTest, TasksOutliveAReopen) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database does not outlive its connection";
  {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(p->replication().PutReplicationDlqTask(Task("a", 1, 4, "w")).ok());
  }
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto read = p->replication().ReadReplicationDlq({}, {}, 10);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ(read->front().workflow_id, "w");
}

TEST_P(ReplicationDlqTest, ASyncActivityTaskKeepsItsKindAndActivity) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ReplicationStore& store = p->replication();
  ReplicationDlqTask activity = Task("a", 1, 8, "w");
  activity.kind = tock::persistence::v1::ReplicationTask::KIND_SYNC_ACTIVITY;
  activity.first_event_id = 0;
  activity.next_event_id = 0;
  activity.scheduled_event_id = 5;
  activity.version = 11;
  ASSERT_TRUE(store.PutReplicationDlqTask(Task("a", 1, 7, "w")).ok());
  ASSERT_TRUE(store.PutReplicationDlqTask(activity).ok());
  auto read = store.ReadReplicationDlq({}, {}, 10);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].kind, tock::persistence::v1::ReplicationTask::KIND_HISTORY);
  EXPECT_EQ((*read)[0].scheduled_event_id, 0);
  const ReplicationDlqTask& got = (*read)[1];
  EXPECT_EQ(got.kind, tock::persistence::v1::ReplicationTask::KIND_SYNC_ACTIVITY);
  EXPECT_EQ(got.scheduled_event_id, 5);
  EXPECT_EQ(got.version, 11);
  EXPECT_EQ(got.first_event_id, 0);

  // Stored again as a history task (the same key): every field replaced.
  ASSERT_TRUE(store.PutReplicationDlqTask(Task("a", 1, 8, "w")).ok());
  read = store.ReadReplicationDlq({}, {}, 10);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ((*read)[1].kind, tock::persistence::v1::ReplicationTask::KIND_HISTORY);
  EXPECT_EQ((*read)[1].scheduled_event_id, 0);
}

TEST_P(ReplicationDlqTest, ShardsOfASelectionAreListedOnceInOrder) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ReplicationStore& store = p->replication();
  for (const ReplicationDlqTask& t : {Task("b", 1, 4, "x"), Task("a", 2, 3, "y"), Task("a", 1, 9, "w"),
                                      Task("a", 1, 5, "w"), Task("a", 2, 1, "y")}) {
    ASSERT_TRUE(store.PutReplicationDlqTask(t).ok());
  }
  using Shards = std::vector<std::pair<std::string, int32_t>>;
  auto all = store.ReplicationDlqShards({});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, (Shards{{"a", 1}, {"a", 2}, {"b", 1}}));
  auto of_a = store.ReplicationDlqShards({.source_cluster = "a", .max_task_id = 4});
  ASSERT_TRUE(of_a.ok());
  EXPECT_EQ(*of_a, (Shards{{"a", 2}})) << "shard 1 of a has only tasks above 4";
  auto one = store.ReplicationDlqShards({.source_cluster = "b", .source_shard = 1});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, (Shards{{"b", 1}}));
  auto none = store.ReplicationDlqShards({.source_cluster = "c"});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

NamespaceDlqTask NamespaceTask(const std::string& cluster, int64_t task_id, const std::string& name) {
  NamespaceDlqTask t;
  t.source_cluster = cluster;
  t.task_id = task_id;
  t.operation = "update";
  t.record.mutable_info()->set_name(name);
  t.record.mutable_info()->set_id("id-" + name);
  t.record.set_config_version(task_id);
  t.record.set_failover_version(11);
  t.last_error = "apply failed: " + std::to_string(task_id);
  t.added = absl::FromUnixMillis(1'700'000'000'000 + task_id);
  return t;
}

std::vector<int64_t> NamespaceIds(const std::vector<NamespaceDlqTask>& tasks) {
  std::vector<int64_t> ids;
  for (const NamespaceDlqTask& t : tasks) ids.push_back(t.task_id);
  return ids;
}

TEST_P(ReplicationDlqTest, NamespaceTasksAreKeptReadPagedCountedAndDeleted) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ReplicationStore& store = p->replication();
  for (const NamespaceDlqTask& t : {NamespaceTask("b", 2, "x"), NamespaceTask("a", 9, "y"),
                                    NamespaceTask("a", 3, "y"), NamespaceTask("a", 5, "z")}) {
    ASSERT_TRUE(store.PutNamespaceDlqTask(t).ok());
  }
  NamespaceDlqTask again = NamespaceTask("a", 3, "y");
  again.last_error = "failed again";
  ASSERT_TRUE(store.PutNamespaceDlqTask(again).ok()) << "the same key stored again";

  auto all = store.ReadNamespaceDlq({}, "", 0, 100);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(NamespaceIds(*all), (std::vector<int64_t>{3, 5, 9, 2})) << "cluster, then task id";
  const NamespaceDlqTask& got = all->front();
  EXPECT_EQ(got.source_cluster, "a");
  EXPECT_EQ(got.operation, "update");
  EXPECT_EQ(got.record.info().name(), "y");
  EXPECT_EQ(got.record.info().id(), "id-y");
  EXPECT_EQ(got.record.config_version(), 3);
  EXPECT_EQ(got.record.failover_version(), 11);
  EXPECT_EQ(got.last_error, "failed again");
  EXPECT_EQ(got.added, absl::FromUnixMillis(1'700'000'000'003));

  std::vector<int64_t> paged;
  std::string after_cluster;
  int64_t after_id = 0;
  for (int page = 0; page < 10; ++page) {
    auto read = store.ReadNamespaceDlq({}, after_cluster, after_id, 3);
    ASSERT_TRUE(read.ok()) << read.status();
    if (read->empty()) break;
    for (const NamespaceDlqTask& t : *read) paged.push_back(t.task_id);
    after_cluster = read->back().source_cluster;
    after_id = read->back().task_id;
  }
  EXPECT_EQ(paged, (std::vector<int64_t>{3, 5, 9, 2}));
  auto up_to_5 = store.ReadNamespaceDlq({.source_cluster = "a", .max_task_id = 5}, "", 0, 100);
  ASSERT_TRUE(up_to_5.ok());
  EXPECT_EQ(NamespaceIds(*up_to_5), (std::vector<int64_t>{3, 5}));

  auto count = store.CountNamespaceDlq("a");
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 3);
  count = store.CountNamespaceDlq("c");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 0);

  ASSERT_TRUE(store.DeleteNamespaceDlqTask("a", 5).ok());
  ASSERT_TRUE(store.DeleteNamespaceDlqTask("a", 5).ok()) << "gone already is fine";
  auto purged = store.PurgeNamespaceDlq({.source_cluster = "a", .max_task_id = 3});
  ASSERT_TRUE(purged.ok()) << purged.status();
  EXPECT_EQ(*purged, 1);
  purged = store.PurgeNamespaceDlq({.source_cluster = "a"});
  ASSERT_TRUE(purged.ok());
  EXPECT_EQ(*purged, 1);
  auto rest = store.ReadNamespaceDlq({}, "", 0, 100);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ(rest->front().source_cluster, "b") << "another cluster's tasks stay";
  // The history DLQ is another queue.
  auto history = store.ReadReplicationDlq({}, {}, 100);
  ASSERT_TRUE(history.ok());
  EXPECT_TRUE(history->empty());
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(ReplicationDlqTest);

}  // namespace
}  // namespace tock::persistence
