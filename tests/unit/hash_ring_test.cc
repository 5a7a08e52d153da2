// The ring that places history shards on hosts: deterministic, total, and moving only what
// a joining or leaving host must (seed 004's property test: within ±17 % of 1/(N+1)).
#include "server-core/membership/hash_ring.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tock::server::membership {
namespace {

// Addresses as hosts advertise them; ports vary from run to run in the tests, so the
// properties are checked over many different sets.
std::vector<std::string> Hosts(int n, int seed) {
  std::vector<std::string> hosts;
  for (int i = 0; i < n; ++i) hosts.push_back(absl::StrCat("127.0.0.1:", 20000 + seed * 37 + i * 101));
  return hosts;
}

TEST(HashRingTest, TheSameMembersGiveTheSameOwnersWhateverTheirOrder) {
  std::vector<std::string> hosts = Hosts(5, 1);
  HashRing a(hosts);
  std::vector<std::string> reversed(hosts.rbegin(), hosts.rend());
  reversed.push_back(hosts[2]);  // a duplicate row changes nothing
  HashRing b(reversed);
  for (int32_t shard = 1; shard <= 512; ++shard) {
    EXPECT_EQ(a.OwnerOfShard(shard), b.OwnerOfShard(shard)) << shard;
  }
  EXPECT_EQ(b.hosts().size(), 5u);
}

TEST(HashRingTest, EveryShardHasExactlyOneOwnerAmongTheMembers) {
  std::vector<std::string> hosts = Hosts(3, 2);
  HashRing ring(hosts);
  size_t assigned = 0;
  for (const std::string& h : hosts) assigned += ring.ShardsOf(h, 1024).size();
  EXPECT_EQ(assigned, 1024u);
  for (int32_t shard = 1; shard <= 1024; ++shard) {
    const std::string& owner = ring.OwnerOfShard(shard);
    EXPECT_NE(std::find(hosts.begin(), hosts.end(), owner), hosts.end()) << shard;
  }
}

TEST(HashRingTest, AnEmptyRingOwnsNothing) {
  HashRing ring({});
  EXPECT_EQ(ring.OwnerOfShard(1), "");
  EXPECT_TRUE(ring.ShardsOf("anyone", 16).empty());
}

TEST(HashRingTest, OneHostOwnsEveryShard) {
  HashRing ring({"127.0.0.1:7233"});
  EXPECT_EQ(ring.ShardsOf("127.0.0.1:7233", 64).size(), 64u);
}

// Seed 004's consistent-hashing property: going from N to N+1 hosts, the share of keys that
// move is within ±17 % of 1/(N+1), and every moved key moves to the new host.
TEST(HashRingTest, AJoiningHostTakesAboutItsShareAndOnlyFromTheOthers) {
  constexpr int32_t kShards = 4096;
  for (int n = 1; n <= 8; ++n) {
    for (int seed = 0; seed < 5; ++seed) {
      std::vector<std::string> hosts = Hosts(n + 1, seed);
      const std::string joining = hosts.back();
      HashRing before(std::vector<std::string>(hosts.begin(), hosts.end() - 1));
      HashRing after(hosts);
      int moved = 0;
      for (int32_t shard = 1; shard <= kShards; ++shard) {
        if (before.OwnerOfShard(shard) == after.OwnerOfShard(shard)) continue;
        ++moved;
        EXPECT_EQ(after.OwnerOfShard(shard), joining) << "shard " << shard << " moved elsewhere";
      }
      const double expected = 1.0 / (n + 1);
      const double share = static_cast<double>(moved) / kShards;
      EXPECT_NEAR(share, expected, 0.17 * expected) << n << " hosts + 1, seed " << seed;
    }
  }
}

TEST(HashRingTest, ALeavingHostsShardsGoToTheOthersAndNothingElseMoves) {
  std::vector<std::string> hosts = Hosts(4, 3);
  HashRing before(hosts);
  const std::string leaving = hosts[1];
  hosts.erase(hosts.begin() + 1);
  HashRing after(hosts);
  for (int32_t shard = 1; shard <= 2048; ++shard) {
    if (before.OwnerOfShard(shard) == leaving) {
      EXPECT_NE(after.OwnerOfShard(shard), leaving);
    } else {
      EXPECT_EQ(before.OwnerOfShard(shard), after.OwnerOfShard(shard)) << shard;
    }
  }
}

TEST(HashRingTest, SharesAreEvenWithTheDefaultPoints) {
  std::vector<std::string> hosts = Hosts(4, 4);
  HashRing ring(hosts);
  for (const std::string& h : hosts) {
    const double share = ring.ShardsOf(h, 4096).size() / 4096.0;
    EXPECT_NEAR(share, 0.25, 0.25 * 0.17) << h;
  }
}

}  // namespace
}  // namespace tock::server::membership
