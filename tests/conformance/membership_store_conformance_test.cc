// The MembershipStore contract (membership_store.h) on every backend: heartbeats measured on
// the database's clock, listing freshest first, forgetting long-dead rows, leaving, and the
// shard rows that AcquireShard writes.
#include <gtest/gtest.h>

#include <thread>

#include "server-core/persistence/membership_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

class MembershipStoreTest : public BackendTest {};

TEST_P(MembershipStoreTest, AHeartbeatCreatesThenRefreshesTheHostsRow) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  MembershipStore& m = p->membership();
  const absl::Time started = absl::FromUnixMillis(1'700'000'000'123);
  ASSERT_TRUE(m.Heartbeat("host-a", "127.0.0.1:7233", started).ok());
  absl::StatusOr<std::vector<HostRecord>> hosts = m.ListHosts(absl::Hours(48));
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  ASSERT_EQ(hosts->size(), 1u);
  EXPECT_EQ((*hosts)[0].host_id, "host-a");
  EXPECT_EQ((*hosts)[0].address, "127.0.0.1:7233");
  EXPECT_EQ((*hosts)[0].session_start, started);
  EXPECT_GE((*hosts)[0].heartbeat_age, absl::ZeroDuration());
  EXPECT_LT((*hosts)[0].heartbeat_age, absl::Seconds(5));
  const absl::Time first_beat = (*hosts)[0].last_heartbeat;

  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  // A second heartbeat updates the row (a new address too), it never adds one.
  ASSERT_TRUE(m.Heartbeat("host-a", "127.0.0.2:7233", started).ok());
  hosts = m.ListHosts(absl::Hours(48));
  ASSERT_TRUE(hosts.ok());
  ASSERT_EQ(hosts->size(), 1u);
  EXPECT_EQ((*hosts)[0].address, "127.0.0.2:7233");
  EXPECT_GE((*hosts)[0].last_heartbeat - first_beat, absl::Milliseconds(25));
}

TEST_P(MembershipStoreTest, HostsAreListedFreshestFirstWithTheirAges) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  MembershipStore& m = p->membership();
  ASSERT_TRUE(m.Heartbeat("old", "127.0.0.1:1", absl::Now()).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  ASSERT_TRUE(m.Heartbeat("new", "127.0.0.1:2", absl::Now()).ok());
  absl::StatusOr<std::vector<HostRecord>> hosts = m.ListHosts(absl::Hours(48));
  ASSERT_TRUE(hosts.ok());
  ASSERT_EQ(hosts->size(), 2u);
  EXPECT_EQ((*hosts)[0].host_id, "new");
  EXPECT_EQ((*hosts)[1].host_id, "old");
  EXPECT_GE((*hosts)[1].heartbeat_age - (*hosts)[0].heartbeat_age, absl::Milliseconds(50));
}

TEST_P(MembershipStoreTest, RowsOlderThanForgetAfterAreDeleted) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  MembershipStore& m = p->membership();
  ASSERT_TRUE(m.Heartbeat("dead", "127.0.0.1:1", absl::Now()).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  ASSERT_TRUE(m.Heartbeat("alive", "127.0.0.1:2", absl::Now()).ok());
  absl::StatusOr<std::vector<HostRecord>> hosts = m.ListHosts(absl::Milliseconds(80));
  ASSERT_TRUE(hosts.ok());
  ASSERT_EQ(hosts->size(), 1u);
  EXPECT_EQ((*hosts)[0].host_id, "alive");
  // Gone for good, not only hidden.
  hosts = m.ListHosts(absl::Hours(48));
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(hosts->size(), 1u);
}

TEST_P(MembershipStoreTest, LeaveRemovesOnlyThatHost) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  MembershipStore& m = p->membership();
  ASSERT_TRUE(m.Heartbeat("a", "127.0.0.1:1", absl::Now()).ok());
  ASSERT_TRUE(m.Heartbeat("b", "127.0.0.1:2", absl::Now()).ok());
  ASSERT_TRUE(m.Leave("a").ok());
  ASSERT_TRUE(m.Leave("never-there").ok());
  absl::StatusOr<std::vector<HostRecord>> hosts = m.ListHosts(absl::Hours(48));
  ASSERT_TRUE(hosts.ok());
  ASSERT_EQ(hosts->size(), 1u);
  EXPECT_EQ((*hosts)[0].host_id, "b");
}

TEST_P(MembershipStoreTest, ShardsListTheirOwnerAndRangeId) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->executions().AcquireShard(2, "host-b").ok());
  ASSERT_TRUE(p->executions().AcquireShard(1, "host-a").ok());
  ASSERT_TRUE(p->executions().AcquireShard(2, "host-c").ok());
  absl::StatusOr<std::vector<ShardRecord>> shards = p->membership().ListShards();
  ASSERT_TRUE(shards.ok()) << shards.status();
  ASSERT_EQ(shards->size(), 2u);
  EXPECT_EQ((*shards)[0].shard_id, 1);
  EXPECT_EQ((*shards)[0].owner, "host-a");
  EXPECT_EQ((*shards)[1].shard_id, 2);
  EXPECT_EQ((*shards)[1].owner, "host-c");
  EXPECT_EQ((*shards)[1].range_id, (*shards)[0].range_id + 1);
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(MembershipStoreTest);

}  // namespace
}  // namespace tock::persistence
