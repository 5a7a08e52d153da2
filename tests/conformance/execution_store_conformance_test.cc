// The ExecutionStore contract (execution_store.h) on every backend, for runs and their
// history: shard fencing by range id (a stale owner writes nothing), per-run optimistic
// concurrency, the current-run pointer, events across commits, atomic multi-run commits,
// deletion, durability across reopening, and concurrent writers. Tasks and timers are in
// execution_queues_conformance_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <latch>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/visibility_store.h"
#include "tests/conformance/execution_fixture.h"

namespace tock::persistence::conformance {
namespace {

using Code = absl::StatusCode;

class ExecutionStoreTest : public ExecutionStoreFixture {};

TEST_P(ExecutionStoreTest, AcquireShardIncrementsTheRangeIdOfThatShardOnly) {
  absl::StatusOr<int64_t> again = store().AcquireShard(1, "second-owner");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, range_id_ + 1);
  absl::StatusOr<int64_t> other = store().AcquireShard(2, "second-owner");
  ASSERT_TRUE(other.ok()) << other.status();
  absl::StatusOr<int64_t> other_again = store().AcquireShard(2, "third-owner");
  ASSERT_TRUE(other_again.ok()) << other_again.status();
  EXPECT_EQ(*other_again, *other + 1);
  absl::StatusOr<int64_t> first = store().AcquireShard(1, "third-owner");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, range_id_ + 2) << "shard 2's acquisitions did not move shard 1";
}

