// Group commit (server-core/persistence/group_commit.h) on every backend: concurrent Writes
// to the runs of one shard share transactions, and each caller still gets exactly Write's
// contract: many writers of one shard all succeed and everything they wrote reads back; a
// commit that fails its own check (db_version) changes nothing and fails nobody else; a
// commit with an old range id fails whole, whoever it was grouped with.
//
// Which commits end up in one group depends on timing; each test starts its writers
// together (a latch) so that groups form, and checks outcomes that must hold whatever the
// grouping was.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/execution_store.h"
#include "tests/conformance/execution_fixture.h"

namespace tock::persistence::conformance {
namespace {

using Code = absl::StatusCode;

class GroupCommitTest : public ExecutionStoreFixture {};

// Every thread drives its own run of shard 1 through a life: created (current-run pointer,
// visibility), changed many times (events, a task queued and the previous one consumed, a
// timer with a store-chosen id), closed (visibility, archival queue).
TEST_P(GroupCommitTest, ManyThreadsCommittingToRunsOfOneShardAllSucceedAndReadBack) {
  constexpr int kThreads = 16;
  constexpr int kCommits = 20;
  std::latch start(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::vector<int64_t>> task_ids(kThreads);
  std::vector<std::vector<int64_t>> timer_ids(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        const std::string wf = absl::StrCat("wf-", t), run = absl::StrCat("run-", t);
        start.arrive_and_wait();
        int64_t last_task = 0;
        for (int i = 1; i <= kCommits; ++i) {
          Commit c = NewCommit();
          const bool closing = i == kCommits;
          RunWrite w = RunChange(wf, run, i, closing ? kCompleted : kRunning);
          if (i == 1) {
            w.current_run_change = CurrentRunChange::kCreate;
            w.visibility = Visibility("ns", wf, run, kRunning);
          }
          if (closing) {
            w.visibility = Visibility("ns", wf, run, kCompleted);
            w.archive_on_close = true;
          }
          w.events = Events(run, 2 * i - 1, 2 * i);
          c.runs = {w};
          c.new_tasks = {Task(absl::StrCat("q-", t), run, 2 * i)};
          if (last_task != 0) c.done_task_ids = {last_task};
          c.new_timers = {Timer(1, 1000 * t + i, 0, run)};
          absl::Status s = store().Write(c);
          if (!s.ok()) {
            ++failures;
            ADD_FAILURE() << "thread " << t << " commit " << i << ": " << s;
            return;
          }
          last_task = c.new_tasks[0].task_id;
          task_ids[t].push_back(last_task);
          timer_ids[t].push_back(c.new_timers[0].task_id);
        }
      });
    }
  }
  ASSERT_EQ(failures.load(), 0);
  std::set<int64_t> tasks, timers;
  std::vector<int64_t> last_tasks;
  for (int t = 0; t < kThreads; ++t) {
    SCOPED_TRACE(t);
    const std::string wf = absl::StrCat("wf-", t), run = absl::StrCat("run-", t);
    EXPECT_EQ(StoredVersion(wf, run), kCommits);
    std::vector<int64_t> want_events;
    for (int64_t id = 1; id <= 2 * kCommits; ++id) want_events.push_back(id);
    EXPECT_EQ(EventIds(run), want_events);
    absl::StatusOr<CurrentRun> current = store().GetCurrentRun("ns", wf);
    ASSERT_TRUE(current.ok()) << current.status();
    EXPECT_EQ(current->run_id, run);
    EXPECT_EQ(current->status, kCompleted);
    EXPECT_EQ(VisibilityCount(run), 1);
    auto queued = p_->archival_queue().Get("ns", run);
    ASSERT_TRUE(queued.ok()) << queued.status();
    EXPECT_TRUE(queued->has_value()) << "queued for archival by the closing commit";
    EXPECT_TRUE(std::is_sorted(task_ids[t].begin(), task_ids[t].end()));
    tasks.insert(task_ids[t].begin(), task_ids[t].end());
    timers.insert(timer_ids[t].begin(), timer_ids[t].end());
    last_tasks.push_back(task_ids[t].back());
  }
  EXPECT_EQ(tasks.size(), size_t{kThreads * kCommits}) << "no task id given twice";
  EXPECT_EQ(timers.size(), size_t{kThreads * kCommits}) << "no timer id given twice";
  EXPECT_FALSE(timers.count(0));
  // Each commit consumed its thread's previous task: only the last ones are left.
  const std::vector<int64_t> pending = TaskIds();
  EXPECT_EQ(std::set<int64_t>(pending.begin(), pending.end()),
            std::set<int64_t>(last_tasks.begin(), last_tasks.end()));
  EXPECT_EQ(TimerKeys().size(), size_t{kThreads * kCommits});
}

