// The renewal of a shard's task-id range (ShardController::NextTaskId when the block is used
// up) on an in-memory SQLite store, with blocks of a few ids so that tests use them up: ids
// keep increasing across renewals and owners, a renewal that finds the shard taken gives it
// up, and commits written while the range is renewed are never fenced out by it.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server-core/history/shard_controller.h"
#include "server-core/persistence/persistence.h"
#include "tests/support/forwarding_stores.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;

class RecordingListener : public ShardListener {
 public:
  void OnShardAcquired(int32_t shard) override { events.push_back({'+', shard}); }
  void OnShardReleased(int32_t shard) override { events.push_back({'-', shard}); }
  std::vector<std::pair<char, int32_t>> events;
};

// Forwards to a store, except that the first `lost_renewal_replies` renewals are made and
// then answered DEADLINE_EXCEEDED (a reply lost on the way back).
class LosingRenewalReplies : public tock::testing::ForwardingExecutionStore {
 public:
  using ForwardingExecutionStore::ForwardingExecutionStore;
  int lost_renewal_replies = 0;

  absl::Status RenewShardRange(int32_t shard_id, int64_t range_id,
                               const std::string& owner) override {
    absl::Status s = inner_.RenewShardRange(shard_id, range_id, owner);
    if (lost_renewal_replies == 0) return s;
    --lost_renewal_replies;
    return absl::DeadlineExceededError("the reply was lost");
  }
};

class ShardRangeRenewalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = persistence::OpenPersistence({});  // SQLite in memory
    ASSERT_TRUE(opened.ok()) << opened.status();
    p_ = std::move(*opened);
  }
  persistence::ExecutionStore& store() { return p_->executions(); }

  // A new run of shard 1 whose events carry `ids` (drawn by the caller), fenced as the
  // history engine fences its commits: with the range id held from just before the write
  // until it is answered.
  absl::Status WriteNewRun(ShardController& shards, const std::string& workflow_id,
                           const std::vector<int64_t>& ids) {
    persistence::Commit commit;
    commit.shard_id = 1;
    persistence::RunWrite run;
    auto* exec = run.state.mutable_execution();
    exec->set_namespace_id("ns");
    exec->set_workflow_id(workflow_id);
    exec->set_run_id("run-" + workflow_id);
    exec->set_status(enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
    run.state.set_db_version(1);
    run.state.set_next_event_id(static_cast<int64_t>(ids.size()) + 1);
    run.current_run_change = persistence::CurrentRunChange::kCreate;
    for (size_t i = 0; i < ids.size(); ++i) {
      persistence::HistoryEvent& e = run.events.emplace_back();
      e.set_event_id(static_cast<int64_t>(i) + 1);
      e.set_task_id(ids[i]);
      e.set_event_type(i == 0 ? enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
                              : enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
    }
    commit.runs.push_back(std::move(run));
    ShardController::RangeHold hold = shards.HoldRange(1);
    commit.range_id = hold.range_id();
    return store().Write(commit);
  }

  std::unique_ptr<persistence::Persistence> p_;
};

TEST_F(ShardRangeRenewalTest, IdsIncreaseAcrossRenewalsAndTheStoredRangeIdMoves) {
  ShardController shards(store(), 1, "host-a", /*block_size=*/8);
  RecordingListener listener;
  shards.SetListener(&listener);
  ASSERT_TRUE(shards.AcquireAll().ok());
  listener.events.clear();
  const int64_t first_range = shards.RangeId(1);

  std::vector<int64_t> ids;
  for (int i = 0; i < 8 * 3 + 1; ++i) ids.push_back(shards.NextTaskId(1));
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]) << "at " << i;
  // Each block of 8 starts its range's ids; the 25th id is the third renewal's first.
  EXPECT_EQ(ids[0], first_range << 20);
  EXPECT_EQ(ids[7], (first_range << 20) + 7);
  EXPECT_EQ(ids[8], (first_range + 1) << 20);
  EXPECT_EQ(ids[16], (first_range + 2) << 20);
  EXPECT_EQ(ids[24], (first_range + 3) << 20);
  EXPECT_EQ(shards.RangeId(1), first_range + 3);
  EXPECT_TRUE(listener.events.empty()) << "a renewal neither gives up nor takes the shard";

  // The stored range id moved with it: a commit fenced with the old one is refused, one
  // fenced with the renewed one is written.
  persistence::Commit stale;
  stale.shard_id = 1;
  stale.range_id = first_range;
  EXPECT_EQ(store().Write(stale).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(WriteNewRun(shards, "wf", {ids[24], shards.NextTaskId(1)}).ok());

  // The next owner starts above every id this one handed out.
  ShardController next_owner(store(), 1, "host-b", 8);
  ASSERT_TRUE(next_owner.AcquireAll().ok());
  EXPECT_EQ(next_owner.RangeId(1), first_range + 4);
  EXPECT_GT(next_owner.NextTaskId(1), ids.back() + 1);
}

