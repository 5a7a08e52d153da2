// The membership monitor over a real (in-memory SQLite) membership table: the ring follows
// the alive rows, errors never shrink the view, a host that cannot heartbeat counts itself
// out, and a graceful stop removes the row. Faults come from a store wrapper that fails on
// demand; time for the monitor's own bookkeeping from a manual clock, and the database's
// clock (by which heartbeats age) moved by hand through the same wrapper, so that a row
// goes stale when a test says so, never because the machine was slow.
#include "server-core/membership/monitor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "server-core/persistence/persistence.h"

namespace tock::server::membership {
namespace {

class FailingMembershipStore : public persistence::MembershipStore {
 public:
  explicit FailingMembershipStore(persistence::MembershipStore& inner) : inner_(inner) {}
  absl::Status Heartbeat(const std::string& host_id, const std::string& address,
                         absl::Time session_start) override {
    if (fail_heartbeat) return absl::UnavailableError("injected: database down");
    absl::Status s = inner_.Heartbeat(host_id, address, session_start);
    std::lock_guard lock(mu_);
    if (s.ok()) beat_at_[host_id] = database_ahead_;
    return s;
  }
  absl::StatusOr<std::vector<persistence::HostRecord>> ListHosts(absl::Duration forget) override {
    if (fail_list) return absl::UnavailableError("injected: read failed");
    absl::StatusOr<std::vector<persistence::HostRecord>> rows = inner_.ListHosts(forget);
    if (!rows.ok()) return rows;
    std::lock_guard lock(mu_);
    for (persistence::HostRecord& h : *rows) h.heartbeat_age += database_ahead_ - beat_at_[h.host_id];
    return rows;
  }
  // The database's clock moves `d` on (a fake for time): every row heartbeating before is
  // that much older when listed; a heartbeat through this store makes its row fresh again.
  void AdvanceDatabaseClock(absl::Duration d) {
    std::lock_guard lock(mu_);
    database_ahead_ += d;
  }
  absl::Status Leave(const std::string& host_id) override { return inner_.Leave(host_id); }
  absl::StatusOr<std::vector<persistence::ShardRecord>> ListShards() override {
    return inner_.ListShards();
  }
  std::atomic<bool> fail_heartbeat{false};
  std::atomic<bool> fail_list{false};

 private:
  persistence::MembershipStore& inner_;
  std::mutex mu_;
  absl::Duration database_ahead_;                   // of the real database's clock
  std::map<std::string, absl::Duration> beat_at_;  // database_ahead_ at each host's heartbeat
};

class MembershipMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = persistence::OpenPersistence(persistence::PersistenceConfig{});
    ASSERT_TRUE(opened.ok()) << opened.status();
    persistence_ = std::move(*opened);
    store_ = std::make_unique<FailingMembershipStore>(persistence_->membership());
  }

  std::unique_ptr<MembershipMonitor> Monitor(MembershipConfig config) {
    return std::make_unique<MembershipMonitor>(*store_, config, "self-id", "127.0.0.1:7001",
                                               clock_.Now(), clock_, NullLogger());
  }

  // A ring hand-over counter and the last ring handed.
  MembershipMonitor::Listener Record() {
    return [this](std::shared_ptr<const HashRing> ring) {
      ++handed_;
      last_ = std::move(ring);
    };
  }

  static MembershipConfig Config() {
    MembershipConfig c;
    c.heartbeat = absl::Hours(1);  // the tests tick by hand
    c.cutoff = absl::Seconds(30);  // rows go stale by AdvanceDatabaseClock, not by waiting
    c.refresh = absl::Minutes(1);
    return c;
  }

  std::unique_ptr<persistence::Persistence> persistence_;
  std::unique_ptr<FailingMembershipStore> store_;
  ManualClock clock_;
  int handed_ = 0;
  std::shared_ptr<const HashRing> last_;
};

using Hosts = std::vector<std::string>;

TEST_F(MembershipMonitorTest, StartHandsOverARingOfThisHost) {
  auto m = Monitor(Config());
  ASSERT_TRUE(m->Start(Record()).ok());
  ASSERT_EQ(handed_, 1);
  EXPECT_EQ(last_->hosts(), Hosts{"127.0.0.1:7001"});
  EXPECT_EQ(m->ring()->hosts(), Hosts{"127.0.0.1:7001"});
  m->Stop();
}

TEST_F(MembershipMonitorTest, AStartWithoutTheDatabaseFails) {
  store_->fail_heartbeat = true;
  auto m = Monitor(Config());
  absl::Status s = m->Start(Record());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(handed_, 0);
}

