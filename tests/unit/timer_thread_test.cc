// TimerThread: callbacks run in deadline order; a timer due before the one the thread
// sleeps toward wakes it; a later one (which does not wake it) still runs.
#include "lib/common/timer_thread.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace tock {
namespace {

class Fired {
 public:
  std::function<void()> Note(std::string name) {
    return [this, name] {
      std::lock_guard lock(mu_);
      order_.push_back(name);
      cv_.notify_all();
    };
  }
  // The names fired once `count` have, or what fired within 30 s.
  std::vector<std::string> WaitFor(size_t count) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(30), [&] { return order_.size() >= count; });
    return order_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> order_;
};

TEST(TimerThreadTest, AnEarlierTimerScheduledWhileTheThreadSleepsRunsFirst) {
  Clock& clock = RealClock();
  TimerThread timers(clock);
  Fired fired;
  const absl::Time now = clock.Now();
  timers.Schedule(now + absl::Hours(1), fired.Note("in an hour"));
  timers.Schedule(now + absl::Milliseconds(200), fired.Note("later"));  // a new earliest
  timers.Schedule(now + absl::Milliseconds(300), fired.Note("latest"));  // does not wake it
  timers.Schedule(now + absl::Milliseconds(20), fired.Note("soon"));    // a new earliest
  timers.Schedule(now + absl::Milliseconds(20), fired.Note("soon too"));  // same time
  EXPECT_EQ(fired.WaitFor(4), (std::vector<std::string>{"soon", "soon too", "later", "latest"}));
}

// The thread idle on an empty queue (its one timer ran) is woken by the next timer: a wake-up
// decided by comparing the insertion with begin() taken before it was lost (an unsequenced
// ==), and the server's first timers after a start never ran.
TEST(TimerThreadTest, ATimerScheduledWhenTheQueueIsEmptyRuns) {
  Clock& clock = RealClock();
  TimerThread timers(clock);
  Fired fired;
  timers.Schedule(clock.Now() + absl::Milliseconds(5), fired.Note("first"));
  ASSERT_EQ(fired.WaitFor(1).size(), 1u);
  timers.Schedule(clock.Now() + absl::Milliseconds(5), fired.Note("second"));
  EXPECT_EQ(fired.WaitFor(2), (std::vector<std::string>{"first", "second"}));
}

TEST(TimerThreadTest, ACancelledTimerDoesNotRunAndTheNextStillDoes) {
  Clock& clock = RealClock();
  TimerThread timers(clock);
  Fired fired;
  const absl::Time now = clock.Now();
  TimerThread::Id first = timers.Schedule(now + absl::Milliseconds(10), fired.Note("cancelled"));
  timers.Schedule(now + absl::Milliseconds(50), fired.Note("kept"));
  EXPECT_TRUE(timers.Cancel(first));
  EXPECT_FALSE(timers.Cancel(first));
  EXPECT_EQ(fired.WaitFor(1), (std::vector<std::string>{"kept"}));
}

}  // namespace
}  // namespace tock