TEST_F(ShardRangeRenewalTest, ARenewalAfterAStealGivesTheShardUpAndHandsOutNoMoreIds) {
  ShardController old_owner(store(), 1, "host-a", /*block_size=*/4);
  RecordingListener listener;
  old_owner.SetListener(&listener);
  ASSERT_TRUE(old_owner.AcquireAll().ok());
  listener.events.clear();
  const int64_t old_range = old_owner.RangeId(1);
  ShardController thief(store(), 1, "host-b", 4);
  ASSERT_TRUE(thief.AcquireAll().ok());
  ASSERT_EQ(thief.RangeId(1), old_range + 1);

  // The old owner does not know yet: it uses up its block, then its renewal finds the shard
  // taken.
  std::vector<int64_t> old_ids;
  for (int i = 0; i < 4; ++i) old_ids.push_back(old_owner.NextTaskId(1));
  EXPECT_EQ(old_ids.back(), (old_range << 20) + 3);
  EXPECT_EQ(old_owner.NextTaskId(1), ShardController::kNotOwned);
  EXPECT_FALSE(old_owner.Owns(1));
  EXPECT_EQ(old_owner.RangeId(1), ShardController::kNotOwned);
  EXPECT_EQ(listener.events, (std::vector<std::pair<char, int32_t>>{{'-', 1}}));
  EXPECT_EQ(old_owner.NextTaskId(1), ShardController::kNotOwned);
  EXPECT_EQ(old_owner.HoldRange(1).range_id(), ShardController::kNotOwned);

  // The failed renewal changed nothing: the thief's range is still the stored one, and its
  // ids are above the old owner's.
  const int64_t thief_id = thief.NextTaskId(1);
  EXPECT_GT(thief_id, old_ids.back());
  EXPECT_TRUE(WriteNewRun(thief, "wf", {thief_id}).ok());
  EXPECT_EQ(thief.RangeId(1), old_range + 1);
}

TEST_F(ShardRangeRenewalTest, ARenewalWhoseReplyWasLostIsTriedAgainAndKeepsTheShard) {
  LosingRenewalReplies losing(store());
  ShardController shards(losing, 1, "host-a", /*block_size=*/2);
  ASSERT_TRUE(shards.AcquireAll().ok());
  const int64_t range = shards.RangeId(1);
  EXPECT_EQ(shards.NextTaskId(1), range << 20);
  EXPECT_EQ(shards.NextTaskId(1), (range << 20) + 1);

  losing.lost_renewal_replies = 1;
  // The renewal happened but this host cannot know: no id, the shard kept.
  EXPECT_EQ(shards.NextTaskId(1), ShardController::kNotOwned);
  EXPECT_TRUE(shards.Owns(1));
  EXPECT_EQ(shards.RangeId(1), range);
  // The next call renews again; the store answers that it is done.
  EXPECT_EQ(shards.NextTaskId(1), (range + 1) << 20);
  EXPECT_EQ(shards.RangeId(1), range + 1);
  EXPECT_TRUE(WriteNewRun(shards, "wf", {(range + 1) << 20}).ok());
}

// A commit holding the range id is written with it even when a renewal is asked for
// meanwhile: the renewal waits for the hold to end.
TEST_F(ShardRangeRenewalTest, ARenewalWaitsForTheCommitsHoldingTheRangeId) {
  ShardController shards(store(), 1, "host-a", /*block_size=*/1);
  ASSERT_TRUE(shards.AcquireAll().ok());
  const int64_t range = shards.RangeId(1);
  const int64_t id = shards.NextTaskId(1);  // the block's only id
  ShardController::RangeHold hold = shards.HoldRange(1);
  ASSERT_EQ(hold.range_id(), range);

  int64_t renewed_id = 0;
  std::thread renewing([&] { renewed_id = shards.NextTaskId(1); });
  persistence::Commit commit;
  commit.shard_id = 1;
  commit.range_id = hold.range_id();
  persistence::RunWrite run;
  run.state.mutable_execution()->set_namespace_id("ns");
  run.state.mutable_execution()->set_workflow_id("wf");
  run.state.mutable_execution()->set_run_id("run");
  run.state.set_db_version(1);
  run.current_run_change = persistence::CurrentRunChange::kCreate;
  run.events.emplace_back().set_task_id(id);
  run.events.back().set_event_id(1);
  commit.runs.push_back(std::move(run));
  EXPECT_TRUE(store().Write(commit).ok());
  EXPECT_EQ(shards.RangeId(1), range) << "renewed while a commit held the range id";
  { ShardController::RangeHold done = std::move(hold); }
  renewing.join();
  EXPECT_EQ(renewed_id, (range + 1) << 20);
  EXPECT_EQ(shards.HoldRange(1).range_id(), range + 1);
}

