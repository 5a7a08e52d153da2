// Any host accepts any call (issue 11 §3): a call about a run is answered by the owner of
// the run's shard, a poll or a task queue's description by the owner of the queue. The
// router wraps those methods of the dispatcher: when the owner is another host the request
// is sent there as received (bytes, not re-encoded) and its answer passed back; when it is
// this host, the method's own handler runs.
//
// Shards move (a host joins, leaves or dies): a host that does not own what a call is about
// answers UNAVAILABLE "... is not owned by this host" (history/shard_controller.h), and so
// does one that is still acquiring it. The router then looks the owner up again and
// retries, with backoff, until the caller's deadline (at most kRetryBudget when it set
// none): a client sees latency, not an error. A call forwarded by another host is never
// forwarded again (peers.h), so views that disagree for a moment cannot bounce a call.
//
// Thread safety: Install before the server starts; calls then run from any thread.
#pragma once

#include <memory>

#include "lib/common/blocking_pool.h"
#include "lib/common/clock.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/shard_controller.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/routing/peers.h"
#include "server-core/routing/placement.h"
#include "server-core/rpc/dispatcher.h"

namespace tock::server::routing {

class CallRouter {
 public:
  static constexpr absl::Duration kRetryBudget = absl::Seconds(30);

  CallRouter(Placement& placement, Peers& peers, history::ShardController& shards,
             namespaces::NamespaceEngine& namespaces, Clock& clock, TimerThread& timers);
  ~CallRouter();
  // Shutdown: calls waiting for a retry are answered UNAVAILABLE. Call before the timer
  // thread goes. Idempotent.
  void Stop() { retries_.Stop(); }

  // Wraps the methods already registered that are about a run or a task queue.
  void Install(rpc::Dispatcher& dispatcher);
  // Wraps another service's method registered already ("pkg.Service/Method"): a call goes to
  // the owner of the history shard `shard_of` finds in its request (0: answered here, by the
  // handler). The timer service's writes go to the owner of the timer's shard this way.
  void RouteByShard(rpc::Dispatcher& dispatcher, const std::string& method,
                    std::function<int32_t(const grpc::ByteBuffer&)> shard_of) {
    Route(dispatcher, method, [shard_of = std::move(shard_of)](const grpc::ByteBuffer& payload) {
      const int32_t shard = shard_of(payload);
      return shard > 0 ? Target{Target::kShard, shard, {}, {}} : Target{};
    });
  }

  // What a call is about.
  struct Target {
    enum Kind { kAnywhere, kShard, kQueue } kind = kAnywhere;
    int32_t shard = 0;
    std::string namespace_id, task_queue;
  };
  using TargetOf = std::function<Target(const grpc::ByteBuffer& request)>;

 private:
  class Call;
  template <typename Request, typename WorkflowId>
  void ByWorkflow(rpc::Dispatcher& dispatcher, const char* method, WorkflowId workflow_id);
  template <typename Request>
  void ByTaskToken(rpc::Dispatcher& dispatcher, const char* method);
  template <typename Request>
  void ByQueue(rpc::Dispatcher& dispatcher, const char* method);
  void Route(rpc::Dispatcher& dispatcher, const std::string& method, TargetOf target_of);
  // The owner of `target` when it is another host; nullopt when it is this one.
  std::optional<std::string> OwnerOf(const Target& target) const;
  // Whether this host can answer about `target` now (it owns the shard / the queue).
  bool OwnedHere(const Target& target) const;
  std::string NamespaceId(const std::string& name);

  Placement& placement_;
  Peers& peers_;
  history::ShardController& shards_;
  namespaces::NamespaceEngine& namespaces_;
  Clock& clock_;
  TimerThread& timers_;
  // Retries run here, not on the timer thread (a local attempt may write to the database).
  BlockingPool retries_{2, 4096};
};

}  // namespace tock::server::routing