// Everything a commit can carry, on a shard whose range id moved on: none of it is stored.
TEST_P(ExecutionStoreTest, AWriteWithAnOldRangeIdWritesNothing) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf-a", "run-a"));
  Commit setup = NewCommit();
  setup.new_tasks = {Task("q", "run-a", 2)};
  setup.new_timers = {Timer(1, 100, 7)};
  ASSERT_TRUE(store().Write(setup).ok());
  const std::vector<int64_t> tasks_before = TaskIds();
  const auto timers_before = TimerKeys();

  absl::StatusOr<int64_t> stolen = store().AcquireShard(1, "thief");
  ASSERT_TRUE(stolen.ok()) << stolen.status();
  ASSERT_GT(*stolen, range_id_);

  Commit stale = NewCommit();  // the old range id
  RunWrite created = RunChange("wf-b", "run-b", 1, kCompleted);
  created.current_run_change = CurrentRunChange::kCreate;
  created.events = Events("run-b", 1, 4);
  created.visibility = Visibility("ns", "wf-b", "run-b", kCompleted);
  created.archive_on_close = true;
  RunWrite updated = RunChange("wf-a", "run-a", 2);
  updated.events = Events("run-a", 4, 5);
  stale.runs = {created, updated};
  stale.new_tasks = {Task("q", "run-b", 2)};
  stale.done_task_ids = tasks_before;
  stale.new_timers = {Timer(1, 200, 8)};
  stale.done_timers = {Timer(1, 100, 7)};
  absl::Status s = store().Write(stale);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("shard 1 is owned by another server"), std::string::npos) << s;

  EXPECT_EQ(StoredVersion("wf-b", "run-b"), std::nullopt);
  EXPECT_EQ(store().GetCurrentRun("ns", "wf-b").status().code(), Code::kNotFound);
  EXPECT_TRUE(EventIds("run-b").empty());
  EXPECT_EQ(VisibilityCount("run-b"), 0);
  auto queued = p_->archival_queue().Get("ns", "run-b");
  ASSERT_TRUE(queued.ok()) << queued.status();
  EXPECT_FALSE(queued->has_value());
  EXPECT_EQ(StoredVersion("wf-a", "run-a"), 1);
  EXPECT_EQ(EventIds("run-a"), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(TaskIds(), tasks_before);
  EXPECT_EQ(TimerKeys(), timers_before);

  // The new owner's range id writes.
  stale.range_id = *stolen;
  s = store().Write(stale);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(StoredVersion("wf-b", "run-b"), 1);
  EXPECT_EQ(EventIds("run-a"), (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

TEST_P(ExecutionStoreTest, AShardNobodyAcquiredTakesNoWrites) {
  Commit c = NewCommit();
  c.shard_id = 9;
  c.runs = {RunChange("wf", "run", 1)};
  EXPECT_EQ(store().Write(c).code(), Code::kFailedPrecondition);
  c.range_id = 0;
  EXPECT_EQ(store().Write(c).code(), Code::kFailedPrecondition);
  EXPECT_EQ(StoredVersion("wf", "run"), std::nullopt);
}

TEST_P(ExecutionStoreTest, ADbVersionMismatchIsAbortedAndWritesNothing) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run"));
  for (int64_t expected : {0, 2, 5}) {
    SCOPED_TRACE(expected);
    Commit c = NewCommit();
    RunWrite w = RunChange("wf", "run", expected + 1, kCompleted);
    w.events = Events("run", 4, 6);
    w.visibility = Visibility("ns", "wf", "run", kCompleted);
    w.archive_on_close = true;
    c.runs = {w};
    c.new_tasks = {Task("q", "run", 4)};
    c.new_timers = {Timer(1, 10, 11)};
    absl::Status s = store().Write(c);
    EXPECT_EQ(s.code(), Code::kAborted) << s;
    EXPECT_EQ(StoredVersion("wf", "run"), 1);
    EXPECT_EQ(EventIds("run"), (std::vector<int64_t>{1, 2, 3}));
    EXPECT_TRUE(TaskIds().empty());
    EXPECT_TRUE(TimerKeys().empty());
    auto current = store().GetCurrentRun("ns", "wf");
    ASSERT_TRUE(current.ok()) << current.status();
    EXPECT_EQ(current->status, kRunning);
    EXPECT_FALSE(p_->archival_queue().Get("ns", "run")->has_value());
  }
  EXPECT_TRUE(WriteRuns({RunChange("wf", "run", 2)}).ok());
  EXPECT_EQ(StoredVersion("wf", "run"), 2);
}

TEST_P(ExecutionStoreTest, CreateOverAnExistingWorkflowIdIsAlreadyExists) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run-1"));
  RunWrite second = RunChange("wf", "run-2", 1);
  second.current_run_change = CurrentRunChange::kCreate;
  second.events = Events("run-2", 1, 2);
  second.visibility = Visibility("ns", "wf", "run-2", kRunning);
  absl::Status s = WriteRuns({second});
  EXPECT_EQ(s.code(), Code::kAlreadyExists) << s;
  EXPECT_EQ(StoredVersion("wf", "run-2"), std::nullopt);
  EXPECT_TRUE(EventIds("run-2").empty());
  EXPECT_EQ(VisibilityCount("run-2"), 0);
  auto current = store().GetCurrentRun("ns", "wf");
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_EQ(current->run_id, "run-1");
  EXPECT_EQ(current->start_request_id, "request-run-1");

  // The same workflow id in another namespace is another workflow.
  RunWrite elsewhere = RunChange("wf", "run-3", 1, kRunning, "other-ns");
  elsewhere.current_run_change = CurrentRunChange::kCreate;
  EXPECT_TRUE(WriteRuns({elsewhere}).ok());
  EXPECT_EQ(store().GetCurrentRun("other-ns", "wf")->run_id, "run-3");
}

TEST_P(ExecutionStoreTest, ReplaceMovesThePointerFromTheClosedCurrentRun) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run-1"));
  // Closing the run (a visibility update, no pointer change) closes the pointer's status.
  RunWrite close = RunChange("wf", "run-1", 2, kCompleted);
  close.visibility = Visibility("ns", "wf", "run-1", kCompleted);
  ASSERT_TRUE(WriteRuns({close}).ok());
  auto current = store().GetCurrentRun("ns", "wf");
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->run_id, "run-1");
  EXPECT_EQ(current->status, kCompleted);

  RunWrite next = RunChange("wf", "run-2", 1);
  next.current_run_change = CurrentRunChange::kReplace;
  next.expected_current_run_id = "run-1";
  next.events = Events("run-2", 1, 2);
  absl::Status s = WriteRuns({next});
  ASSERT_TRUE(s.ok()) << s;
  current = store().GetCurrentRun("ns", "wf");
  ASSERT_TRUE(current.ok());
  EXPECT_EQ(current->run_id, "run-2");
  EXPECT_EQ(current->status, kRunning);
  EXPECT_EQ(current->start_request_id, "request-run-2");
  EXPECT_EQ(StoredVersion("wf", "run-1"), 2) << "the closed run stays readable";

  // Replacing a run that is no longer current is a concurrent change: nothing written.
  RunWrite late = RunChange("wf", "run-3", 1);
  late.current_run_change = CurrentRunChange::kReplace;
  late.expected_current_run_id = "run-1";
  late.events = Events("run-3", 1, 2);
  s = WriteRuns({late});
  EXPECT_EQ(s.code(), Code::kAborted) << s;
  EXPECT_EQ(StoredVersion("wf", "run-3"), std::nullopt);
  EXPECT_TRUE(EventIds("run-3").empty());
  EXPECT_EQ(store().GetCurrentRun("ns", "wf")->run_id, "run-2");
}

