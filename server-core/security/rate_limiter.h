// The frontend's rate limits on one host (rate_limit_config.h): a bucket for the host's calls
// and one for its polls, and per namespace the same two, made at the namespace's first call.
//
// A call takes a token from its namespace's bucket first and then from the host's, so that
// a namespace over its limit is refused without spending the host's tokens: one noisy
// namespace cannot use up the host for the others. (A call the host refuses has spent its
// namespace's token; that namespace is then at the host's limit anyway.)
//
// The namespaces' buckets live in 16 shards (by the name's hash), each a map under a
// reader-writer lock held only while a token is taken (a few nanoseconds; writers only for a
// namespace's first call). The maps are bounded: a shard full of namespaces drops those idle
// for a second (such a bucket is full, the same as a new one) and, when none is, the calls of
// the namespaces that do not fit share one pair of buckets at the default rates. So a client
// inventing namespace names costs at most kMaxNamespaces buckets.
//
// Thread safety: Check from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "lib/common/clock.h"
#include "server-core/security/rate_limit_bucket.h"
#include "server-core/security/rate_limit_config.h"

namespace tock::server::security {

class RateLimiter {
 public:
  static constexpr size_t kShards = 16;
  static constexpr size_t kMaxNamespaces = 16 * 1024;

  // `config.enabled` is assumed (an unconfigured server installs no limiter).
  RateLimiter(const RateLimitConfig& config, Clock& clock);

  // Takes the tokens of one call: OK, or RESOURCE_EXHAUSTED with Temporal's
  // ResourceExhaustedFailure (cause RPS_LIMIT; scope NAMESPACE or SYSTEM) and a message naming
  // the limit. `namespace_name` "" (a call without one, or a name too long to be one): the
  // host's bucket only.
  absl::Status Check(absl::string_view namespace_name, bool poll);

  // Buckets of namespaces held now (tests).
  size_t NamespacesHeld() const;

 private:
  struct Buckets {
    Buckets(int64_t calls_rate, int64_t polls_rate);
    std::unique_ptr<RateLimitBucket> calls;  // null: no limit
    std::unique_ptr<RateLimitBucket> polls;
  };
  struct Shard {
    mutable std::shared_mutex mu;
    absl::flat_hash_map<std::string, std::unique_ptr<Buckets>> namespaces;
  };

  // Takes the namespace's token; false when it has none left (then `limit` is its rate).
  bool TakeNamespaceToken(absl::string_view name, bool poll, int64_t now, int64_t* limit);
  std::unique_ptr<Buckets> BucketsFor(absl::string_view name) const;
  int64_t NamespaceRate(absl::string_view name, bool poll) const;
  std::string OverrideKey(absl::string_view name, bool poll) const;

  const RateLimitConfig config_;
  Clock& clock_;
  Buckets host_;
  std::array<Shard, kShards> shards_;
  Buckets overflow_;  // the namespaces that do not fit, at the default rates
};

}  // namespace tock::server::security
