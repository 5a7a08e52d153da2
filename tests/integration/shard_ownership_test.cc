// Shard ownership as several hosts on one database see it: a host owns exactly the shards it
// is given, taking one fences the previous owner out, giving one up tells the engine, and a
// host told by a failed write that it lost a shard stops using it.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "server-core/history/shard_controller.h"
#include "server-core/membership/hash_ring.h"
#include "server-core/persistence/persistence.h"
#include "tests/support/process.h"

namespace tock::server::history {
namespace {

class RecordingListener : public ShardListener {
 public:
  void OnShardAcquired(int32_t shard) override { events.push_back({'+', shard}); }
  void OnShardReleased(int32_t shard) override { events.push_back({'-', shard}); }
  std::vector<std::pair<char, int32_t>> events;
};

class ShardOwnershipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    persistence::PersistenceConfig config;
    config.sqlite_path = dir_.File("tock.db");
    auto opened = persistence::OpenPersistence(config);
    ASSERT_TRUE(opened.ok()) << opened.status();
    p_ = std::move(*opened);
  }
  persistence::ExecutionStore& store() { return p_->executions(); }

  tock::testing::TempDir dir_;
  std::unique_ptr<persistence::Persistence> p_;
};

TEST_F(ShardOwnershipTest, AHostOwnsNothingUntilTold) {
  ShardController host(store(), 8, "a");
  EXPECT_TRUE(host.OwnedShards().empty());
  EXPECT_EQ(host.RangeId(3), ShardController::kNotOwned);
  EXPECT_FALSE(host.Owns(3));
  EXPECT_EQ(host.RangeId(0), ShardController::kNotOwned);
  EXPECT_EQ(host.RangeId(9), ShardController::kNotOwned);
}

TEST_F(ShardOwnershipTest, SetOwnedTakesAndGivesUpExactlyTheDifference) {
  ShardController host(store(), 8, "a");
  RecordingListener listener;
  host.SetListener(&listener);
  ASSERT_TRUE(host.SetOwned({1, 3, 5}).ok());
  EXPECT_EQ(host.OwnedShards(), (std::vector<int32_t>{1, 3, 5}));
  const int64_t range3 = host.RangeId(3);
  EXPECT_GT(range3, 0);
  EXPECT_EQ(host.NextTaskId(3) >> 20, range3);

  listener.events.clear();
  ASSERT_TRUE(host.SetOwned({3, 5, 7, 42}).ok());  // 42 is not a shard: ignored
  EXPECT_EQ(host.OwnedShards(), (std::vector<int32_t>{3, 5, 7}));
  EXPECT_EQ(host.RangeId(3), range3) << "a shard kept is not taken again";
  // Releases come before acquisitions.
  EXPECT_EQ(listener.events, (std::vector<std::pair<char, int32_t>>{{'-', 1}, {'+', 7}}));
  EXPECT_EQ(host.RangeId(1), ShardController::kNotOwned);
}

TEST_F(ShardOwnershipTest, TakingAShardFencesItsPreviousOwnerOut) {
  ShardController a(store(), 4, "a");
  ShardController b(store(), 4, "b");
  ASSERT_TRUE(a.SetOwned({1, 2, 3, 4}).ok());
  const int64_t a_range = a.RangeId(2);
  ASSERT_TRUE(b.SetOwned({2}).ok());
  EXPECT_EQ(b.RangeId(2), a_range + 1);
  // A's writes to shard 2 now fail in the store: its range id is stale.
  persistence::Commit commit;
  commit.shard_id = 2;
  commit.range_id = a.RangeId(2);
  EXPECT_EQ(store().Write(commit).code(), absl::StatusCode::kFailedPrecondition);
  // Told so, A gives the shard up (once: a later loss report of an old range is ignored).
  RecordingListener listener;
  a.SetListener(&listener);
  a.Lost(2, a_range);
  a.Lost(2, a_range);
  EXPECT_FALSE(a.Owns(2));
  EXPECT_EQ(listener.events, (std::vector<std::pair<char, int32_t>>{{'-', 2}}));
  // B's task ids continue above A's: ids increase across owners.
  EXPECT_GT(b.NextTaskId(2), a_range << 20);
}

TEST_F(ShardOwnershipTest, ALossReportOfAnOlderRangeLeavesTheNewOwnershipAlone) {
  ShardController a(store(), 2, "a");
  ASSERT_TRUE(a.SetOwned({1}).ok());
  const int64_t first = a.RangeId(1);
  ASSERT_TRUE(a.SetOwned({}).ok());
  ASSERT_TRUE(a.SetOwned({1}).ok());  // taken again: a newer range
  a.Lost(1, first);
  EXPECT_TRUE(a.Owns(1));
  EXPECT_GT(a.RangeId(1), first);
}

// Three hosts applying the same ring own every shard exactly once.
TEST_F(ShardOwnershipTest, HostsApplyingOneRingOwnEveryShardOnce) {
  const std::vector<std::string> names = {"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"};
  membership::HashRing ring(names);
  std::vector<std::unique_ptr<ShardController>> hosts;
  for (const std::string& n : names) {
    hosts.push_back(std::make_unique<ShardController>(store(), 64, n));
    ASSERT_TRUE(hosts.back()->SetOwned(ring.ShardsOf(n, 64)).ok());
  }
  std::map<int32_t, int> owners;
  for (auto& h : hosts) {
    for (int32_t s : h->OwnedShards()) ++owners[s];
  }
  ASSERT_EQ(owners.size(), 64u);
  for (const auto& [shard, count] : owners) EXPECT_EQ(count, 1) << shard;
  // And the stored owner of each shard is the ring's.
  auto rows = p_->membership().ListShards();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 64u);
  for (const auto& row : *rows) {
    EXPECT_EQ(ShardOwnerAddress(row.owner), ring.OwnerOfShard(row.shard_id));
  }
}

}  // namespace
}  // namespace tock::server::history
