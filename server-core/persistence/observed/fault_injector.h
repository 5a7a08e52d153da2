// Persistence fault injection (Temporal's `persistence.faultInjection`), for tests: with
// `persistence: {fault_injection: {rate: 0.01}}` about 1 % of the store calls fail, half of
// them each way:
//   - kUnavailableBefore: UNAVAILABLE, and the call is not made (a connection refused);
//   - kTimeoutAfter: the call IS made, then DEADLINE_EXCEEDED is returned (a reply lost on
//     the way back: the write happened but the caller cannot know; the ambiguous case real
//     databases produce, which retries must survive).
// Faults start only when Arm() is called: the server arms it once it has started, so a
// start (shards, recovery, the default namespace) is never failed by injection.
//
// The sequence of decisions is fixed by the seed (a counter hashed with SplitMix64, no lock);
// which call gets which decision depends on the order in which threads reach the store.
//
// Thread safety: every method is safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "lib/common/log.h"
#include "lib/common/metrics.h"
#include "server-core/persistence/persistence.h"

namespace tock::persistence {

enum class InjectedFault { kNone, kUnavailableBefore, kTimeoutAfter };

class FaultInjector {
 public:
  // `config.rate` in [0, 1]; seed 0 picks a random seed. Counts the injected faults in
  // persistence_injected_faults_total{kind} and logs each at debug.
  FaultInjector(const FaultInjectionConfig& config, MetricsRegistry& metrics, Logger& logger);

  void Arm() { armed_.store(true, std::memory_order_release); }
  bool armed() const { return armed_.load(std::memory_order_acquire); }
  uint64_t seed() const { return seed_; }

  // The decision for the next call of `operation` (for the log line).
  InjectedFault Next(absl::string_view operation);

  // The status a call fails with for `fault` (not kNone).
  static absl::Status StatusOf(InjectedFault fault, absl::string_view operation);

 private:
  const uint64_t threshold_;  // a draw below it is a fault; rate * 2^64
  const uint64_t seed_;
  std::atomic<uint64_t> draws_{0};
  std::atomic<bool> armed_{false};
  metrics::Counter unavailable_;
  metrics::Counter timeout_;
  Logger& logger_;
};

}  // namespace tock::persistence