// Several threads commit while the block holds 8 ids: renewals happen between their commits
// all the time, and every commit is written, every id once.
TEST_F(ShardRangeRenewalTest, ConcurrentWritersDuringRenewalsAllSucceedWithUniqueIds) {
  ShardController shards(store(), 1, "host-a", /*block_size=*/8);
  ASSERT_TRUE(shards.AcquireAll().ok());
  const int64_t first_range = shards.RangeId(1);
  constexpr int kThreads = 4;
  constexpr int kCommits = 60;
  constexpr int kIdsPerCommit = 3;
  std::vector<std::vector<int64_t>> drawn(kThreads);
  std::vector<std::vector<absl::Status>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCommits; ++c) {
        std::vector<int64_t> ids;
        for (int i = 0; i < kIdsPerCommit; ++i) ids.push_back(shards.NextTaskId(1));
        for (size_t i = 1; i < ids.size(); ++i) {
          if (ids[i] <= ids[i - 1]) results[t].push_back(absl::InternalError("ids went down"));
        }
        drawn[t].insert(drawn[t].end(), ids.begin(), ids.end());
        results[t].push_back(WriteNewRun(shards, absl::StrCat("wf-", t, "-", c), ids));
      }
    });
  }
  for (std::thread& t : threads) t.join();

  std::set<int64_t> unique;
  for (int t = 0; t < kThreads; ++t) {
    for (const absl::Status& s : results[t]) ASSERT_TRUE(s.ok()) << s;
    for (int64_t id : drawn[t]) {
      EXPECT_GE(id, first_range << 20);
      EXPECT_LT(id & ((int64_t{1} << 20) - 1), 8) << "an id past its block: " << id;
      EXPECT_TRUE(unique.insert(id).second) << "id handed out twice: " << id;
    }
  }
  EXPECT_EQ(unique.size(), size_t{kThreads * kCommits * kIdsPerCommit});
  // 720 ids in blocks of 8: at least 89 renewals (more when threads left ids unused).
  EXPECT_GE(shards.RangeId(1), first_range + kThreads * kCommits * kIdsPerCommit / 8 - 1);
  // What was written carries the ids drawn.
  std::vector<persistence::HistoryEvent> events = *store().ReadEvents("run-wf-2-7", 1, 10, 10);
  ASSERT_EQ(events.size(), size_t{kIdsPerCommit});
  for (int i = 0; i < kIdsPerCommit; ++i) EXPECT_EQ(events[i].task_id(), drawn[2][7 * 3 + i]);
}

// A run `run_id` of workflow `workflow_id` with one event, as a commit of shard 1.
persistence::Commit OneEventRun(const std::string& workflow_id, const std::string& run_id,
                                persistence::CurrentRunChange change, int64_t range_id,
                                int64_t task_id) {
  persistence::Commit commit;
  commit.shard_id = 1;
  commit.range_id = range_id;
  persistence::RunWrite run;
  auto* exec = run.state.mutable_execution();
  exec->set_namespace_id("ns");
  exec->set_workflow_id(workflow_id);
  exec->set_run_id(run_id);
  exec->set_status(temporal::api::enums::v1::WORKFLOW_EXECUTION_STATUS_RUNNING);
  run.state.set_db_version(1);
  run.state.set_next_event_id(2);
  run.current_run_change = change;
  persistence::HistoryEvent& e = run.events.emplace_back();
  e.set_event_id(1);
  e.set_task_id(task_id);
  e.set_event_type(temporal::api::enums::v1::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  commit.runs.push_back(std::move(run));
  return commit;
}

// A write that runs into a key the database holds is refused with a message of ours: SQLite's
// ("UNIQUE constraint failed: history_events.run_id, ...") names tables and columns, and
// these messages reach clients (review P2-6).
TEST_F(ShardRangeRenewalTest, AKeyThatExistsIsRefusedWithoutTheDatabasesText) {
  ShardController shards(store(), 1, "host-a", 8);
  ASSERT_TRUE(shards.AcquireAll().ok());
  ShardController::RangeHold hold = shards.HoldRange(1);
  using persistence::CurrentRunChange;
  persistence::Commit first = OneEventRun("wf-a", "run-1", CurrentRunChange::kCreate,
                                          hold.range_id(), shards.NextTaskId(1));
  ASSERT_TRUE(store().Write(first).ok());
  // The same run id under another workflow: its first event's key is taken.
  persistence::Commit same_run_id = OneEventRun("wf-b", "run-1", CurrentRunChange::kCreate,
                                                hold.range_id(), shards.NextTaskId(1));
  const absl::Status event_taken = store().Write(same_run_id);
  // The same run again, as a new row.
  persistence::Commit again = OneEventRun("wf-a", "run-1", CurrentRunChange::kNone,
                                          hold.range_id(), shards.NextTaskId(1));
  const absl::Status run_taken = store().Write(again);
  for (const absl::Status& s : {event_taken, run_taken}) {
    EXPECT_FALSE(s.ok());
    EXPECT_FALSE(absl::StrContains(s.message(), "UNIQUE")) << s;
    EXPECT_FALSE(absl::StrContains(s.message(), "history_events")) << s;
    EXPECT_FALSE(absl::StrContains(s.message(), "executions.")) << s;
  }
  EXPECT_EQ(event_taken.message(), "event 1 of run run-1 exists already") << event_taken;
  EXPECT_EQ(run_taken.message(), "run run-1 exists already") << run_taken;
}

}  // namespace
}  // namespace tock::server::history
