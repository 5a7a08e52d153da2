// Several tock-server hosts on one PostgreSQL database (the run's shared server, a fresh
// database per test): each heartbeats a membership row, and the history shards follow the
// ring of the alive hosts. A joining host takes its share from the others; a host killed
// with SIGKILL is taken over after the cutoff; a host stopped gracefully leaves at once.
// What each host owns is read back from the database (shards and membership rows).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "absl/time/clock.h"
#include <nlohmann/json.hpp>
#include "server-core/membership/hash_ring.h"
#include "server-core/persistence/persistence.h"
#include "tests/support/postgres_server.h"
#include "tests/support/process.h"

namespace tock::testing {
namespace {

constexpr int32_t kShards = 32;

class MultiHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.Create(TOCK_POSTGRES_FIXTURE_FILE, "tock_hosts")) << db_.error();
    url_ = db_.url();
    UseShards(kShards);
  }
  void UseShards(int32_t shards) {
    shards_ = shards;
    config_ = dir_.Write("hosts.yaml", "persistence:\n  engine: postgres\n  postgres:\n    url: \"" +
                                           url_ +
                                           "\"\n    max_connections: 8\n"
                                           "membership:\n  heartbeat: 200ms\n  cutoff: 1s\n"
                                           "history:\n  shards: " +
                                           std::to_string(shards) + "\n");
  }
  void TearDown() override {
    hosts_.clear();  // stops every host before the database goes
    persistence_.reset();
  }

  ServerProcess& StartHost() {
    auto host = std::make_unique<ServerProcess>(TOCK_SERVER_BIN);
    EXPECT_TRUE(host->Start({"--config", config_})) << host->error();
    hosts_.push_back(std::move(host));
    return *hosts_.back();
  }

  persistence::Persistence& Db() {
    if (!persistence_) {
      persistence::PersistenceConfig c;
      c.engine = "postgres";
      c.postgres_url = url_;
      c.postgres_max_connections = 2;
      auto opened = persistence::OpenPersistence(c);
      EXPECT_TRUE(opened.ok()) << opened.status();
      if (opened.ok()) persistence_ = std::move(*opened);
    }
    return *persistence_;
  }

  // Owner of each shard as stored.
  std::map<int32_t, std::string> Owners() {
    std::map<int32_t, std::string> owners;
    auto rows = Db().membership().ListShards();
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (rows.ok()) {
      // The owner's address: the rows name address#process id (history::ShardOwner).
      for (const auto& r : *rows) owners[r.shard_id] = r.owner.substr(0, r.owner.rfind('#'));
    }
    return owners;
  }

  // The owners the ring of `alive` gives.
  std::map<int32_t, std::string> RingOwners(const std::vector<std::string>& alive) const {
    server::membership::HashRing ring(alive);
    std::map<int32_t, std::string> owners;
    for (int32_t s = 1; s <= shards_; ++s) owners[s] = ring.OwnerOfShard(s);
    return owners;
  }

  // Waits (at most `limit`) until the stored owners are the ring's of `alive`.
  ::testing::AssertionResult OwnersBecome(const std::vector<std::string>& alive,
                                          absl::Duration limit) {
    const std::map<int32_t, std::string> want = RingOwners(alive);
    std::map<int32_t, std::string> got;
    const absl::Time until = absl::Now() + limit;
    while (absl::Now() < until) {
      got = Owners();
      if (got == want) return ::testing::AssertionSuccess();
      absl::SleepFor(absl::Milliseconds(100));
    }
    int differ = 0;
    for (int32_t s = 1; s <= shards_; ++s) differ += got[s] != want.at(s);
    return ::testing::AssertionFailure() << differ << " of " << shards_
                                         << " shards are not where the ring puts them";
  }

  FreshPostgresDatabase db_;  // first: dropped after everything that uses it
  std::string url_, config_;
  int32_t shards_ = kShards;
  TempDir dir_;
  std::vector<std::unique_ptr<ServerProcess>> hosts_;
  std::unique_ptr<persistence::Persistence> persistence_;
};

TEST_F(MultiHostTest, ShardsFollowTheRingAsHostsJoinDieAndLeave) {
  ServerProcess& a = StartHost();
  ASSERT_TRUE(a.running());
  // Alone, A owns every shard, from its start on.
  EXPECT_TRUE(OwnersBecome({a.address()}, absl::Seconds(5)));

  ServerProcess& b = StartHost();
  ASSERT_TRUE(b.running());
  EXPECT_TRUE(OwnersBecome({a.address(), b.address()}, absl::Seconds(10)));
  auto hosts = Db().membership().ListHosts(absl::Hours(1));
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(hosts->size(), 2u);

  // A third joins: it takes its share, only from the others (the ring's property, checked
  // here on what the hosts actually stored).
  std::map<int32_t, std::string> before = Owners();
  ServerProcess& c = StartHost();
  ASSERT_TRUE(c.running());
  EXPECT_TRUE(OwnersBecome({a.address(), b.address(), c.address()}, absl::Seconds(10)));
  for (const auto& [shard, owner] : Owners()) {
    if (owner != before[shard]) EXPECT_EQ(owner, c.address()) << "shard " << shard;
  }
  // Any host answers `tock cluster members` for all: three alive, their shards adding up.
  ProcessResult members = RunProcess({TOCK_CLI_BIN, "--address", b.address(), "cluster",
                                      "members", "-o", "json"});
  ASSERT_EQ(members.exit_code, 0) << members.err;
  const nlohmann::json listed = nlohmann::json::parse(members.out, nullptr, false);
  ASSERT_TRUE(listed.is_array()) << members.out;
  EXPECT_EQ(listed.size(), 3u);
  int total = 0;
  for (const auto& m : listed) {
    EXPECT_EQ(m.value("alive", false), true) << m.dump();
    total += m.value("shardsOwned", 0);
  }
  EXPECT_EQ(total, kShards);

  // B dies without a word: after the cutoff the others take its shards.
  int b_shards = 0;
  for (const auto& [shard, owner] : Owners()) b_shards += owner == b.address();
  EXPECT_GT(b_shards, 0);
  b.Kill();
  EXPECT_TRUE(OwnersBecome({a.address(), c.address()}, absl::Seconds(10)));

  // C stops gracefully: it leaves its row, A takes everything without waiting for a cutoff.
  const absl::Time stop = absl::Now();
  EXPECT_EQ(c.Stop(), 0) << c.stderr_text();
  EXPECT_TRUE(OwnersBecome({a.address()}, absl::Seconds(5)));
  EXPECT_LT(absl::Now() - stop, absl::Seconds(5));
}

