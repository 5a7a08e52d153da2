// Any host accepts any call (issue 11 §3): a call about a run is answered by the owner of
// the run's shard, a poll or a task queue's description by the owner of the queue. The
// router wraps those methods of the dispatcher: when the owner is another host the request
// is sent there as received (bytes, not re-encoded) and its answer passed back; when it is
// this host, the method's own handler runs.
//
// Task-queue partitions (issue 35, queue_partitions.h): a worker's poll for a queue another
// host owns (the queue's root) is served first by this host's own partition of the queue,
// which holds the tasks of this host's shards. One poll of each queue and kind at a time
// (kForwardedPolls) goes on to the root as soon as the partition has no task for it; the
// others wait here (`membership.partition_wait`, 200 ms by default) and then go on to the
// root for the rest of their time. So with workers polling every host, a task is mostly
// started where its run lives, and the worker's answers about it reach that host: no call
// between hosts. A poll that does reach the root prefers the tasks of its own host's runs
// (ServeForwardedPoll), offered by that host's partition when no poll waits there.
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

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

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
  // Task-queue partitions (above): Temporal's matching forwards one poll per partition at a
  // time (MaxOutstandingPolls).
  static constexpr int kForwardedPolls = 1;
  // A poll left with less than this after its wait here answers empty instead of going on.
  static constexpr absl::Duration kLeastForwardedPoll = absl::Seconds(2);

  // `partition_wait`: a poll's wait on this host's partition (above); zero: every poll goes
  // to the queue's owner at once (the partition's tasks then reach it by offers).
  CallRouter(Placement& placement, Peers& peers, history::ShardController& shards,
             namespaces::NamespaceEngine& namespaces, Clock& clock, TimerThread& timers,
             absl::Duration partition_wait);
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
    // A worker's poll (served by this host's partition first): the queue it names, which is
    // its worker's sticky queue where task_queue is the normal queue that places it.
    std::string polled_queue;
  };
  using TargetOf = std::function<Target(const grpc::ByteBuffer& request)>;

 private:
  class Call;
  template <typename Request, typename WorkflowId>
  void ByWorkflow(rpc::Dispatcher& dispatcher, const char* method, WorkflowId workflow_id);
  template <typename Request>
  void ByTaskToken(rpc::Dispatcher& dispatcher, const char* method);
  template <typename Request>
  void ByQueue(rpc::Dispatcher& dispatcher, const char* method, bool poll = false);
  // A worker's answer to a Nexus task: to the owner of the queue its token names, where the
  // dispatch waits (nexus/nexus_task_queues.h).
  template <typename Request>
  void ByNexusToken(rpc::Dispatcher& dispatcher, const char* method);
  // To the host holding the namespace's worker registry (matching/worker_registry.h).
  template <typename Request>
  void ByWorkerRegistry(rpc::Dispatcher& dispatcher, const char* method);
  // A poll for a queue another host owns (the top of this file).
  void PollPartition(const rpc::CallContext& ctx, const grpc::ByteBuffer& payload,
                     std::shared_ptr<const rpc::RawHandler> local, rpc::RawResponder respond,
                     Target target);
  // A poll another host forwarded to this queue owner: it prefers the tasks of runs that
  // host owns (CallContext::prefer_run), whose worker's answers then stay there.
  void ServeForwardedPoll(const rpc::CallContext& ctx, const grpc::ByteBuffer& payload,
                          const rpc::RawHandler& local, rpc::RawResponder respond);
  // One of the kForwardedPolls of (namespace, queue, method), if one is free.
  bool TakeForwardSlot(const std::tuple<std::string, std::string, std::string>& key);
  void ReleaseForwardSlot(const std::tuple<std::string, std::string, std::string>& key);
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
  const absl::Duration partition_wait_;
  // Retries run here, not on the timer thread (a local attempt may write to the database).
  BlockingPool retries_{2, 4096};
  std::mutex forwarded_mu_;
  // Polls forwarded now, by (namespace id, queue, method); no entry: none.
  std::map<std::tuple<std::string, std::string, std::string>, int> forwarded_;
};

}  // namespace tock::server::routing
