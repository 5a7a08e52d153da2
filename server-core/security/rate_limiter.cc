#include "server-core/security/rate_limiter.h"

#include <mutex>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "lib/common/status.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock::server::security {
namespace {

namespace enums = temporal::api::enums::v1;

std::unique_ptr<RateLimitBucket> BucketOf(int64_t rate) {
  return rate > 0 ? std::make_unique<RateLimitBucket>(rate) : nullptr;
}

// Temporal's refusals: "namespace rate limit exceeded" / "service rate limit exceeded", here
// with the limit that refused the call, so that an operator knows which key to change.
absl::Status Exhausted(enums::ResourceExhaustedScope scope, std::string message) {
  temporal::api::errordetails::v1::ResourceExhaustedFailure detail;
  detail.set_cause(enums::RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT);
  detail.set_scope(scope);
  return WithDetail(absl::ResourceExhaustedError(std::move(message)), detail);
}

}  // namespace

RateLimiter::Buckets::Buckets(int64_t calls_rate, int64_t polls_rate)
    : calls(BucketOf(calls_rate)), polls(BucketOf(polls_rate)) {}

RateLimiter::RateLimiter(const RateLimitConfig& config, Clock& clock)
    : config_(config),
      clock_(clock),
      host_(config.frontend_rps, config.frontend_poll_rps),
      overflow_(config.namespace_rps, config.namespace_poll_rps) {}

int64_t RateLimiter::NamespaceRate(absl::string_view name, bool poll) const {
  const auto& overrides =
      poll ? config_.namespace_poll_rps_overrides : config_.namespace_rps_overrides;
  // std::map<std::string, ...> has no lookup by string_view without a key copy; the lookup
  // runs once per namespace (at its first call), so the copy does not matter.
  auto it = overrides.find(std::string(name));
  if (it != overrides.end()) return it->second;
  return poll ? config_.namespace_poll_rps : config_.namespace_rps;
}

std::unique_ptr<RateLimiter::Buckets> RateLimiter::BucketsFor(absl::string_view name) const {
  return std::make_unique<Buckets>(NamespaceRate(name, false), NamespaceRate(name, true));
}

bool RateLimiter::TakeNamespaceToken(absl::string_view name, bool poll, int64_t now,
                                     int64_t* limit) {
  auto take = [&](Buckets& b) {
    RateLimitBucket* bucket = poll ? b.polls.get() : b.calls.get();
    if (bucket == nullptr || bucket->Allow(now)) return true;
    *limit = bucket->rate();
    return false;
  };
  Shard& shard = shards_[absl::HashOf(name) % kShards];
  {
    std::shared_lock lock(shard.mu);
    auto it = shard.namespaces.find(name);
    if (it != shard.namespaces.end()) return take(*it->second);
  }
  std::unique_lock lock(shard.mu);
  auto it = shard.namespaces.find(name);
  if (it == shard.namespaces.end()) {
    if (shard.namespaces.size() >= kMaxNamespaces / kShards) {
      absl::erase_if(shard.namespaces, [now](const auto& entry) {
        const Buckets& b = *entry.second;
        return (b.calls == nullptr || b.calls->Idle(now)) && (b.polls == nullptr || b.polls->Idle(now));
      });
    }
    if (shard.namespaces.size() >= kMaxNamespaces / kShards) {
      lock.unlock();
      // Rates of an overridden namespace that does not fit: the default ones (rare: every
      // slot of its shard busy within the last second).
      return take(overflow_);
    }
    it = shard.namespaces.emplace(std::string(name), BucketsFor(name)).first;
  }
  return take(*it->second);
}

// Which key set the limit of a refused namespace (on refusals only: it copies the name).
std::string RateLimiter::OverrideKey(absl::string_view name, bool poll) const {
  const auto& overrides =
      poll ? config_.namespace_poll_rps_overrides : config_.namespace_rps_overrides;
  if (overrides.contains(std::string(name))) {
    return poll ? "limits.namespace_poll_rps_overrides" : "limits.namespace_rps_overrides";
  }
  return poll ? "limits.namespace_poll_rps" : "limits.namespace_rps";
}

absl::Status RateLimiter::Check(absl::string_view namespace_name, bool poll) {
  const int64_t now = absl::ToUnixNanos(clock_.Now());
  if (!namespace_name.empty()) {
    int64_t limit = 0;
    if (!TakeNamespaceToken(namespace_name, poll, now, &limit)) {
      return Exhausted(enums::RESOURCE_EXHAUSTED_SCOPE_NAMESPACE,
                       absl::StrCat("namespace rate limit exceeded: namespace \"", namespace_name,
                                    "\" is limited to ", limit,
                                    poll ? " polls" : " requests", " per second on this host (",
                                    OverrideKey(namespace_name, poll), ")"));
    }
  }
  RateLimitBucket* host = poll ? host_.polls.get() : host_.calls.get();
  if (host != nullptr && !host->Allow(now)) {
    return Exhausted(enums::RESOURCE_EXHAUSTED_SCOPE_SYSTEM,
                     absl::StrCat("service rate limit exceeded: this host is limited to ",
                                  host->rate(), poll ? " polls" : " requests", " per second (",
                                  poll ? "limits.frontend_poll_rps" : "limits.frontend_rps", ")"));
  }
  return absl::OkStatus();
}

size_t RateLimiter::NamespacesHeld() const {
  size_t n = 0;
  for (const Shard& shard : shards_) {
    std::shared_lock lock(shard.mu);
    n += shard.namespaces.size();
  }
  return n;
}

}  // namespace tock::server::security