// Writers of their own runs start together, and among them writers that fail their own
// check: a stale db_version, a kCreate of a workflow id that has a current run, an event id
// that is stored already. Exactly those fail (with their own code) and write nothing (not
// their task, not their timer); every other commit is stored whole.
TEST_P(GroupCommitTest, ACommitFailingItsOwnCheckFailsAloneWhateverItIsGroupedWith) {
  constexpr int kGood = 12;
  constexpr int kRounds = 5;
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf-taken", "run-taken", 1));
  for (int t = 0; t < kGood; ++t) {
    ASSERT_NO_FATAL_FAILURE(CreateRun(absl::StrCat("wf-", t), absl::StrCat("run-", t), 1));
  }
  const size_t tasks_before = TaskIds().size();
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(round);
    const int64_t version = round + 2;  // the good writers' next version
    enum Kind { kGoodWrite, kStaleVersion, kTakenWorkflowId, kStoredEvent };
    std::vector<Kind> kinds(kGood, kGoodWrite);
    kinds.insert(kinds.begin() + kGood / 3, kStaleVersion);
    kinds.insert(kinds.begin() + kGood / 2, kTakenWorkflowId);
    kinds.insert(kinds.begin() + 2 * kGood / 3, kStoredEvent);
    std::vector<absl::Status> results(kinds.size());
    std::vector<Commit> commits(kinds.size());
    int good = 0;
    for (size_t k = 0; k < kinds.size(); ++k) {
      Commit& c = commits[k];
      c = NewCommit();
      switch (kinds[k]) {
        case kGoodWrite: {
          const std::string run = absl::StrCat("run-", good);
          RunWrite w = RunChange(absl::StrCat("wf-", good), run, version);
          w.events = {Event(run, version)};
          c.runs = {w};
          c.new_tasks = {Task("q", run, version)};
          c.new_timers = {Timer(1, 10'000 * round + good, 0, run)};
          ++good;
          break;
        }
        case kStaleVersion: {
          RunWrite w = RunChange("wf-taken", "run-taken", 5);  // stored: 1
          w.events = {Event("run-taken", 100 + round)};
          c.runs = {w};
          break;
        }
        case kTakenWorkflowId: {
          RunWrite w = RunChange("wf-taken", absl::StrCat("run-dup-", round), 1);
          w.current_run_change = CurrentRunChange::kCreate;
          w.events = Events(absl::StrCat("run-dup-", round), 1, 2);
          c.runs = {w};
          break;
        }
        case kStoredEvent: {
          RunWrite w = RunChange("wf-taken", "run-taken", 2);
          w.events = {Event("run-taken", 1)};  // stored by CreateRun
          c.runs = {w};
          break;
        }
      }
      if (kinds[k] != kGoodWrite) {
        c.new_tasks = {Task("q-failed", "failed", round)};
        c.new_timers = {Timer(1, 900'000 + round, 0, "failed")};
      }
    }
    std::latch start(static_cast<std::ptrdiff_t>(kinds.size()));
    {
      std::vector<std::jthread> threads;
      for (size_t k = 0; k < kinds.size(); ++k) {
        threads.emplace_back([&, k] {
          start.arrive_and_wait();
          results[k] = store().Write(commits[k]);
        });
      }
    }
    for (size_t k = 0; k < kinds.size(); ++k) {
      SCOPED_TRACE(k);
      switch (kinds[k]) {
        case kGoodWrite:
          EXPECT_TRUE(results[k].ok()) << results[k];
          break;
        case kStaleVersion:
        case kStoredEvent:
          EXPECT_EQ(results[k].code(), Code::kAborted) << results[k];
          break;
        case kTakenWorkflowId:
          EXPECT_EQ(results[k].code(), Code::kAlreadyExists) << results[k];
          break;
      }
    }
    for (int t = 0; t < kGood; ++t) {
      const std::string run = absl::StrCat("run-", t);
      EXPECT_EQ(StoredVersion(absl::StrCat("wf-", t), run), version);
      EXPECT_EQ(EventIds(run).size(), static_cast<size_t>(version));
    }
    EXPECT_EQ(StoredVersion("wf-taken", "run-taken"), 1);
    EXPECT_EQ(EventIds("run-taken"), (std::vector<int64_t>{1}));
    EXPECT_EQ(StoredVersion("wf-taken", absl::StrCat("run-dup-", round)), std::nullopt);
    EXPECT_TRUE(EventIds(absl::StrCat("run-dup-", round)).empty());
    EXPECT_EQ(TaskIds().size(), tasks_before + static_cast<size_t>(kGood * (round + 1)))
        << "the good commits' tasks, none of the failed ones'";
    EXPECT_EQ(TimerKeys().size(), static_cast<size_t>(kGood * (round + 1)));
  }
  absl::StatusOr<CurrentRun> current = store().GetCurrentRun("ns", "wf-taken");
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_EQ(current->run_id, "run-taken");
}

// After a steal, writers with the old range id start together, next to writers of another
// shard this server still owns: every stale commit fails with FAILED_PRECONDITION and writes
// nothing; the other shard's commits are stored.
// Counts what a store tells its write observer.
struct CountingObserver : WriteObserver {
  void TransactionCommitted(size_t) override { ++transactions; }
  void WalPagesAppended(int64_t) override {}
  void GroupWrittenAgain() override { ++written_again; }
  std::atomic<int> transactions{0}, written_again{0};
};

// PostgreSQL sends a group at once (BEGIN, the fence, the rows and COMMIT in one round trip,
// each check an error in SQL) and writes it again the careful way only when a commit does not
// pass: each kind of check fails a commit alone, and the commits that pass (a run created
// with its pointer, visibility record and events; a change with a task and a timer) are
// never written twice. SQLite writes every group the careful way.
TEST_P(GroupCommitTest, OnlyAGroupInWhichACommitDoesNotPassIsWrittenAgain) {
  static CountingObserver observer;  // outlives the store, whose last test this may be
  observer.transactions = 0;
  observer.written_again = 0;
  store().SetWriteObserver(&observer);
  const int again = GetParam() == Backend::kPostgres ? 1 : 0;
  auto change = [&](int64_t version, int64_t event) {
    Commit c = NewCommit();
    RunWrite w = RunChange("wf-a", "run-a", version);
    w.events = {Event("run-a", event)};
    c.runs = {w};
    c.new_tasks = {Task("q", "run-a", event)};
    c.new_timers = {Timer(1, 5'000 + event, 0, "run-a")};
    return c;
  };
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf-a", "run-a", 2));
  Commit good = change(2, 3);
  ASSERT_TRUE(store().Write(good).ok());
  EXPECT_EQ(observer.written_again, 0);
  EXPECT_EQ(observer.transactions, 2);

  Commit stale = change(5, 4);  // expects version 4; stored: 2
  EXPECT_EQ(store().Write(stale).code(), Code::kAborted);
  EXPECT_EQ(observer.written_again, again);
  Commit stored_event = change(3, 1);
  EXPECT_EQ(store().Write(stored_event).code(), Code::kAborted);
  EXPECT_EQ(observer.written_again, 2 * again);
  Commit taken = NewCommit();
  RunWrite w = RunChange("wf-a", "run-b", 1);
  w.current_run_change = CurrentRunChange::kCreate;
  w.events = Events("run-b", 1, 2);
  taken.runs = {w};
  EXPECT_EQ(store().Write(taken).code(), Code::kAlreadyExists);
  EXPECT_EQ(observer.written_again, 3 * again);

  Commit next = change(3, 4);
  ASSERT_TRUE(store().Write(next).ok());
  EXPECT_EQ(observer.written_again, 3 * again);
  EXPECT_EQ(observer.transactions, 3);
  EXPECT_EQ(StoredVersion("wf-a", "run-a"), 3);
  EXPECT_EQ(EventIds("run-a"), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(StoredVersion("wf-a", "run-b"), std::nullopt);
}

TEST_P(GroupCommitTest, FencingFailsEveryCommitOfAStolenShard) {
  constexpr int kThreads = 12;
  absl::StatusOr<int64_t> shard2 = store().AcquireShard(2, "test-owner");
  ASSERT_TRUE(shard2.ok()) << shard2.status();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_NO_FATAL_FAILURE(CreateRun(absl::StrCat("wf-", t), absl::StrCat("run-", t), 1));
  }
  const size_t tasks_before = TaskIds().size();
  absl::StatusOr<int64_t> stolen = store().AcquireShard(1, "thief");
  ASSERT_TRUE(stolen.ok()) << stolen.status();

  std::vector<absl::Status> stale(kThreads), owned(kThreads);
  std::latch start(2 * kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        const std::string run = absl::StrCat("run-", t);
        Commit c = NewCommit();  // the old range id of shard 1
        RunWrite w = RunChange(absl::StrCat("wf-", t), run, 2);
        w.events = {Event(run, 2)};
        c.runs = {w};
        c.new_tasks = {Task("q", run, 2)};
        c.new_timers = {Timer(1, t, 0, run)};
        start.arrive_and_wait();
        stale[t] = store().Write(c);
      });
      threads.emplace_back([&, t] {
        const std::string run = absl::StrCat("other-run-", t);
        Commit c;
        c.shard_id = 2;
        c.range_id = *shard2;
        RunWrite w = RunChange(absl::StrCat("other-wf-", t), run, 1);
        w.current_run_change = CurrentRunChange::kCreate;
        w.events = Events(run, 1, 2);
        c.runs = {w};
        c.new_timers = {Timer(2, t, 0, run)};
        start.arrive_and_wait();
        owned[t] = store().Write(c);
      });
    }
  }
  for (int t = 0; t < kThreads; ++t) {
    SCOPED_TRACE(t);
    EXPECT_EQ(stale[t].code(), Code::kFailedPrecondition) << stale[t];
    EXPECT_NE(stale[t].message().find("shard 1 is owned by another server"), std::string::npos)
        << stale[t];
    EXPECT_EQ(StoredVersion(absl::StrCat("wf-", t), absl::StrCat("run-", t)), 1);
    EXPECT_EQ(EventIds(absl::StrCat("run-", t)).size(), 1u);
    EXPECT_TRUE(owned[t].ok()) << owned[t];
    EXPECT_EQ(StoredVersion(absl::StrCat("other-wf-", t), absl::StrCat("other-run-", t)), 1);
  }
  EXPECT_EQ(TaskIds().size(), tasks_before);
  EXPECT_TRUE(TimerKeys(1).empty());
  EXPECT_EQ(TimerKeys(2).size(), size_t{kThreads});
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(GroupCommitTest);

}  // namespace
}  // namespace tock::persistence::conformance