TEST_P(ExecutionStoreTest, EventsAppendedOverSeveralCommitsReadBackInRanges) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run", 3));
  RunWrite one = RunChange("wf", "run", 2);
  one.events = Events("run", 4, 4);
  ASSERT_TRUE(WriteRuns({one}).ok());
  RunWrite many = RunChange("wf", "run", 3);
  many.events = Events("run", 5, 40);
  ASSERT_TRUE(WriteRuns({many}).ok());
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf-other", "run-other", 50));

  absl::StatusOr<std::vector<HistoryEvent>> all = store().ReadEvents("run", 1, 41, 1000);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 40u);
  for (int64_t id = 1; id <= 40; ++id) {
    EXPECT_EQ((*all)[id - 1].SerializeAsString(), Event("run", id).SerializeAsString()) << id;
  }
  EXPECT_EQ(EventIds("run", 3, 6), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(EventIds("run", 1, 41, 2), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(EventIds("run", 38, 1000), (std::vector<int64_t>{38, 39, 40}));
  EXPECT_EQ(EventIds("run", 39, 1000, 1), (std::vector<int64_t>{39}));
  EXPECT_TRUE(EventIds("run", 41, 1000).empty());
  EXPECT_TRUE(EventIds("run", 5, 5).empty());
  EXPECT_TRUE(EventIds("no-such-run").empty());

  // The fast path hands over the same bytes, in order, and counts them.
  std::vector<std::string> bytes;
  absl::StatusOr<int64_t> visited =
      store().VisitEventBytes("run", 2, 41, 30, [&](std::string_view b) { bytes.emplace_back(b); });
  ASSERT_TRUE(visited.ok()) << visited.status();
  EXPECT_EQ(*visited, 30);
  ASSERT_EQ(bytes.size(), 30u);
  for (size_t i = 0; i < bytes.size(); ++i) {
    EXPECT_EQ(bytes[i], (*all)[i + 1].SerializeAsString()) << i;
  }
  visited = store().VisitEventBytes("no-such-run", 1, 10, 10, [](std::string_view) {});
  ASSERT_TRUE(visited.ok());
  EXPECT_EQ(*visited, 0);
}

// A long history (more than a backend may read in one go) comes back whole and in order.
TEST_P(ExecutionStoreTest, ALongHistoryReadsBackWhole) {
  constexpr int64_t kEvents = 5'000;
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run", 1));
  for (int64_t first = 2, version = 2; first <= kEvents; first += 1'250, ++version) {
    RunWrite w = RunChange("wf", "run", version);
    w.events = Events("run", first, std::min(kEvents, first + 1'249));
    absl::Status s = WriteRuns({w});
    ASSERT_TRUE(s.ok()) << s;
  }
  std::vector<int64_t> want(kEvents);
  for (int64_t i = 0; i < kEvents; ++i) want[i] = i + 1;
  EXPECT_EQ(EventIds("run", 1, kEvents + 1, INT32_MAX), want);
  EXPECT_EQ(EventIds("run", 1001, kEvents + 1, 3'500),
            std::vector<int64_t>(want.begin() + 1000, want.begin() + 4500));
  int64_t count = 0, expected_id = 2;
  bool in_order = true;
  absl::StatusOr<int64_t> visited =
      store().VisitEventBytes("run", 2, kEvents, INT32_MAX, [&](std::string_view b) {
        HistoryEvent e;
        in_order = in_order && e.ParseFromArray(b.data(), static_cast<int>(b.size())) &&
                   e.event_id() == expected_id++;
        ++count;
      });
  ASSERT_TRUE(visited.ok()) << visited.status();
  EXPECT_EQ(*visited, kEvents - 2);
  EXPECT_EQ(count, kEvents - 2);
  EXPECT_TRUE(in_order);
}

TEST_P(ExecutionStoreTest, AnEventIdStoredAlreadyFailsTheWholeCommit) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run", 3));
  RunWrite again = RunChange("wf", "run", 2);
  again.events = Events("run", 3, 4);  // 3 exists
  absl::Status s = WriteRuns({again});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(StoredVersion("wf", "run"), 1);
  EXPECT_EQ(EventIds("run"), (std::vector<int64_t>{1, 2, 3}));
}

TEST_P(ExecutionStoreTest, AMultiRunCommitIsAllOrNothing) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf-parent", "run-parent"));
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf-taken", "run-taken"));
  // A parent starts a child; the child's start fails in three ways, each after the parent's
  // part of the commit: nothing of the parent's change may stay.
  std::vector<RunWrite> failing_children;
  RunWrite conflict = RunChange("wf-taken", "run-child", 1);
  conflict.current_run_change = CurrentRunChange::kCreate;
  failing_children.push_back(conflict);
  failing_children.push_back(RunChange("wf-taken", "run-taken", 7));    // stale version
  failing_children.push_back(RunChange("wf-parent", "run-parent", 1));  // exists already
  for (RunWrite& child : failing_children) {
    SCOPED_TRACE(child.state.execution().run_id());
    child.events = Events(child.state.execution().run_id(), 1, 2);
    RunWrite parent = RunChange("wf-parent", "run-parent", 2);
    parent.events = Events("run-parent", 4, 5);
    parent.visibility = Visibility("ns", "wf-parent", "run-parent", kCompleted);
    absl::Status s = WriteRuns({parent, child});
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(StoredVersion("wf-parent", "run-parent"), 1);
    EXPECT_EQ(EventIds("run-parent"), (std::vector<int64_t>{1, 2, 3}));
    EXPECT_EQ(store().GetCurrentRun("ns", "wf-parent")->status, kRunning);
  }
  EXPECT_EQ(StoredVersion("wf-taken", "run-child"), std::nullopt);

  RunWrite parent = RunChange("wf-parent", "run-parent", 2);
  parent.events = Events("run-parent", 4, 5);
  RunWrite child = RunChange("wf-child", "run-child", 1);
  child.current_run_change = CurrentRunChange::kCreate;
  child.events = Events("run-child", 1, 2);
  ASSERT_TRUE(WriteRuns({parent, child}).ok());
  EXPECT_EQ(StoredVersion("wf-parent", "run-parent"), 2);
  EXPECT_EQ(StoredVersion("wf-child", "run-child"), 1);
  EXPECT_EQ(EventIds("run-child"), (std::vector<int64_t>{1, 2}));
}

// A commit of many runs (as a group of changes committed together): new and changed runs,
// each with its events, all stored; one stale run among them fails the whole commit and is
// the one the error names.
TEST_P(ExecutionStoreTest, ManyRunsInOneCommit) {
  constexpr int kRuns = 12;
  for (int i = 0; i < kRuns / 2; ++i) {
    ASSERT_NO_FATAL_FAILURE(CreateRun(absl::StrCat("old-", i), absl::StrCat("old-run-", i)));
  }
  auto group = [&](int64_t old_version) {
    std::vector<RunWrite> runs;
    for (int i = 0; i < kRuns / 2; ++i) {
      const std::string run = absl::StrCat("old-run-", i);
      RunWrite w = RunChange(absl::StrCat("old-", i), run, old_version + 1);
      w.events = Events(run, 4 + 2 * (old_version - 1), 5 + 2 * (old_version - 1));
      runs.push_back(w);
      const std::string fresh = absl::StrCat("new-run-", i, "-", old_version);
      RunWrite n = RunChange(absl::StrCat("new-", i, "-", old_version), fresh, 1);
      n.current_run_change = CurrentRunChange::kCreate;
      n.events = Events(fresh, 1, 1 + i);
      n.visibility = Visibility("ns", n.state.execution().workflow_id(), fresh, kRunning);
      runs.push_back(n);
    }
    return runs;
  };
  absl::Status s = WriteRuns(group(1));
  ASSERT_TRUE(s.ok()) << s;
  for (int i = 0; i < kRuns / 2; ++i) {
    EXPECT_EQ(StoredVersion(absl::StrCat("old-", i), absl::StrCat("old-run-", i)), 2);
    EXPECT_EQ(EventIds(absl::StrCat("old-run-", i)), (std::vector<int64_t>{1, 2, 3, 4, 5}));
    const std::string fresh = absl::StrCat("new-run-", i, "-1");
    EXPECT_EQ(StoredVersion(absl::StrCat("new-", i, "-1"), fresh), 1);
    EXPECT_EQ(EventIds(fresh).size(), static_cast<size_t>(1 + i));
    EXPECT_EQ(store().GetCurrentRun("ns", absl::StrCat("new-", i, "-1"))->run_id, fresh);
    EXPECT_EQ(VisibilityCount(fresh), 1);
  }

  std::vector<RunWrite> stale = group(2);
  stale[6].expected_db_version = 7;  // old-run-3 is at version 2
  stale[6].state.set_db_version(8);
  s = WriteRuns(stale);
  EXPECT_EQ(s.code(), Code::kAborted) << s;
  EXPECT_NE(s.message().find("old-run-3"), std::string::npos) << s;
  for (int i = 0; i < kRuns / 2; ++i) {
    EXPECT_EQ(StoredVersion(absl::StrCat("old-", i), absl::StrCat("old-run-", i)), 2);
    EXPECT_EQ(EventIds(absl::StrCat("old-run-", i)).size(), 5u);
    EXPECT_EQ(StoredVersion(absl::StrCat("new-", i, "-2"), absl::StrCat("new-run-", i, "-2")),
              std::nullopt);
  }
  s = WriteRuns(group(2));
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(EventIds("old-run-5"), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7}));
}

