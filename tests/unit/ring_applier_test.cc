// RingApplier: a slow apply never holds up whoever offers a ring (the membership heartbeat),
// and rings offered meanwhile collapse into the newest. The apply is held by a latch the
// test opens: no timing involved.
#include "server-core/membership/ring_applier.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "tests/support/eventually.h"

namespace tock::server::membership {
namespace {

std::shared_ptr<const HashRing> Ring(const std::string& host) {
  return std::make_shared<HashRing>(std::vector<std::string>{host}, 4);
}

class HeldApply {
 public:
  void operator()(std::shared_ptr<const HashRing> ring) {
    std::unique_lock lock(mu_);
    started_.push_back(ring->hosts().front());
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
    applied_.push_back(ring->hosts().front());
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool WaitStarted(size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return started_.size() >= n; });
  }
  std::vector<std::string> applied() {
    std::lock_guard lock(mu_);
    return applied_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  std::vector<std::string> started_, applied_;
};

TEST(RingApplierTest, OfferReturnsWhileAnApplyIsHeldAndOnlyTheNewestWaitingRingIsApplied) {
  HeldApply held;
  RingApplier applier([&](std::shared_ptr<const HashRing> ring) { held(std::move(ring)); });
  applier.Offer(Ring("a"));
  ASSERT_TRUE(held.WaitStarted(1));
  // "a" is being applied and will not finish until the latch opens: offering must not wait.
  auto offers = std::async(std::launch::async, [&] {
    applier.Offer(Ring("b"));
    applier.Offer(Ring("c"));
  });
  ASSERT_EQ(offers.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "Offer waited for the apply in progress";
  held.Open();
  ASSERT_TRUE(testing::Eventually([&] { return held.applied().size() >= 2; }));
  EXPECT_EQ(held.applied(), (std::vector<std::string>{"a", "c"})) << "b was superseded by c";
}

TEST(RingApplierTest, StoppingLetsTheApplyInProgressFinish) {
  HeldApply held;
  auto applier = std::make_unique<RingApplier>(
      [&](std::shared_ptr<const HashRing> ring) { held(std::move(ring)); });
  applier->Offer(Ring("a"));
  ASSERT_TRUE(held.WaitStarted(1));
  auto stopped = std::async(std::launch::async, [&] { applier.reset(); });
  held.Open();
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  ASSERT_FALSE(held.applied().empty()) << "stopped before the apply in progress finished";
  EXPECT_EQ(held.applied().front(), "a");
}

}  // namespace
}  // namespace tock::server::membership
