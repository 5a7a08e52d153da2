#include "server-core/persistence/observed/fault_injector.h"

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"

namespace tock::persistence {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t ThresholdOf(double rate) {
  if (!(rate > 0)) return 0;
  if (rate >= 1) return UINT64_MAX;
  return static_cast<uint64_t>(std::ldexp(rate, 64));
}

uint64_t SeedOf(uint64_t configured) {
  if (configured != 0) return configured;
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace

FaultInjector::FaultInjector(const FaultInjectionConfig& config, MetricsRegistry& metrics,
                             Logger& logger)
    : threshold_(ThresholdOf(config.rate)), seed_(SeedOf(config.seed)), logger_(logger) {
  const char* help = "Store calls failed on purpose by persistence.fault_injection.";
  unavailable_ =
      metrics.Counter("persistence_injected_faults_total", help, {{"kind", "unavailable"}});
  timeout_ =
      metrics.Counter("persistence_injected_faults_total", help, {{"kind", "timeout_after"}});
}

InjectedFault FaultInjector::Next(absl::string_view operation) {
  if (threshold_ == 0 || !armed()) return InjectedFault::kNone;
  const uint64_t draw =
      SplitMix64(seed_ + draws_.fetch_add(1, std::memory_order_relaxed) * 0x9e3779b97f4a7c15ULL);
  if (draw >= threshold_ && threshold_ != UINT64_MAX) return InjectedFault::kNone;
  // A second, independent bit picks the kind.
  const bool after = (SplitMix64(draw) & 1) != 0;
  const InjectedFault fault =
      after ? InjectedFault::kTimeoutAfter : InjectedFault::kUnavailableBefore;
  (after ? timeout_ : unavailable_).Increment();
  logger_.Debug("injected persistence fault", {{"operation", std::string(operation)},
                                               {"kind", after ? "timeout_after" : "unavailable"}});
  return fault;
}

absl::Status FaultInjector::StatusOf(InjectedFault fault, absl::string_view operation) {
  if (fault == InjectedFault::kTimeoutAfter) {
    return absl::DeadlineExceededError(absl::StrCat(
        "persistence ", operation, " timed out (injected fault; the call may have completed)"));
  }
  return absl::UnavailableError(
      absl::StrCat("persistence ", operation, " is unavailable (injected fault)"));
}

}  // namespace tock::persistence
