// Temporal's limit on the Worker Deployment reads (frontend.globalNamespaceWorkerDeploymentReadRPS,
// reference/api_2026.md §3.3.7): DescribeWorkerDeployment and DescribeWorkerDeploymentVersion
// at most 50 a second per namespace, with a burst of ten seconds' worth (burst ratio 10).
// Over it: RESOURCE_EXHAUSTED (ResourceExhaustedFailure, cause RPS_LIMIT, scope NAMESPACE)
// "Worker Deployment Read API rate limit exceeded for namespace "NAME"".
//
// Thread safety: safe from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "lib/common/clock.h"
#include "server-core/security/rate_limit_bucket.h"

namespace tock::server::deployments {

class ReadLimiter {
 public:
  static constexpr int64_t kReadsPerSecond = 50;
  static constexpr int64_t kBurstSeconds = 10;

  explicit ReadLimiter(Clock& clock) : clock_(clock) {}

  // Takes a read of the namespace (`namespace_id`, named `namespace_name` in the refusal).
  absl::Status Admit(const std::string& namespace_id, const std::string& namespace_name);

 private:
  Clock& clock_;
  std::mutex mu_;
  // One per namespace that read (namespaces are resolved first: as many as exist).
  std::map<std::string, std::unique_ptr<security::RateLimitBucket>> buckets_;
};

}  // namespace tock::server::deployments
