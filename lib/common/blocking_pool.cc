#include "lib/common/blocking_pool.h"

#include <pthread.h>

#include <string>

namespace tock {

BlockingPool::BlockingPool(int threads, size_t max_queued, const char* name)
    : max_queued_(max_queued) {
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this, name] {
      // Linux keeps 15 characters of a thread's name.
      if (name != nullptr) pthread_setname_np(pthread_self(), std::string(name).substr(0, 15).c_str());
      while (true) {
        std::function<void()> job;
        {
          std::unique_lock lock(mu_);
          cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
          if (jobs_.empty()) return;  // stopping, nothing left
          job = std::move(jobs_.front());
          jobs_.pop_front();
        }
        job();
      }
    });
  }
}

void BlockingPool::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

bool BlockingPool::Run(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || jobs_.size() >= max_queued_) return false;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

}  // namespace tock
