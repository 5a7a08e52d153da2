// The ExecutionStore contract (execution_store.h) on every backend, for what a commit
// queues: task-queue tasks (ids assigned in increasing order, removed by done_task_ids,
// reloaded oldest first) and durable timers (ids assigned when left at 0, paged by the
// (fire time, task id) cursor and `until`, removed exactly by done_timers).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "server-core/persistence/execution_store.h"
#include "tests/conformance/execution_fixture.h"

namespace tock::persistence::conformance {
namespace {

using Code = absl::StatusCode;
using Keys_ = std::vector<std::pair<int64_t, int64_t>>;

class ExecutionQueuesTest : public ExecutionStoreFixture {};

TEST_P(ExecutionQueuesTest, TaskIdsIncreaseAndTasksReloadOldestFirst) {
  Commit first = NewCommit();
  first.new_tasks = {Task("q-a", "run-1", 2), Task("q-b", "run-2", 5, TaskKind::kActivity),
                     Task("q-a", "run-3", 8, TaskKind::kTransfer)};
  ASSERT_TRUE(store().Write(first).ok());
  Commit second = NewCommit();
  second.new_tasks = {Task("q-c", "run-4", 11), Task("q-a", "run-5", 14)};
  ASSERT_TRUE(store().Write(second).ok());

  std::vector<TaskQueueTask> written = first.new_tasks;
  written.insert(written.end(), second.new_tasks.begin(), second.new_tasks.end());
  for (size_t i = 1; i < written.size(); ++i) {
    EXPECT_GT(written[i].task_id, written[i - 1].task_id) << i;
  }
  EXPECT_GT(written[0].task_id, 0);

  absl::StatusOr<std::vector<TaskQueueTask>> loaded = store().LoadTaskQueueTasks();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    SCOPED_TRACE(i);
    const TaskQueueTask& got = (*loaded)[i];
    EXPECT_EQ(got.task_id, written[i].task_id);
    EXPECT_EQ(got.namespace_id, written[i].namespace_id);
    EXPECT_EQ(got.task_queue, written[i].task_queue);
    EXPECT_EQ(got.kind, written[i].kind);
    EXPECT_EQ(got.task.SerializeAsString(), written[i].task.SerializeAsString());
  }
}

// Ids go on increasing when the database is opened again (SQLite hands them out from blocks
// reserved ahead: a new process starts past the last block, not at a reused id).
TEST_P(ExecutionQueuesTest, TaskAndTimerIdsGoOnIncreasingAfterAReopen) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database is gone once closed";
  Commit before = NewCommit();
  before.new_tasks = {Task("q", "run-1", 2), Task("q", "run-2", 5, TaskKind::kTransfer)};
  before.new_timers = {Timer(1, 100, 0)};
  ASSERT_TRUE(store().Write(before).ok());
  // The last task is done: its id must not come back.
  Commit done = NewCommit();
  done.done_task_ids = {before.new_tasks[1].task_id};
  ASSERT_TRUE(store().Write(done).ok());
  p_.reset();
  p_ = Open();
  ASSERT_NE(p_, nullptr);
  absl::StatusOr<int64_t> range = store().AcquireShard(1, "test-owner");
  ASSERT_TRUE(range.ok()) << range.status();
  range_id_ = *range;
  Commit after = NewCommit();
  after.new_tasks = {Task("q", "run-3", 8)};
  after.new_timers = {Timer(1, 100, 0)};
  ASSERT_TRUE(store().Write(after).ok());
  const int64_t highest = std::max(before.new_tasks[1].task_id, before.new_timers[0].task_id);
  EXPECT_GT(after.new_tasks[0].task_id, highest);
  EXPECT_GT(after.new_timers[0].task_id, highest);
}

