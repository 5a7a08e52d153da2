// History branches on every backend (execution_store.h: BranchFork, BranchSwitch,
// BranchAppend): a fork copies the current branch's prefix (or a stored branch's), appends go to the named branch
// only, a switch keeps the old current branch whole under its token and moves the winner
// into the run's history, everything is all or nothing with the run's own check, and
// deleting the run removes every branch.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server-core/persistence/execution_store.h"
#include "tests/conformance/execution_fixture.h"

namespace tock::persistence::conformance {
namespace {

class HistoryBranchTest : public ExecutionStoreFixture {
 protected:
  // The ids of a branch's events, and the task id of each (which tells the branches apart).
  std::vector<std::pair<int64_t, int64_t>> Branch(const std::string& token) {
    absl::StatusOr<std::vector<HistoryEvent>> events =
        store().ReadBranchEvents("run", token, 1, 1000, 1000);
    EXPECT_TRUE(events.ok()) << events.status();
    std::vector<std::pair<int64_t, int64_t>> out;
    if (events.ok()) {
      for (const HistoryEvent& e : *events) out.emplace_back(e.event_id(), e.task_id());
    }
    return out;
  }
  std::vector<std::pair<int64_t, int64_t>> Current() {
    absl::StatusOr<std::vector<HistoryEvent>> events = store().ReadEvents("run", 1, 1000, 1000);
    EXPECT_TRUE(events.ok()) << events.status();
    std::vector<std::pair<int64_t, int64_t>> out;
    if (events.ok()) {
      for (const HistoryEvent& e : *events) out.emplace_back(e.event_id(), e.task_id());
    }
    return out;
  }
  // Events first..last of another writer: same ids, other task ids.
  static std::vector<HistoryEvent> Theirs(int64_t first, int64_t last) {
    std::vector<HistoryEvent> out = Events("run", first, last);
    for (HistoryEvent& e : out) e.set_task_id(e.task_id() + 5000);
    return out;
  }
};

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

TEST_P(HistoryBranchTest, AForkCopiesThePrefixAndAppendsGoToTheBranchOnly) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run", 3));
  RunWrite w = RunChange("wf", "run", 2);
  w.branch_forks.push_back({"b1", 2});
  w.branch_appends.push_back({"b1", Theirs(3, 4)});
  w.events = Events("run", 4, 4);
  ASSERT_TRUE(WriteRuns({w}).ok());
  EXPECT_EQ(Branch("b1"), (Pairs{{1, 1001}, {2, 1002}, {3, 6003}, {4, 6004}}));
  EXPECT_EQ(Current(), (Pairs{{1, 1001}, {2, 1002}, {3, 1003}, {4, 1004}}));
  EXPECT_TRUE(Branch("b2").empty());
  absl::StatusOr<std::vector<HistoryEvent>> range = store().ReadBranchEvents("run", "b1", 2, 4, 10);
  ASSERT_TRUE(range.ok()) << range.status();
  ASSERT_EQ(range->size(), 2u);
  EXPECT_EQ(range->front().event_id(), 2);

  // Appending an event the branch has already fails the whole commit.
  RunWrite again = RunChange("wf", "run", 3);
  again.branch_appends.push_back({"b1", Theirs(4, 5)});
  again.events = Events("run", 5, 5);
  EXPECT_EQ(WriteRuns({again}).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(StoredVersion("wf", "run"), 2);
  EXPECT_EQ(Current().size(), 4u);
  EXPECT_EQ(Branch("b1").size(), 4u);
}

TEST_P(HistoryBranchTest, AForkOfAStoredBranchCopiesThatBranchsPrefix) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run", 3));
  RunWrite w = RunChange("wf", "run", 2);
  w.branch_forks.push_back({"b1", 2});
  w.branch_appends.push_back({"b1", Theirs(3, 5)});
  ASSERT_TRUE(WriteRuns({w}).ok());
  // A third history that left b1 after its event 3.
  RunWrite third = RunChange("wf", "run", 3);
  third.branch_forks.push_back({"b2", 3, "b1"});
  std::vector<HistoryEvent> fourth = Theirs(4, 4);
  fourth.front().set_task_id(9004);
  third.branch_appends.push_back({"b2", fourth});
  ASSERT_TRUE(WriteRuns({third}).ok());
  EXPECT_EQ(Branch("b2"), (Pairs{{1, 1001}, {2, 1002}, {3, 6003}, {4, 9004}}));
  EXPECT_EQ(Branch("b1"), (Pairs{{1, 1001}, {2, 1002}, {3, 6003}, {4, 6004}, {5, 6005}}));
  EXPECT_EQ(Current(), (Pairs{{1, 1001}, {2, 1002}, {3, 1003}}));
}

TEST_P(HistoryBranchTest, ASwitchKeepsTheLoserWholeAndMakesTheWinnerTheHistory) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run", 3));
  // A new winner after event 2: the old branch is kept as "b0", theirs 3..5 follow.
  RunWrite w = RunChange("wf", "run", 2);
  w.branch_switch = BranchSwitch{"b0", 2, ""};
  w.events = Theirs(3, 5);
  ASSERT_TRUE(WriteRuns({w}).ok());
  EXPECT_EQ(Current(), (Pairs{{1, 1001}, {2, 1002}, {3, 6003}, {4, 6004}, {5, 6005}}));
  EXPECT_EQ(Branch("b0"), (Pairs{{1, 1001}, {2, 1002}, {3, 1003}}));

  // Back to the stored branch (it grew meanwhile): promoted whole, the other kept as "b1".
  RunWrite grow = RunChange("wf", "run", 3);
  grow.branch_appends.push_back({"b0", Events("run", 4, 6)});
  ASSERT_TRUE(WriteRuns({grow}).ok());
  RunWrite back = RunChange("wf", "run", 4);
  back.branch_switch = BranchSwitch{"b1", 2, "b0"};
  back.events = Events("run", 7, 7);
  ASSERT_TRUE(WriteRuns({back}).ok());
  EXPECT_EQ(Current(),
            (Pairs{{1, 1001}, {2, 1002}, {3, 1003}, {4, 1004}, {5, 1005}, {6, 1006}, {7, 1007}}));
  EXPECT_TRUE(Branch("b0").empty());
  EXPECT_EQ(Branch("b1"), (Pairs{{1, 1001}, {2, 1002}, {3, 6003}, {4, 6004}, {5, 6005}}));
}

TEST_P(HistoryBranchTest, AFailedRunCheckWritesNoBranchAndDeletionRemovesThemAll) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run", 3));
  RunWrite stale = RunChange("wf", "run", 5);  // the stored version is 1, not 4
  stale.branch_switch = BranchSwitch{"b0", 1, ""};
  stale.branch_forks.push_back({"b1", 2});
  stale.events = Theirs(2, 3);
  EXPECT_EQ(WriteRuns({stale}).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(Current(), (Pairs{{1, 1001}, {2, 1002}, {3, 1003}}));
  EXPECT_TRUE(Branch("b0").empty());
  EXPECT_TRUE(Branch("b1").empty());

  RunWrite fork = RunChange("wf", "run", 2);
  fork.branch_forks.push_back({"b1", 3});
  ASSERT_TRUE(WriteRuns({fork}).ok());
  ASSERT_EQ(Branch("b1").size(), 3u);
  ASSERT_TRUE(store().DeleteRun(1, range_id_, "ns", "wf", "run").ok());
  EXPECT_TRUE(Branch("b1").empty());
  EXPECT_TRUE(Current().empty());
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(HistoryBranchTest);

}  // namespace
}  // namespace tock::persistence::conformance
