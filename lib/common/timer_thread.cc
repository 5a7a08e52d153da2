#include "lib/common/timer_thread.h"

#include <pthread.h>

namespace tock {

TimerThread::TimerThread(Clock& clock) : clock_(clock), thread_([this] { Loop(); }) {}

TimerThread::~TimerThread() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

TimerThread::Id TimerThread::Schedule(absl::Time when, std::function<void()> callback) {
  Id id;
  bool earliest;
  {
    std::lock_guard lock(mu_);
    id = next_id_++;
    // At the end of the timers of the same time: only a new earliest time changes how long
    // the thread sleeps.
    // (Two statements: the operands of == are unsequenced, and begin() taken before the
    // insertion is the old first.)
    auto inserted = queue_.emplace(when, id);
    earliest = inserted == queue_.begin();
    pending_.emplace(id, std::make_pair(when, std::move(callback)));
  }
  // A wake-up costs a context switch (a commit arms two or three timers, a long poll one):
  // a timer due after the one the thread sleeps toward waits for that wake-up.
  if (earliest) cv_.notify_all();
  return id;
}

bool TimerThread::Cancel(Id id) {
  std::lock_guard lock(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end()) return false;
  auto range = queue_.equal_range(it->second.first);
  for (auto q = range.first; q != range.second; ++q) {
    if (q->second == id) {
      queue_.erase(q);
      break;
    }
  }
  pending_.erase(it);
  return true;
}

void TimerThread::Wake() { cv_.notify_all(); }

void TimerThread::Loop() {
  pthread_setname_np(pthread_self(), "tock-timers");
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      cv_.wait(lock);
      continue;
    }
    absl::Time now = clock_.Now();
    auto first = queue_.begin();
    if (first->first > now) {
      // Sleep at most a second at a time so a ManualClock that moved is noticed.
      absl::Duration wait = std::min(first->first - now, absl::Seconds(1));
      cv_.wait_for(lock, absl::ToChronoNanoseconds(wait));
      continue;
    }
    Id id = first->second;
    queue_.erase(first);
    auto it = pending_.find(id);
    std::function<void()> callback = std::move(it->second.second);
    pending_.erase(it);
    lock.unlock();
    callback();
    lock.lock();
  }
}

}  // namespace tock
