// The frontend's rate limits around every method a client may call (one wrapper per method,
// installed after the routing wrappers so that it runs before them: a refused call is never
// forwarded to another host or cluster).
//
// Which calls count (rate_limiter.h for the buckets):
// - WorkflowService, OperatorService, AdminService (replication pulls included) and
//   TimerService calls: a timer's creation writes a row of up to 100 KiB and makes an HTTP
//   call, an operator call a namespace change. A call whose request names a namespace (the
//   field the authorizer reads, authz_interceptor.h) counts against that namespace's bucket
//   and the host's, the others (cluster calls) against the host's only. HostService (only
//   other hosts of the database call it) and the health service are not limited;
// - but not GetSystemInfo, which every SDK client calls first and which costs nothing (there
//   is no gRPC health service on the port to exempt);
// - polls (Poll*TaskQueue, PollWorkflowExecutionUpdate, and GetWorkflowExecutionHistory with
//   wait_new_event) in the poll buckets, apart from the other calls: a host full of waiting
//   workers does not refuse starts, and a flood of starts does not starve the workers;
// - not a call another host of the database forwarded (it bears the host secret,
//   routing/peer_credential.h): the host that received it from the client counted it
//   already. Counting it again would halve a namespace's rate whenever its calls are routed.
//   A client sending `tock-forwarded` without the secret is counted like any other.
//   (Calls from this server's own schedules and batches do count, as client calls.)
//
// Thread safety: Install before the server starts; calls from any thread after.
#pragma once

#include "lib/common/clock.h"
#include "server-core/routing/peer_credential.h"
#include "server-core/rpc/dispatcher.h"
#include "server-core/security/rate_limit_config.h"
#include "server-core/security/rate_limiter.h"

namespace tock::server::security {

class RateLimitInterceptor {
 public:
  // `peers` (which must outlive this) recognizes the calls other hosts forwarded.
  RateLimitInterceptor(const RateLimitConfig& config, Clock& clock,
                       const routing::PeerCredential& peers)
      : limiter_(config, clock), peers_(peers) {}

  // Wraps every method of the services above registered in `dispatcher` but GetSystemInfo.
  void Install(rpc::Dispatcher& dispatcher);

  RateLimiter& limiter() { return limiter_; }

 private:
  RateLimiter limiter_;
  const routing::PeerCredential& peers_;
};

}  // namespace tock::server::security
