// A few threads of its own for calls that block on slow I/O (reading an archive from S3,
// archiving on request), so they never hold gRPC's callback threads: with a store that
// times out, a read may wait minutes, and the server must go on answering everything else.
//
// The queue is bounded: a pool that is that far behind refuses more (Run returns false)
// rather than growing without limit; callers answer RESOURCE_EXHAUSTED or retry later.
//
// Thread safety: Run may be called from any thread. Stop (and the destructor) runs what is
// queued (each job must end on its own: its I/O is bounded by timeouts), then joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tock {

class BlockingPool {
 public:
  // `name`: the threads' name in top, gdb and /proc (at most 15 characters kept).
  explicit BlockingPool(int threads, size_t max_queued = 1024, const char* name = nullptr);
  ~BlockingPool() { Stop(); }
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  // Queues `job`; false (and `job` dropped) when max_queued jobs wait already or the pool
  // is stopping.
  [[nodiscard]] bool Run(std::function<void()> job);
  // Runs what is queued, then ends the threads; later jobs are dropped. Idempotent.
  void Stop();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  const size_t max_queued_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tock