TEST_P(ExecutionQueuesTest, DoneTaskIdsRemoveExactlyThoseTasks) {
  Commit c = NewCommit();
  for (int i = 0; i < 6; ++i) c.new_tasks.push_back(Task("q", absl::StrCat("run-", i), i));
  ASSERT_TRUE(store().Write(c).ok());
  std::vector<int64_t> ids;
  for (const TaskQueueTask& t : c.new_tasks) ids.push_back(t.task_id);

  // Consuming tasks and adding one in the same commit (a task completes, the next is queued).
  Commit done = NewCommit();
  done.done_task_ids = {ids[1], ids[4], ids[5] + 1'000'000};  // an unknown id is ignored
  done.new_tasks = {Task("q", "run-next", 9)};
  ASSERT_TRUE(store().Write(done).ok());
  EXPECT_GT(done.new_tasks[0].task_id, ids[5]);
  EXPECT_EQ(TaskIds(),
            (std::vector<int64_t>{ids[0], ids[2], ids[3], ids[5], done.new_tasks[0].task_id}));

  // Ids are not reused once their tasks are gone.
  Commit all = NewCommit();
  all.done_task_ids = TaskIds();
  ASSERT_TRUE(store().Write(all).ok());
  EXPECT_TRUE(TaskIds().empty());
  Commit again = NewCommit();
  again.new_tasks = {Task("q", "run-later", 1)};
  ASSERT_TRUE(store().Write(again).ok());
  EXPECT_GT(again.new_tasks[0].task_id, done.new_tasks[0].task_id);
}

std::vector<int64_t> IdsOf(const absl::StatusOr<std::vector<TaskQueueTask>>& tasks) {
  EXPECT_TRUE(tasks.ok()) << tasks.status();
  std::vector<int64_t> ids;
  if (tasks.ok()) {
    for (const TaskQueueTask& t : *tasks) ids.push_back(t.task_id);
  }
  return ids;
}

TEST_P(ExecutionQueuesTest, QueueTasksAreThoseOfOneQueueOldestFirstUpToTheLimit) {
  // Queue q-a's workflow tasks among its activity tasks, another queue's, another
  // namespace's queue of the same name, and a transfer task.
  Commit c = NewCommit();
  c.new_tasks = {Task("q-a", "run-1", 1), Task("q-a", "run-2", 2, TaskKind::kActivity),
                 Task("q-b", "run-3", 3), Task("q-a", "run-4", 4),
                 Task("q-a", "run-5", 5, TaskKind::kTransfer), Task("q-a", "run-6", 6)};
  TaskQueueTask elsewhere = Task("q-a", "run-7", 7);
  elsewhere.namespace_id = "ns-2";
  c.new_tasks.push_back(elsewhere);
  ASSERT_TRUE(store().Write(c).ok());
  Commit later = NewCommit();
  later.new_tasks = {Task("q-a", "run-8", 8)};
  ASSERT_TRUE(store().Write(later).ok());
  const auto id = [&](int i) { return c.new_tasks[i].task_id; };

  absl::StatusOr<std::vector<TaskQueueTask>> all =
      store().LoadQueueTasks("ns", "q-a", TaskKind::kWorkflow, 100);
  EXPECT_EQ(IdsOf(all), (std::vector<int64_t>{id(0), id(3), id(5), later.new_tasks[0].task_id}));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[1].namespace_id, "ns");
  EXPECT_EQ((*all)[1].task_queue, "q-a");
  EXPECT_EQ((*all)[1].kind, TaskKind::kWorkflow);
  EXPECT_EQ((*all)[1].task.SerializeAsString(), c.new_tasks[3].task.SerializeAsString());

  EXPECT_EQ(IdsOf(store().LoadQueueTasks("ns", "q-a", TaskKind::kWorkflow, 2)),
            (std::vector<int64_t>{id(0), id(3)}));
  EXPECT_EQ(IdsOf(store().LoadQueueTasks("ns", "q-a", TaskKind::kActivity, 100)),
            (std::vector<int64_t>{id(1)}));
  EXPECT_EQ(IdsOf(store().LoadQueueTasks("ns-2", "q-a", TaskKind::kWorkflow, 100)),
            (std::vector<int64_t>{id(6)}));
  EXPECT_TRUE(IdsOf(store().LoadQueueTasks("ns", "q-c", TaskKind::kWorkflow, 100)).empty());

  // A consumed task is gone; the page moves on to the next oldest.
  Commit done = NewCommit();
  done.done_task_ids = {id(0)};
  ASSERT_TRUE(store().Write(done).ok());
  EXPECT_EQ(IdsOf(store().LoadQueueTasks("ns", "q-a", TaskKind::kWorkflow, 2)),
            (std::vector<int64_t>{id(3), id(5)}));
}