// A fourth host joins three: it takes about a quarter of the shards (within 17 % of
// 1/4, the bound; 2,048 shards keep the sampling spread of the ring well inside it),
// and every shard that moved went to it: the others keep theirs.
TEST_F(MultiHostTest, AFourthHostTakesAQuarterOfTheShardsAllFromTheOthers) {
  UseShards(2048);
  std::vector<std::string> alive;
  for (int i = 0; i < 3; ++i) {
    ServerProcess& host = StartHost();
    ASSERT_TRUE(host.running());
    alive.push_back(host.address());
  }
  ASSERT_TRUE(OwnersBecome(alive, absl::Seconds(30)));
  const std::map<int32_t, std::string> before = Owners();

  ServerProcess& fourth = StartHost();
  ASSERT_TRUE(fourth.running());
  alive.push_back(fourth.address());
  ASSERT_TRUE(OwnersBecome(alive, absl::Seconds(30)));
  int taken = 0;
  for (const auto& [shard, owner] : Owners()) {
    if (owner == before.at(shard)) continue;
    EXPECT_EQ(owner, fourth.address()) << "shard " << shard << " moved between the old hosts";
    ++taken;
  }
  const double share = static_cast<double>(taken) / 2048;
  EXPECT_GE(share, 0.25 * 0.83) << taken << " shards";
  EXPECT_LE(share, 0.25 * 1.17) << taken << " shards";
}

// The database restarts (pg_ctl restart -m fast: every session ends) while two hosts take
// starts: the hosts reconnect by themselves, starts succeed again soon after, and every
// start that was acknowledged, before or after, is there. (A PostgreSQL of its own: the
// run's shared one must not restart under the other tests.)
TEST(MultiHostDatabaseTest, HostsRideOutADatabaseRestartAndLoseNothing) {
  PostgresServer pg;
  ASSERT_TRUE(pg.Start()) << pg.error();
  ASSERT_TRUE(pg.CreateDatabase("tock")) << pg.error();
  TempDir dir;
  const std::string config = dir.Write(
      "hosts.yaml", "persistence:\n  engine: postgres\n  postgres:\n    url: \"" + pg.Url("tock") +
                        "\"\n    max_connections: 4\n"
                        "membership:\n  heartbeat: 200ms\n  cutoff: 1s\n"
                        "history:\n  shards: 16\n");
  std::vector<std::unique_ptr<ServerProcess>> hosts;
  for (int i = 0; i < 2; ++i) {
    hosts.push_back(std::make_unique<ServerProcess>(TOCK_SERVER_BIN));
    ASSERT_TRUE(hosts.back()->Start({"--config", config})) << hosts.back()->error();
  }
  auto start = [&](int i) {
    return RunProcess({TOCK_CLI_BIN, "--address", hosts[i % 2]->address(), "workflow", "start",
                       "--type", "t", "--task-queue", "q", "--workflow-id",
                       "wf-" + std::to_string(i)});
  };

  std::mutex mu;
  std::vector<int> acknowledged;
  std::atomic<bool> done{false};
  std::atomic<int> next{0};
  auto load = [&] {
    while (!done) {
      const int i = next++;
      if (start(i).exit_code == 0) {
        std::lock_guard lock(mu);
        acknowledged.push_back(i);
      }
    }
  };
  std::thread a(load), b(load);
  absl::SleepFor(absl::Seconds(1));
  const size_t before_restart = [&] {
    std::lock_guard lock(mu);
    return acknowledged.size();
  }();
  ASSERT_TRUE(pg.Restart()) << pg.error();
  const absl::Time back = absl::Now();
  // Starts succeed again within seconds of the database's return.
  size_t after_restart = 0;
  while (absl::Now() - back < absl::Seconds(20)) {
    absl::SleepFor(absl::Milliseconds(200));
    std::lock_guard lock(mu);
    after_restart = acknowledged.size();
    if (after_restart >= before_restart + 20) break;
  }
  done = true;
  a.join();
  b.join();
  EXPECT_GT(before_restart, 0u);
  EXPECT_GE(after_restart, before_restart + 20) << "the hosts did not recover from the restart";

  for (int i : acknowledged) {
    ProcessResult described =
        RunProcess({TOCK_CLI_BIN, "--address", hosts[i % 2]->address(), "workflow", "describe",
                    "--workflow-id", "wf-" + std::to_string(i), "-o", "json"});
    EXPECT_EQ(described.exit_code, 0) << "wf-" << i << ": " << described.err;
  }
  for (auto& host : hosts) EXPECT_TRUE(host->running());
}

}  // namespace
}  // namespace tock::testing
