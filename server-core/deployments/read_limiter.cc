#include "server-core/deployments/read_limiter.h"

#include "absl/strings/str_cat.h"
#include "lib/common/status.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock::server::deployments {

absl::Status ReadLimiter::Admit(const std::string& namespace_id, const std::string& namespace_name) {
  const int64_t now = absl::ToUnixNanos(clock_.Now());
  {
    std::lock_guard lock(mu_);
    std::unique_ptr<security::RateLimitBucket>& bucket = buckets_[namespace_id];
    if (bucket == nullptr) {
      bucket = std::make_unique<security::RateLimitBucket>(kReadsPerSecond, kBurstSeconds);
    }
    if (bucket->Allow(now)) return absl::OkStatus();
  }
  temporal::api::errordetails::v1::ResourceExhaustedFailure detail;
  detail.set_cause(temporal::api::enums::v1::RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT);
  detail.set_scope(temporal::api::enums::v1::RESOURCE_EXHAUSTED_SCOPE_NAMESPACE);
  return WithDetail(absl::ResourceExhaustedError(absl::StrCat(
                        "Worker Deployment Read API rate limit exceeded for namespace \"",
                        namespace_name, "\"")),
                    detail);
}

}  // namespace tock::server::deployments