// A host's partition of a queue reads the tasks of its own shards (ExecutionStore::ShardSet):
// those the commits of the named shards wrote, in order, up to the limit.
TEST_P(ExecutionQueuesTest, QueueTasksOfSomeShardsAreThoseTheirCommitsWrote) {
  std::map<int32_t, int64_t> ranges{{1, range_id_}};
  for (int32_t shard : {2, 3}) {
    absl::StatusOr<int64_t> range = store().AcquireShard(shard, "test-owner");
    ASSERT_TRUE(range.ok()) << range.status();
    ranges[shard] = *range;
  }
  std::map<int32_t, std::vector<int64_t>> ids;  // by shard, in order
  for (int round = 0; round < 2; ++round) {
    for (int32_t shard : {1, 2, 3}) {
      Commit c = NewCommit();
      c.shard_id = shard;
      c.range_id = ranges[shard];
      c.new_tasks = {Task("q", "run", round), Task("other", "run", round)};
      ASSERT_TRUE(store().Write(c).ok());
      ids[shard].push_back(c.new_tasks[0].task_id);
    }
  }
  using Only = ExecutionStore::ShardSet;
  auto load = [&](std::vector<int32_t> shards, int32_t limit = 100) {
    return IdsOf(store().LoadQueueTasks("ns", "q", TaskKind::kWorkflow, limit,
                                        Only{std::move(shards), false}));
  };
  EXPECT_EQ(load({2}), ids[2]);
  EXPECT_EQ(load({1, 3}), (std::vector<int64_t>{ids[1][0], ids[3][0], ids[1][1], ids[3][1]}));
  EXPECT_EQ(load({1, 3}, 3), (std::vector<int64_t>{ids[1][0], ids[3][0], ids[1][1]}));
  EXPECT_TRUE(load({}).empty());
  EXPECT_EQ(IdsOf(store().LoadQueueTasks("ns", "q", TaskKind::kWorkflow, 100)).size(), 6u)
      << "no set: every shard's";

  // The queues with tasks of some shards: shard 2 alone also has an activity queue.
  {
    Commit c = NewCommit();
    c.shard_id = 2;
    c.range_id = ranges[2];
    c.new_tasks = {Task("acts", "run", 9, TaskKind::kActivity),
                   Task("", "run", 10, TaskKind::kTransfer)};
    ASSERT_TRUE(store().Write(c).ok());
  }
  auto queues = [&](std::vector<int32_t> shards) {
    absl::StatusOr<std::vector<ExecutionStore::QueueName>> listed =
        store().ListQueuesWithTasks(Only{std::move(shards), false}, 100);
    std::set<std::string> out;
    if (!listed.ok()) return std::set<std::string>{listed.status().ToString()};
    for (const auto& q : *listed) {
      out.insert(absl::StrCat(q.namespace_id, "/", q.task_queue, "/", static_cast<int>(q.kind)));
    }
    return out;
  };
  EXPECT_EQ(queues({2}), (std::set<std::string>{"ns/q/1", "ns/other/1", "ns/acts/2"}))
      << "no transfer tasks (history's own work) among them";
  EXPECT_EQ(queues({1, 3}), (std::set<std::string>{"ns/q/1", "ns/other/1"}));
  EXPECT_TRUE(queues({4}).empty());
  absl::StatusOr<std::vector<ExecutionStore::QueueName>> one =
      store().ListQueuesWithTasks(Only{{1, 2, 3}, false}, 1);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->size(), 1u) << "at most the limit";
}

TEST_P(ExecutionQueuesTest, TransferTasksAreOnlyThoseOfHistoryPagedAfterAnId) {
  Commit c = NewCommit();
  for (int i = 0; i < 7; ++i) {
    c.new_tasks.push_back(Task(i % 2 == 0 ? "" : "q", absl::StrCat("run-", i), i,
                               i % 2 == 0 ? TaskKind::kTransfer : TaskKind::kWorkflow));
  }
  ASSERT_TRUE(store().Write(c).ok());
  std::vector<int64_t> transfer;
  for (int i = 0; i < 7; i += 2) transfer.push_back(c.new_tasks[i].task_id);

  absl::StatusOr<std::vector<TaskQueueTask>> all = store().LoadTransferTasks(1, 0, 100);
  EXPECT_EQ(IdsOf(all), transfer);
  ASSERT_TRUE(all.ok());
  for (const TaskQueueTask& t : *all) EXPECT_EQ(t.kind, TaskKind::kTransfer);
  EXPECT_EQ((*all)[1].task.SerializeAsString(), c.new_tasks[2].task.SerializeAsString());

  std::vector<int64_t> paged;
  int64_t after = 0;
  for (int pages = 0; pages < 10; ++pages) {
    std::vector<int64_t> page = IdsOf(store().LoadTransferTasks(1, after, 3));
    ASSERT_LE(page.size(), 3u);
    if (page.empty()) break;
    paged.insert(paged.end(), page.begin(), page.end());
    after = page.back();
  }
  EXPECT_EQ(paged, transfer);
  EXPECT_TRUE(IdsOf(store().LoadTransferTasks(1, transfer.back(), 100)).empty());
}