TEST_P(ExecutionStoreTest, GetRunReturnsTheStoredStateAndNotFoundOtherwise) {
  RunWrite w = RunChange("wf", "run", 1);
  w.state.set_last_event_task_id(77);
  (*w.state.mutable_timers())["t1"].set_timer_id("t1");
  ASSERT_TRUE(WriteRuns({w}).ok());
  auto state = store().GetRun("ns", "wf", "run");
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->SerializeAsString(), w.state.SerializeAsString());
  EXPECT_EQ(store().GetRun("ns", "wf", "other").status().code(), Code::kNotFound);
  EXPECT_EQ(store().GetRun("ns", "other", "run").status().code(), Code::kNotFound);
  EXPECT_EQ(store().GetRun("other", "wf", "run").status().code(), Code::kNotFound);
  EXPECT_EQ(store().GetCurrentRun("ns", "wf").status().code(), Code::kNotFound)
      << "written without kCreate: no pointer";
}

// Review P3-3: a host that lost the run's shard deletes nothing, like a fenced-out Write.
TEST_P(ExecutionStoreTest, DeleteRunIsFencedByTheRangeIdOfTheRunsShard) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run-1"));
  absl::StatusOr<int64_t> stolen = store().AcquireShard(1, "thief");
  ASSERT_TRUE(stolen.ok()) << stolen.status();

  absl::Status stale = store().DeleteRun(1, range_id_, "ns", "wf", "run-1");
  EXPECT_EQ(stale.code(), Code::kFailedPrecondition) << stale;
  EXPECT_TRUE(absl::StrContains(stale.message(), "shard 1 is owned by another server")) << stale;
  EXPECT_EQ(StoredVersion("wf", "run-1"), 1) << "the stale owner deleted nothing";
  EXPECT_EQ(EventIds("run-1"), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(VisibilityCount("run-1"), 1);
  EXPECT_EQ(store().GetCurrentRun("ns", "wf")->run_id, "run-1");
  EXPECT_EQ(store().DeleteRun(2, range_id_, "ns", "wf", "run-1").code(),
            Code::kFailedPrecondition)
      << "a shard never taken has no range id to match";

  ASSERT_TRUE(store().DeleteRun(1, *stolen, "ns", "wf", "run-1").ok());
  EXPECT_EQ(StoredVersion("wf", "run-1"), std::nullopt) << "the new owner deletes";
  EXPECT_TRUE(EventIds("run-1").empty());
  EXPECT_EQ(VisibilityCount("run-1"), 0);
}

