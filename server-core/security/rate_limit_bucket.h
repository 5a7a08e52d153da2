// A token bucket that holds one second's worth of tokens (burst = rate), taken without a
// lock: one atomic word per bucket, so every call of a namespace can share it.
//
// It is the generic cell rate algorithm: instead of a count of tokens and a refill time, the
// bucket keeps the time `tat` at which it would be full again. A call is allowed when, after
// it, the bucket would be full again within one second (the burst); it then moves `tat` one
// interval (1 s / rate) on. A bucket idle for a second is full (tat <= now), which is also
// what a new bucket is: such a bucket may be dropped and made again without any difference.
//
// Temporal's frontend buckets hold two seconds' worth (burst ratio 2); one second here keeps
// a namespace within its rate over any second, which is what an operator who writes
// `namespace_rps: 100` expects.
//
// Thread safety: Allow and Idle from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace tock::server::security {

class RateLimitBucket {
 public:
  // `rate` tokens per second, at least 1; it holds `burst_seconds` seconds' worth.
  explicit RateLimitBucket(int64_t rate, int64_t burst_seconds = 1)
      : rate_(rate), interval_ns_(kSecondNs / rate), burst_ns_(interval_ns_ * rate * burst_seconds) {}

  // Takes a token at `now_ns` (nanoseconds on any clock that does not go back much; a clock
  // that goes back only makes the bucket stricter for that long). False: none left.
  bool Allow(int64_t now_ns) {
    int64_t tat = tat_.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t next = std::max(tat, now_ns) + interval_ns_;
      if (next - now_ns > burst_ns_) return false;
      // On failure `tat` is reloaded: another caller took a token meanwhile.
      if (tat_.compare_exchange_weak(tat, next, std::memory_order_relaxed)) return true;
    }
  }

  // Full again at `now_ns`: nothing taken within the last second.
  bool Idle(int64_t now_ns) const { return tat_.load(std::memory_order_relaxed) <= now_ns; }

  int64_t rate() const { return rate_; }

 private:
  static constexpr int64_t kSecondNs = 1'000'000'000;
  const int64_t rate_;
  const int64_t interval_ns_;
  const int64_t burst_ns_;
  std::atomic<int64_t> tat_{0};
};

}  // namespace tock::server::security