TEST_F(MembershipMonitorTest, TheRingFollowsOtherHostsJoiningAndGoingStale) {
  auto m = Monitor(Config());
  ASSERT_TRUE(m->Start(Record()).ok());
  ASSERT_TRUE(store_->Heartbeat("other-id", "127.0.0.1:7002", clock_.Now()).ok());
  ASSERT_TRUE(m->Tick().ok());
  EXPECT_EQ(handed_, 2);
  EXPECT_EQ(last_->hosts(), (Hosts{"127.0.0.1:7001", "127.0.0.1:7002"}));

  // Nothing changed: no hand-over before the refresh period.
  ASSERT_TRUE(m->Tick().ok());
  EXPECT_EQ(handed_, 2);

  // The other host stops heartbeating; short of the cutoff (database time) it is still in.
  store_->AdvanceDatabaseClock(absl::Seconds(20));
  ASSERT_TRUE(m->Tick().ok());
  EXPECT_EQ(handed_, 2);
  EXPECT_EQ(m->ring()->hosts().size(), 2u) << "stale only after the cutoff";
  // Past the cutoff it is out.
  store_->AdvanceDatabaseClock(absl::Seconds(11));
  ASSERT_TRUE(m->Tick().ok());
  EXPECT_EQ(handed_, 3);
  EXPECT_EQ(last_->hosts(), Hosts{"127.0.0.1:7001"});
  // Still listed (an operator sees it) until forget_after.
  EXPECT_EQ(m->hosts().size(), 2u);
  m->Stop();
}

TEST_F(MembershipMonitorTest, AFailedReadKeepsTheLastViewInsteadOfStandingAlone) {
  auto m = Monitor(Config());
  ASSERT_TRUE(m->Start(Record()).ok());
  ASSERT_TRUE(store_->Heartbeat("other-id", "127.0.0.1:7002", clock_.Now()).ok());
  ASSERT_TRUE(m->Tick().ok());
  ASSERT_EQ(last_->hosts().size(), 2u);

  store_->fail_list = true;
  store_->AdvanceDatabaseClock(absl::Seconds(31));  // the other row is stale now
  EXPECT_FALSE(m->Tick().ok());
  EXPECT_EQ(handed_, 2);
  EXPECT_EQ(m->ring()->hosts().size(), 2u) << "an error must not make this host take every shard";
  m->Stop();
}

TEST_F(MembershipMonitorTest, AHostThatCannotHeartbeatPastTheCutoffCountsItselfOut) {
  auto m = Monitor(Config());
  ASSERT_TRUE(m->Start(Record()).ok());
  store_->fail_heartbeat = true;
  // Within the cutoff: the view stays.
  clock_.Advance(absl::Seconds(20));
  EXPECT_FALSE(m->Tick().ok());
  EXPECT_EQ(m->ring()->hosts(), Hosts{"127.0.0.1:7001"});
  // Past it: the others have taken its shards; it gives up its own.
  clock_.Advance(absl::Seconds(20));
  EXPECT_FALSE(m->Tick().ok());
  EXPECT_TRUE(last_->hosts().empty());
  EXPECT_EQ(m->ring()->OwnerOfShard(1), "");
  // The database is back: this host is in again.
  store_->fail_heartbeat = false;
  ASSERT_TRUE(m->Tick().ok());
  EXPECT_EQ(last_->hosts(), Hosts{"127.0.0.1:7001"});
  m->Stop();
}

TEST_F(MembershipMonitorTest, TheRingIsHandedOverAgainAfterTheRefreshPeriod) {
  auto m = Monitor(Config());
  ASSERT_TRUE(m->Start(Record()).ok());
  ASSERT_TRUE(m->Tick().ok());
  EXPECT_EQ(handed_, 1);
  clock_.Advance(absl::Minutes(1));
  ASSERT_TRUE(m->Tick().ok());
  EXPECT_EQ(handed_, 2);
  m->Stop();
}

// A listener that could not act on the ring (it failed to take a shard) asks for it again:
// the next heartbeat hands it over, unchanged, without waiting for the refresh period; the
// one after does not (asking once means once).
TEST_F(MembershipMonitorTest, AListenerThatAsksGetsTheRingAgainAtTheNextHeartbeat) {
  auto m = Monitor(Config());
  bool ask = true;
  ASSERT_TRUE(m->Start([&](std::shared_ptr<const HashRing>) {
                 ++handed_;
                 if (ask) m->HandAgainAtNextHeartbeat();
                 ask = false;
               }).ok());
  EXPECT_EQ(handed_, 1);
  ASSERT_TRUE(m->Tick().ok());
  EXPECT_EQ(handed_, 2);
  ASSERT_TRUE(m->Tick().ok());
  EXPECT_EQ(handed_, 2);
  m->Stop();
}

TEST_F(MembershipMonitorTest, StopRemovesThisHostsRow) {
  auto m = Monitor(Config());
  ASSERT_TRUE(m->Start(Record()).ok());
  ASSERT_EQ(persistence_->membership().ListHosts(absl::Hours(1))->size(), 1u);
  m->Stop();
  EXPECT_TRUE(persistence_->membership().ListHosts(absl::Hours(1))->empty());
}

TEST_F(MembershipMonitorTest, TheBackgroundThreadHeartbeats) {
  MembershipConfig c = Config();
  c.heartbeat = absl::Milliseconds(20);
  auto m = Monitor(c);
  ASSERT_TRUE(m->Start(Record()).ok());
  const absl::Time first = persistence_->membership().ListHosts(absl::Hours(1))->front().last_heartbeat;
  bool advanced = false;
  for (int i = 0; i < 200 && !advanced; ++i) {  // at most 2 s
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    advanced = persistence_->membership().ListHosts(absl::Hours(1))->front().last_heartbeat > first;
  }
  EXPECT_TRUE(advanced);
  m->Stop();
}

}  // namespace
}  // namespace tock::server::membership