TEST_P(ExecutionStoreTest, DeleteRunRemovesStateEventsVisibilityAndItsPointer) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run-1"));
  RunWrite close = RunChange("wf", "run-1", 2, kCompleted);
  close.visibility = Visibility("ns", "wf", "run-1", kCompleted);
  ASSERT_TRUE(WriteRuns({close}).ok());
  RunWrite next = RunChange("wf", "run-2", 1);
  next.current_run_change = CurrentRunChange::kReplace;
  next.expected_current_run_id = "run-1";
  next.events = Events("run-2", 1, 2);
  next.visibility = Visibility("ns", "wf", "run-2", kRunning);
  ASSERT_TRUE(WriteRuns({next}).ok());

  // The old run: the pointer is another run's and stays.
  ASSERT_TRUE(store().DeleteRun(1, range_id_, "ns", "wf", "run-1").ok());
  EXPECT_EQ(StoredVersion("wf", "run-1"), std::nullopt);
  EXPECT_TRUE(EventIds("run-1").empty());
  EXPECT_EQ(VisibilityCount("run-1"), 0);
  EXPECT_EQ(store().GetCurrentRun("ns", "wf")->run_id, "run-2");
  EXPECT_EQ(EventIds("run-2"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(VisibilityCount("run-2"), 1);

  ASSERT_TRUE(store().DeleteRun(1, range_id_, "ns", "wf", "run-2").ok());
  EXPECT_EQ(StoredVersion("wf", "run-2"), std::nullopt);
  EXPECT_TRUE(EventIds("run-2").empty());
  EXPECT_EQ(VisibilityCount("run-2"), 0);
  EXPECT_EQ(store().GetCurrentRun("ns", "wf").status().code(), Code::kNotFound);
  EXPECT_TRUE(store().DeleteRun(1, range_id_, "ns", "wf", "run-2").ok())
      << "deleting twice is harmless";

  // The workflow id is free again.
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run-3"));
}

TEST_P(ExecutionStoreTest, EverythingSurvivesReopeningAndTheOldRangeIdStaysFenced) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database is gone once closed";
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run", 5));
  Commit c = NewCommit();
  c.new_tasks = {Task("q", "run", 2)};
  c.new_timers = {Timer(1, 500, 9)};
  ASSERT_TRUE(store().Write(c).ok());
  const int64_t task_id = c.new_tasks[0].task_id;
  p_.reset();

  p_ = Open();
  ASSERT_NE(p_, nullptr);
  EXPECT_EQ(StoredVersion("wf", "run"), 1);
  EXPECT_EQ(EventIds("run"), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(store().GetCurrentRun("ns", "wf")->run_id, "run");
  EXPECT_EQ(VisibilityCount("run"), 1);
  EXPECT_EQ(TaskIds(), (std::vector<int64_t>{task_id}));
  EXPECT_EQ(TimerKeys(), (std::vector<std::pair<int64_t, int64_t>>{{kBaseMs + 500, 9}}));

  absl::StatusOr<int64_t> next = store().AcquireShard(1, "restarted");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, range_id_ + 1) << "the range id is stored, not restarted";
  EXPECT_EQ(WriteRuns({RunChange("wf", "run", 2)}).code(), Code::kFailedPrecondition);
  Commit more = NewCommit();
  more.range_id = *next;
  more.new_tasks = {Task("q", "run", 3)};
  ASSERT_TRUE(store().Write(more).ok());
  EXPECT_GT(more.new_tasks[0].task_id, task_id) << "task ids keep increasing after a restart";
}