// Review P3-2: a host taking a shard reads that shard's transfer rows only, not the table.
TEST_P(ExecutionQueuesTest, TransferTasksAreLoadedPerShard) {
  absl::StatusOr<int64_t> range_2 = store().AcquireShard(2, "test-owner");
  ASSERT_TRUE(range_2.ok()) << range_2.status();
  std::vector<int64_t> of[3];
  for (int i = 0; i < 6; ++i) {
    Commit c = NewCommit();
    const int32_t shard = i % 3 == 0 ? 2 : 1;
    c.shard_id = shard;
    c.range_id = shard == 2 ? *range_2 : range_id_;
    c.new_tasks = {Task("", absl::StrCat("run-", i), i, TaskKind::kTransfer),
                   Task("q", absl::StrCat("run-", i), i, TaskKind::kWorkflow)};
    ASSERT_TRUE(store().Write(c).ok());
    of[shard].push_back(c.new_tasks[0].task_id);
  }
  ASSERT_EQ(of[1].size(), 4u);
  ASSERT_EQ(of[2].size(), 2u);

  EXPECT_EQ(IdsOf(store().LoadTransferTasks(1, 0, 100)), of[1]);
  EXPECT_EQ(IdsOf(store().LoadTransferTasks(2, 0, 100)), of[2]);
  EXPECT_EQ(IdsOf(store().LoadTransferTasks(1, of[1][0], 2)),
            (std::vector<int64_t>{of[1][1], of[1][2]}))
      << "paged after an id within the shard";
  EXPECT_EQ(IdsOf(store().LoadTransferTasks(2, of[2][0], 100)), (std::vector<int64_t>{of[2][1]}));
  EXPECT_TRUE(IdsOf(store().LoadTransferTasks(3, 0, 100)).empty());
  EXPECT_TRUE(IdsOf(store().LoadTransferTasks(ExecutionStore::kUnshardedTransferTasks, 0, 100))
                  .empty())
      << "every row written since the shard column exists carries its shard";
}

TEST_P(ExecutionQueuesTest, TimerIdsAreKeptWhenSetAndAssignedWhenZero) {
  Commit c = NewCommit();
  c.new_timers = {Timer(1, 100, 42), Timer(1, 100, 0), Timer(1, 100, 0), Timer(1, 50, 0)};
  absl::Status s = store().Write(c);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(c.new_timers[0].task_id, 42);
  for (int i = 1; i < 4; ++i) EXPECT_NE(c.new_timers[i].task_id, 0) << i;
  EXPECT_NE(c.new_timers[1].task_id, c.new_timers[2].task_id);
  EXPECT_LT(c.new_timers[1].task_id, c.new_timers[2].task_id) << "in the commit's order";

  Keys_ want = Keys(c.new_timers);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(TimerKeys(), want) << "stored under the ids handed back";

  absl::StatusOr<std::vector<TimerTaskRow>> loaded =
      store().LoadTimers(1, TimerCursor{}, absl::InfiniteFuture(), 10);
  ASSERT_TRUE(loaded.ok());
  for (const TimerTaskRow& row : *loaded) {
    EXPECT_EQ(row.shard_id, 1);
    EXPECT_EQ(row.task.SerializeAsString(), c.new_timers[0].task.SerializeAsString());
  }
}

