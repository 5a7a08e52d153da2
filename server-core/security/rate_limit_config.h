// The rate limits of the frontend (`limits:` in tock-server's YAML, next to the request and
// workflow limits of history/request_limits.h), after Temporal's frontend.rps (per host) and
// frontend.namespaceRPS (per namespace and host), with long polls in buckets of their own:
//
//   limits:
//     frontend_rps: 2400              # calls per second on this host, polls apart
//     frontend_poll_rps: 2400         # polls per second on this host
//     namespace_rps: 2400             # calls per second of one namespace on this host
//     namespace_poll_rps: 2400        # polls per second of one namespace on this host
//     namespace_rps_overrides: {orders: 100}
//     namespace_poll_rps_overrides: {orders: 20}
//
// Off unless one of these keys is given: the test suites and benches make thousands of calls
// a second on one host, and a limit nobody asked for would slow them (and any user's load
// test) down. With any key given, the others take Temporal's defaults (2,400; a poll limit
// absent takes the value of its call limit); 0 turns one bucket off.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"

namespace tock::server::security {

struct RateLimitConfig {
  // Temporal's frontend.rps and frontend.namespaceRPS.
  static constexpr int64_t kDefaultRps = 2400;
  // Any more is no limit at all on one host.
  static constexpr int64_t kMaxRps = 1'000'000;
  // Overrides listed at most (each namespace's buckets are made at its first call).
  static constexpr size_t kMaxOverrides = 10'000;

  bool enabled = false;  // any rate key given
  int64_t frontend_rps = kDefaultRps;  // 0: no limit
  int64_t frontend_poll_rps = kDefaultRps;
  int64_t namespace_rps = kDefaultRps;
  int64_t namespace_poll_rps = kDefaultRps;
  std::map<std::string, int64_t> namespace_rps_overrides;
  std::map<std::string, int64_t> namespace_poll_rps_overrides;

  // For the banner: "2400 calls/s and 2400 polls/s per host, 1200 and 1200 per namespace,
  // 1 namespace overridden" (0 reads "no limit").
  std::string Summary() const;

  // The keys of `limits:` read here.
  static const std::set<std::string>& Keys();
};

// Reads the rate keys of the `limits:` mapping (other keys are left to the caller, which
// checks that every key is known). INVALID_ARGUMENT "config limits.KEY: ..." naming the key,
// its range and, for an override, the namespace.
absl::Status ParseRateLimits(const YAML::Node& limits, RateLimitConfig& out);

}  // namespace tock::server::security