TEST_P(ExecutionStoreTest, ConcurrentAcquisitionsOfOneShardGetDistinctRangeIds) {
  constexpr int kThreads = 8;
  std::vector<int64_t> got(kThreads, 0);
  std::latch start(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        absl::StatusOr<int64_t> r = store().AcquireShard(5, absl::StrCat("owner-", t));
        EXPECT_TRUE(r.ok()) << r.status();
        if (r.ok()) got[t] = *r;
      });
    }
  }
  std::sort(got.begin(), got.end());
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(got[t], got[t - 1] + 1) << "each one increment";
}

TEST_P(ExecutionStoreTest, ManyThreadsCommittingToTheirOwnRunsAllSucceed) {
  constexpr int kThreads = 8;
  constexpr int kCommits = 25;
  std::latch start(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::vector<int64_t>> task_ids(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        const std::string wf = absl::StrCat("wf-", t), run = absl::StrCat("run-", t);
        start.arrive_and_wait();
        for (int i = 1; i <= kCommits; ++i) {
          Commit c = NewCommit();
          RunWrite w = RunChange(wf, run, i);
          if (i == 1) w.current_run_change = CurrentRunChange::kCreate;
          w.events = Events(run, 2 * i - 1, 2 * i);
          c.runs = {w};
          c.new_tasks = {Task(absl::StrCat("q-", t), run, 2 * i)};
          absl::Status s = store().Write(c);
          if (!s.ok()) {
            ++failures;
            ADD_FAILURE() << s;
            return;
          }
          task_ids[t].push_back(c.new_tasks[0].task_id);
        }
      });
    }
  }
  ASSERT_EQ(failures.load(), 0);
  std::set<int64_t> unique;
  for (int t = 0; t < kThreads; ++t) {
    const std::string run = absl::StrCat("run-", t);
    EXPECT_EQ(StoredVersion(absl::StrCat("wf-", t), run), kCommits);
    EXPECT_EQ(EventIds(run).size(), 2u * kCommits);
    EXPECT_TRUE(std::is_sorted(task_ids[t].begin(), task_ids[t].end()));
    unique.insert(task_ids[t].begin(), task_ids[t].end());
  }
  EXPECT_EQ(unique.size(), size_t{kThreads * kCommits}) << "no task id given twice";
  EXPECT_EQ(TaskIds().size(), size_t{kThreads * kCommits});
}

