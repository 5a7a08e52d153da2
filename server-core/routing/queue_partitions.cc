#include "server-core/routing/queue_partitions.h"

#include <algorithm>

#include "lib/common/grpc_status.h"
#include "server-core/routing/host_service.h"

namespace tock::server::routing {
namespace {

namespace cluster = tock::cluster::v1;
using matching::MatchingEngine;
// An offer is a sync match at the root: it answers at once.
constexpr absl::Duration kOfferTimeout = absl::Seconds(5);

}  // namespace

QueuePartitions::QueuePartitions(matching::MatchingEngine& matching,
                                 persistence::ExecutionStore& store,
                                 history::ShardController& shards, Placement& placement,
                                 Peers& peers, Clock& clock, TimerThread& timers, Logger& logger,
                                 absl::Duration offer_after)
    : matching_(matching),
      store_(store),
      shards_(shards),
      placement_(placement),
      peers_(peers),
      clock_(clock),
      timers_(timers),
      logger_(logger),
      offer_after_(offer_after) {}

QueuePartitions::~QueuePartitions() { Stop(); }

void QueuePartitions::Start() {
  matching_.SetTasksWaiting([this](const std::string& namespace_id, const std::string& task_queue,
                                   persistence::TaskKind kind, const std::string& placing_queue) {
    OnTasksWaiting(namespace_id, task_queue, kind, placing_queue);
  });
  std::lock_guard lock(mu_);
  ScheduleDiscoveryLocked();
}

void QueuePartitions::Stop() {
  if (stopping_.exchange(true)) return;
  {
    std::lock_guard lock(mu_);
    timers_.Cancel(discovery_);
  }
  pool_.Stop();
}

void QueuePartitions::AddTask(persistence::TaskQueueTask task) {
  const bool partition =
      placement_.QueueOwner(task.namespace_id, PlacingQueue(task.task_queue, task.task))
          .has_value();
  matching_.AddTask(std::move(task), partition);
}

persistence::ExecutionStore::ShardSet QueuePartitions::ShardsFor(
    const std::string& namespace_id, const std::string& task_queue) const {
  return {shards_.OwnedShards(), !placement_.QueueOwner(namespace_id, task_queue).has_value()};
}

void QueuePartitions::Reshard() {
  if (stopping_) return;
  matching_.ForgetQueues([](const std::string&, const std::string&, persistence::TaskKind) {
    return true;
  });
  if (!pool_.Run([this] { Discover(); })) {
    logger_.Warn("the partitions' discovery could not be queued; their queues are read when "
                 "next polled");
  }
}

void QueuePartitions::OnTasksWaiting(const std::string& namespace_id,
                                     const std::string& task_queue, persistence::TaskKind kind,
                                     const std::string& placing_queue) {
  if (stopping_) return;
  Key key{namespace_id, task_queue, kind};
  {
    std::lock_guard lock(mu_);
    auto it = offering_.find(key);
    if (it != offering_.end()) {
      it->second = true;  // looked at again before its offers end
      return;
    }
    // The root's own tasks wait for its polls.
    if (!placement_.QueueOwner(namespace_id, placing_queue).has_value()) return;
    offering_.emplace(key, false);
  }
  OfferLater(key, offer_after_, kFirstOfferRetry);
}

void QueuePartitions::OfferLater(const Key& key, absl::Duration delay, absl::Duration retry) {
  auto offer = [this, key, retry] {
    if (!pool_.Run([this, key, retry] { Offer(key, retry); })) EndOffers(key);
  };
  if (delay <= absl::ZeroDuration()) return offer();
  timers_.Schedule(clock_.Now() + delay, std::move(offer));
}

void QueuePartitions::EndOffers(const Key& key) {
  std::lock_guard lock(mu_);
  offering_.erase(key);
}

void QueuePartitions::Offer(const Key& key, absl::Duration retry) {
  const auto& [namespace_id, task_queue, kind] = key;
  for (int offered = 0; offered < kOffersPerTurn; ++offered) {
    if (stopping_) return;
    {
      std::lock_guard lock(mu_);
      offering_[key] = false;
    }
    std::optional<persistence::TaskQueueTask> task =
        matching_.TakeToOffer(namespace_id, task_queue, kind);
    if (!task.has_value()) {
      std::lock_guard lock(mu_);
      auto it = offering_.find(key);
      if (it != offering_.end() && it->second) continue;  // added meanwhile
      offering_.erase(key);
      return;
    }
    std::optional<std::string> root =
        placement_.QueueOwner(task->namespace_id, PlacingQueue(task->task_queue, task->task));
    if (!root.has_value()) {
      // The ring made this host the queue's root: its tasks wait for the polls here.
      EndOffers(key);
      return matching_.AddTask(std::move(*task));
    }
    absl::StatusOr<MatchingEngine::Offered> answer = OfferTo(*root, *task);
    (answer.ok() && *answer == MatchingEngine::Offered::kTaken ? offers_taken_ : offers_refused_)
        .Increment();
    if (answer.ok() && *answer == MatchingEngine::Offered::kTaken) {
      retry = kFirstOfferRetry;
      continue;
    }
    if (answer.ok() && *answer == MatchingEngine::Offered::kWorkerGone) {
      // Any worker takes it from the normal queue, with the whole history (as
      // MatchingEngine::AddTask does with a sticky task whose worker is gone).
      task->task_queue = task->task.task_queue();
      task->task.set_sticky(false);
      AddTask(std::move(*task));
      continue;
    }
    // No poll waits at the root (or it cannot be reached): the task stays here, and the
    // queue is offered again later.
    matching_.AddTask(std::move(*task), /*partition=*/true);
    return OfferLater(key, retry, std::min(retry * 2, kMaxOfferRetry));
  }
  OfferLater(key, absl::ZeroDuration(), retry);  // the other queues' turn first
}

absl::StatusOr<MatchingEngine::Offered> QueuePartitions::OfferTo(
    const std::string& owner, const persistence::TaskQueueTask& task) {
  cluster::AddTaskRequest request;
  *request.mutable_task() = ToWire(task);
  grpc::ClientContext context;
  peers_.Prepare(context, absl::Now() + kOfferTimeout);
  cluster::AddTaskResponse answer;
  grpc::Status s = peers_.HostService(owner).AddTask(&context, request, &answer);
  if (!s.ok()) return FromGrpcStatus(s);
  if (answer.taken()) return MatchingEngine::Offered::kTaken;
  return answer.worker_gone() ? MatchingEngine::Offered::kWorkerGone
                              : MatchingEngine::Offered::kNoPoll;
}

void QueuePartitions::Discover() {
  if (stopping_) return;
  absl::StatusOr<std::vector<persistence::ExecutionStore::QueueName>> queues =
      store_.ListQueuesWithTasks({shards_.OwnedShards(), /*unsharded=*/true}, kDiscoverLimit);
  if (!queues.ok()) {
    logger_.Warn("the queues with stored tasks of this host's shards could not be read; "
                 "retried at the next discovery",
                 {{"error", queues.status().ToString().substr(0, 200)}});
  } else {
    for (const auto& q : *queues) {
      if (stopping_) return;
      matching_.Touch(q.namespace_id, q.task_queue, q.kind);
    }
  }
  std::lock_guard lock(mu_);
  if (stopping_) return;
  timers_.Cancel(discovery_);  // a Reshard's discovery replaces the one scheduled
  ScheduleDiscoveryLocked();
}

void QueuePartitions::ScheduleDiscoveryLocked() {
  discovery_ = timers_.Schedule(clock_.Now() + kDiscoverInterval, [this] {
    if (!stopping_ && !pool_.Run([this] { Discover(); })) {
      logger_.Warn("the partitions' discovery could not be queued; it stops until the ring changes");
    }
  });
}

}  // namespace tock::server::routing