TEST_P(ExecutionQueuesTest, TimersPageByFireTimeThenTaskIdUntilTheGivenTime) {
  // 3 timers at each of 5 fire times, ids not in fire-time order, and another shard's.
  Commit c = NewCommit();
  Keys_ all;
  for (int64_t at = 0; at < 5; ++at) {
    for (int64_t k = 0; k < 3; ++k) {
      const int64_t id = 100 - at * 10 + k * 3;
      c.new_timers.push_back(Timer(1, at * 1000, id));
      all.emplace_back(kBaseMs + at * 1000, id);
    }
  }
  absl::StatusOr<int64_t> other = store().AcquireShard(2, "test-owner");
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(store().Write(c).ok());
  Commit elsewhere = NewCommit();
  elsewhere.shard_id = 2;
  elsewhere.range_id = *other;
  elsewhere.new_timers = {Timer(2, 1000, 1), Timer(2, 2500, 2)};
  ASSERT_TRUE(store().Write(elsewhere).ok());
  std::sort(all.begin(), all.end());

  // Pages of 4 through everything, each starting strictly after the last one seen.
  Keys_ paged;
  TimerCursor after;
  for (int pages = 0; pages < 20; ++pages) {
    absl::StatusOr<std::vector<TimerTaskRow>> page =
        store().LoadTimers(1, after, absl::InfiniteFuture(), 4);
    ASSERT_TRUE(page.ok()) << page.status();
    ASSERT_LE(page->size(), 4u);
    if (page->empty()) break;
    for (const auto& key : Keys(*page)) paged.push_back(key);
    after = {page->back().fire_time, page->back().task_id};
  }
  EXPECT_EQ(paged, all);

  // `until` is exclusive; a cursor in the middle of one fire time continues within it.
  absl::StatusOr<std::vector<TimerTaskRow>> due =
      store().LoadTimers(1, TimerCursor{}, absl::FromUnixMillis(kBaseMs + 2000), 100);
  ASSERT_TRUE(due.ok());
  EXPECT_EQ(Keys(*due), Keys_(all.begin(), all.begin() + 6));
  absl::StatusOr<std::vector<TimerTaskRow>> middle =
      store().LoadTimers(1, {absl::FromUnixMillis(all[7].first), all[7].second},
                         absl::FromUnixMillis(kBaseMs + 4000), 100);
  ASSERT_TRUE(middle.ok());
  EXPECT_EQ(Keys(*middle), Keys_(all.begin() + 8, all.begin() + 12));
  absl::StatusOr<std::vector<TimerTaskRow>> none =
      store().LoadTimers(1, TimerCursor{}, absl::FromUnixMillis(kBaseMs), 100);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty()) << "nothing is due before the first fire time";
  EXPECT_EQ(TimerKeys(2), (Keys_{{kBaseMs + 1000, 1}, {kBaseMs + 2500, 2}}));
  EXPECT_TRUE(TimerKeys(3).empty());
}

TEST_P(ExecutionQueuesTest, DoneTimersRemoveExactlyTheNamedOnes) {
  Commit c = NewCommit();
  c.new_timers = {Timer(1, 100, 1), Timer(1, 100, 2), Timer(1, 200, 1), Timer(1, 300, 3)};
  ASSERT_TRUE(store().Write(c).ok());
  absl::StatusOr<int64_t> other = store().AcquireShard(2, "test-owner");
  ASSERT_TRUE(other.ok());
  Commit elsewhere = NewCommit();
  elsewhere.shard_id = 2;
  elsewhere.range_id = *other;
  elsewhere.new_timers = {Timer(2, 100, 1)};
  ASSERT_TRUE(store().Write(elsewhere).ok());

  // The same fire time with another id, the same id at another time, and a timer that does
  // not exist: only exact matches go, and only on shard 1.
  Commit done = NewCommit();
  done.done_timers = {Timer(1, 100, 1), Timer(1, 300, 3), Timer(1, 999, 1)};
  done.new_timers = {Timer(1, 400, 4)};
  ASSERT_TRUE(store().Write(done).ok());
  EXPECT_EQ(TimerKeys(1), (Keys_{{kBaseMs + 100, 2}, {kBaseMs + 200, 1}, {kBaseMs + 400, 4}}));
  EXPECT_EQ(TimerKeys(2), (Keys_{{kBaseMs + 100, 1}}));
}