TEST_P(ExecutionStoreTest, ThreadsRacingOnOneRunsVersionHaveExactlyOneWinner) {
  constexpr int kThreads = 6;
  constexpr int kRounds = 10;
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run", 1));
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(round);
    const int64_t version = round + 2;
    std::atomic<int> won{0}, aborted{0};
    std::latch start(kThreads);
    {
      std::vector<std::jthread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
          Commit c = NewCommit();
          RunWrite w = RunChange("wf", "run", version);
          w.state.set_last_event_task_id(t);  // who won
          w.events = {Event("run", version)};
          c.runs = {w};
          c.new_tasks = {Task("q", "run", t)};
          start.arrive_and_wait();
          absl::Status s = store().Write(c);
          if (s.ok()) {
            ++won;
          } else {
            EXPECT_EQ(s.code(), Code::kAborted) << s;
            ++aborted;
          }
        });
      }
    }
    EXPECT_EQ(won.load(), 1);
    EXPECT_EQ(aborted.load(), kThreads - 1);
    EXPECT_EQ(StoredVersion("wf", "run"), version);
    EXPECT_EQ(EventIds("run").size(), static_cast<size_t>(version)) << "one event per round";
    EXPECT_EQ(TaskIds().size(), static_cast<size_t>(round + 1)) << "the losers' tasks are gone";
  }
}

// Writers keep committing with the old range id while another owner takes the shard: every
// write that starts once the steal has returned fails and writes nothing, and every write
// that was acknowledged is stored whole (its run's version and its task).
TEST_P(ExecutionStoreTest, WritesRacingASteal) {
  constexpr int kThreads = 4;
  constexpr int kMaxCommits = 20'000;  // a bound; each writer stops at its first failure
  struct Outcome {
    bool ok = false;
    bool started_after_steal = false;
    int64_t task_id = 0;
  };
  std::vector<std::vector<Outcome>> outcomes(kThreads);
  std::atomic<bool> stolen{false};
  std::atomic<int> written{0};
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        const std::string wf = absl::StrCat("wf-", t), run = absl::StrCat("run-", t);
        int64_t version = 0;
        for (int i = 0; i < kMaxCommits; ++i) {
          Commit c = NewCommit();
          RunWrite w = RunChange(wf, run, version + 1);
          w.events = {Event(run, version + 1)};
          c.runs = {w};
          c.new_tasks = {Task("q", run, version + 1)};
          Outcome o;
          o.started_after_steal = stolen.load();
          absl::Status s = store().Write(c);
          o.ok = s.ok();
          if (s.ok()) {
            ++version;
            ++written;
            o.task_id = c.new_tasks[0].task_id;
          } else {
            EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s;
          }
          outcomes[t].push_back(o);
          if (!o.ok) break;
        }
      });
    }
    // The steal lands while the writers are busy (bounded wait: they write quickly).
    for (int spins = 0; written.load() < kThreads * 5 && spins < 100'000; ++spins) {
      std::this_thread::yield();
    }
    absl::StatusOr<int64_t> next = store().AcquireShard(1, "thief");
    ASSERT_TRUE(next.ok()) << next.status();
    stolen = true;
  }
  std::set<int64_t> acknowledged;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_FALSE(outcomes[t].empty());
    EXPECT_FALSE(outcomes[t].back().ok) << "every writer ran into the steal";
    int64_t ok = 0;
    for (const Outcome& o : outcomes[t]) {
      if (o.started_after_steal) EXPECT_FALSE(o.ok) << "a write after the steal was stored";
      if (!o.ok) continue;
      ++ok;
      acknowledged.insert(o.task_id);
    }
    const std::string run = absl::StrCat("run-", t);
    EXPECT_EQ(StoredVersion(absl::StrCat("wf-", t), run).value_or(0), ok);
    EXPECT_EQ(EventIds(run).size(), static_cast<size_t>(ok));
  }
  const std::vector<int64_t> tasks = TaskIds();
  EXPECT_EQ(std::set<int64_t>(tasks.begin(), tasks.end()), acknowledged)
      << "exactly the acknowledged writes' tasks are stored";
}

