// Task-queue partitions with backlogs of their own (issue 35 step 4), on hosts sharing a
// database. Every host holds a partition of each queue its shards make tasks for: the tasks
// of its own shards, kept in its matching engine and paged from the database by shard
// (ExecutionStore::LoadQueueTasks with this host's shards). A worker's poll is served by the
// partition of the host it reached (routing/call_router.h), so a task is mostly started
// where its run lives and the worker's answers about it stay there: no call between hosts.
//
// The queue's owner on the ring (its root) holds its own shards' tasks too, and the polls
// other hosts forward when their partition has nothing. A partition's tasks that no poll
// here takes within `offer_after` (Temporal's maxWaitForPollerBeforeFwd, 200 ms: the local
// workers are mostly back by then) are offered to the root (HostService/AddTask), oldest
// first, one at a time: the root hands each to a poll waiting there (preferring a poll
// from this host) or refuses it, never keeping it. A refused task stays here, and the offers
// pause (backing off from kFirstOfferRetry to kMaxOfferRetry) until the next try; a taken
// one lets the next go at once. So tasks move between hosts only when another host's workers wait idle
// (Temporal's forwarder offers a partition's backlog to the root the same way, sync match
// only). A sticky task whose worker is gone (the root sees its polls) goes to its normal
// queue.
//
// Nothing here is durable and nothing needs to be: every task keeps its row until its start
// commits, so a host that dies or gives a shard up loses only memory. The shard's new owner
// finds the queues with stored tasks of its shards (ExecutionStore::ListQueuesWithTasks)
// after each change of the ring and every kDiscoverInterval, and reads them. A task offered
// and lost on the way (the root died) is remembered as handed out for
// MatchingEngine::kHandedOutMemory, then read again. A task delivered twice (a read that saw
// it just before its start consumed it) is answered NOT_FOUND by its start, as before.
//
// Thread safety: safe from any thread; Stop before the timer thread goes.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "lib/common/blocking_pool.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/metrics.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/shard_controller.h"
#include "server-core/matching/matching_engine.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/routing/peers.h"
#include "server-core/routing/placement.h"

namespace tock::server::routing {

class QueuePartitions {
 public:
  static constexpr absl::Duration kFirstOfferRetry = absl::Milliseconds(50);
  static constexpr absl::Duration kMaxOfferRetry = absl::Milliseconds(500);
  static constexpr absl::Duration kDiscoverInterval = absl::Seconds(10);
  // Offers of one queue in a row before the others' turn (the pool is shared).
  static constexpr int kOffersPerTurn = 64;
  // The most queues one discovery reads.
  static constexpr int32_t kDiscoverLimit = 10000;

  // `offer_after`: how long a queue's tasks wait for polls here before they are offered.
  QueuePartitions(matching::MatchingEngine& matching, persistence::ExecutionStore& store,
                  history::ShardController& shards, Placement& placement, Peers& peers,
                  Clock& clock, TimerThread& timers, Logger& logger, absl::Duration offer_after);
  ~QueuePartitions();
  // Counts the offers this host's partitions make, taken and not (set once, before Start).
  void CountOffersWith(metrics::Counter taken, metrics::Counter refused) {
    offers_taken_ = taken;
    offers_refused_ = refused;
  }
  // Tells matching about this (its TasksWaiting hook) and starts the discoveries.
  void Start();
  // Offers stop; tasks stay with their rows. Idempotent.
  void Stop();

  // A task made ready by this host (the history engine's task sink): kept in this host's
  // partition of its queue, or in the queue itself when this host is its root.
  void AddTask(persistence::TaskQueueTask task);

  // Which rows of a queue this host's matching reads: those of the shards it owns, and
  // the rows from before tasks carried their shard when it is the queue's root.
  persistence::ExecutionStore::ShardSet ShardsFor(const std::string& namespace_id,
                                                  const std::string& task_queue) const;

  // The ring changed and this host took or gave up shards: every queue leaves memory (its
  // polls are answered empty and come back; its tasks are read again with the shards owned
  // now), then the queues with stored tasks of those shards are found and read.
  void Reshard();

 private:
  using Key = std::tuple<std::string, std::string, persistence::TaskKind>;
  // The matching hook: a partition's queue holds tasks no poll here waits for.
  void OnTasksWaiting(const std::string& namespace_id, const std::string& task_queue,
                      persistence::TaskKind kind, const std::string& placing_queue);
  // Offers the queue's tasks to its root until one is refused (on a pool thread).
  void Offer(const Key& key, absl::Duration retry);
  // Runs Offer for `key` on the pool after `delay`; forgets `key` if the pool is full (the
  // next task added, or the next discovery, starts its offers again).
  void OfferLater(const Key& key, absl::Duration delay, absl::Duration retry);
  void EndOffers(const Key& key);
  // One offer to the root `owner`: the answer, or an error (ownership moving, unreachable).
  absl::StatusOr<matching::MatchingEngine::Offered> OfferTo(const std::string& owner,
                                                            const persistence::TaskQueueTask& task);
  // Reads the queues with stored tasks of this host's shards, then schedules the next.
  void Discover();
  void ScheduleDiscoveryLocked();

  matching::MatchingEngine& matching_;
  persistence::ExecutionStore& store_;
  history::ShardController& shards_;
  Placement& placement_;
  Peers& peers_;
  Clock& clock_;
  TimerThread& timers_;
  Logger& logger_;
  const absl::Duration offer_after_;
  // Offers and discoveries (blocking calls to other hosts and the database).
  BlockingPool pool_{2, 65536, "tock-partitions"};
  metrics::Counter offers_taken_, offers_refused_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  // Queues whose tasks are being offered (or wait for the next try); `again`: tasks were
  // added meanwhile, so a queue found empty is looked at once more before it leaves.
  std::map<Key, bool> offering_;
  TimerThread::Id discovery_ = 0;
};

}  // namespace tock::server::routing