TEST_P(ExecutionQueuesTest, TaskAndTimerIdsOfConcurrentCommitsAreUnique) {
  constexpr int kThreads = 6;
  constexpr int kCommits = 20;
  std::vector<std::vector<int64_t>> tasks(kThreads), timers(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kCommits; ++i) {
          Commit c = NewCommit();
          c.new_tasks = {Task("q", absl::StrCat("run-", t), i), Task("q", "x", i)};
          c.new_timers = {Timer(1, 100, 0), Timer(1, 100, 0)};
          absl::Status s = store().Write(c);
          ASSERT_TRUE(s.ok()) << s;
          for (const auto& task : c.new_tasks) tasks[t].push_back(task.task_id);
          for (const auto& timer : c.new_timers) timers[t].push_back(timer.task_id);
        }
      });
    }
  }
  std::set<int64_t> task_ids, timer_ids;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(std::is_sorted(tasks[t].begin(), tasks[t].end())) << t;
    task_ids.insert(tasks[t].begin(), tasks[t].end());
    timer_ids.insert(timers[t].begin(), timers[t].end());
  }
  EXPECT_EQ(task_ids.size(), size_t{kThreads * kCommits * 2});
  EXPECT_EQ(timer_ids.size(), size_t{kThreads * kCommits * 2});
  EXPECT_EQ(TaskIds().size(), size_t{kThreads * kCommits * 2});
  EXPECT_EQ(TimerKeys().size(), size_t{kThreads * kCommits * 2});
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(ExecutionQueuesTest);

// A database upgraded to transfer rows with shards: the rows stored before keep no shard (SQL
// cannot compute it) and are read apart, so the host taking shards still finds them.
class TransferShardUpgradeTest : public BackendTest {};

TEST_P(TransferShardUpgradeTest, RowsStoredBeforeTheUpgradeAreReadAsUnsharded) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database cannot be prepared beforehand";
  MigrateBefore(/*sqlite: transfer rows with shards*/ 16, /*postgres*/ 17);
  TaskQueueTask old = Task("", "run-old", 7, TaskKind::kTransfer);
  const std::string hex = absl::BytesToHexString(old.task.SerializeAsString());
  // And a workflow task of queue "q" from before.
  const std::string bytes =
      IsPostgres() ? absl::StrCat("'\\x", hex, "'::bytea") : absl::StrCat("X'", hex, "'");
  RunRaw(absl::StrCat(
      "INSERT INTO task_queue_tasks(namespace_id, task_queue, kind, data) VALUES ('ns', '', 3, ",
      bytes, "), ('ns', 'q', 1, ", bytes, ")"));

  std::unique_ptr<Persistence> p = Open();
  ASSERT_NE(p, nullptr);
  absl::StatusOr<int64_t> range = p->executions().AcquireShard(1, "test-owner");
  ASSERT_TRUE(range.ok()) << range.status();
  Commit c;
  c.shard_id = 1;
  c.range_id = *range;
  c.new_tasks = {Task("", "run-new", 8, TaskKind::kTransfer)};
  ASSERT_TRUE(p->executions().Write(c).ok());

  absl::StatusOr<std::vector<TaskQueueTask>> unsharded =
      p->executions().LoadTransferTasks(ExecutionStore::kUnshardedTransferTasks, 0, 100);
  ASSERT_TRUE(unsharded.ok()) << unsharded.status();
  ASSERT_EQ(unsharded->size(), 1u);
  EXPECT_EQ((*unsharded)[0].task.SerializeAsString(), old.task.SerializeAsString());
  EXPECT_EQ(IdsOf(p->executions().LoadTransferTasks(1, 0, 100)),
            (std::vector<int64_t>{c.new_tasks[0].task_id}))
      << "shard 1 reads its own row only";

  // A queue's rows from before: read by a set that asks for the unsharded ones only.
  using Only = ExecutionStore::ShardSet;
  EXPECT_EQ(IdsOf(p->executions().LoadQueueTasks("ns", "q", TaskKind::kWorkflow, 100,
                                                 Only{{1}, true})).size(), 1u);
  EXPECT_TRUE(IdsOf(p->executions().LoadQueueTasks("ns", "q", TaskKind::kWorkflow, 100,
                                                   Only{{1}, false})).empty());
  absl::StatusOr<std::vector<ExecutionStore::QueueName>> listed =
      p->executions().ListQueuesWithTasks(Only{{}, true}, 100);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u) << "the unsharded queue row, not the transfer row";
  EXPECT_EQ(listed->at(0).task_queue, "q");
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(TransferShardUpgradeTest);

}  // namespace
}  // namespace tock::persistence::conformance