// Two servers (two Persistence objects, two connection pools) on one database, as hosts
// sharing PostgreSQL: the second one's acquisition fences the first one out; both see each
// other's writes; racing creations of one workflow id have one winner; task ids stay unique.
TEST_P(ExecutionStoreTest, TwoServersOnOneDatabase) {
  if (!IsPostgres()) GTEST_SKIP() << "one server per SQLite database";
  std::unique_ptr<Persistence> other = Open();
  ASSERT_NE(other, nullptr);
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run"));
  absl::StatusOr<int64_t> taken = other->executions().AcquireShard(1, "host-b");
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(*taken, range_id_ + 1);

  EXPECT_EQ(WriteRuns({RunChange("wf", "run", 2)}).code(), Code::kFailedPrecondition);
  Commit b;
  b.shard_id = 1;
  b.range_id = *taken;
  b.runs = {RunChange("wf", "run", 2)};
  b.runs[0].events = Events("run", 4, 4);
  ASSERT_TRUE(other->executions().Write(b).ok());
  EXPECT_EQ(StoredVersion("wf", "run"), 2) << "host A reads host B's write";
  EXPECT_EQ(EventIds("run"), (std::vector<int64_t>{1, 2, 3, 4}));

  // Both hosts own a shard each and race to start the same workflow id, many times.
  absl::StatusOr<int64_t> mine = store().AcquireShard(2, "host-a");
  ASSERT_TRUE(mine.ok());
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE(round);
    const std::string wf = absl::StrCat("race-", round);
    std::atomic<int> won{0}, exists{0};
    std::vector<int64_t> task_ids(2);
    std::latch start(2);
    {
      std::vector<std::jthread> threads;
      for (int host = 0; host < 2; ++host) {
        threads.emplace_back([&, host] {
          Commit c;
          c.shard_id = host == 0 ? 2 : 1;
          c.range_id = host == 0 ? *mine : *taken;
          RunWrite w = RunChange(wf, absl::StrCat(wf, "-run-", host), 1);
          w.current_run_change = CurrentRunChange::kCreate;
          c.runs = {w};
          c.new_tasks = {Task("q", w.state.execution().run_id(), 2)};
          start.arrive_and_wait();
          absl::Status s = (host == 0 ? store() : other->executions()).Write(c);
          if (s.ok()) {
            ++won;
            task_ids[host] = c.new_tasks[0].task_id;
          } else {
            EXPECT_EQ(s.code(), Code::kAlreadyExists) << s;
            ++exists;
          }
        });
      }
    }
    EXPECT_EQ(won.load(), 1);
    EXPECT_EQ(exists.load(), 1);
    auto current = other->executions().GetCurrentRun("ns", wf);
    ASSERT_TRUE(current.ok()) << current.status();
    EXPECT_EQ(StoredVersion(wf, current->run_id), 1);
  }
  const std::vector<int64_t> tasks = TaskIds();
  EXPECT_EQ(tasks.size(), 10u) << "one task per round, from the winner";
  EXPECT_EQ(std::set<int64_t>(tasks.begin(), tasks.end()).size(), tasks.size());
  auto seen_by_b = other->executions().LoadTaskQueueTasks();
  ASSERT_TRUE(seen_by_b.ok());
  EXPECT_EQ(seen_by_b->size(), tasks.size());
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(ExecutionStoreTest);

}  // namespace
}  // namespace tock::persistence::conformance
