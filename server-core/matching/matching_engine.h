// Task queues: where ready workflow and activity tasks meet the workers' long polls.
//
// A task arrives after the change that made it was committed (its row is already in the
// database, so nothing is lost if the process dies); a waiting poller takes it at once
// (sync match), otherwise it waits in memory. A poll waits without a thread until a task
// comes, its deadline passes (it then gets nothing, which the frontend turns into the empty
// response), or it is cancelled.
//
// Paging (with a TaskLoader): memory holds only a window of each queue's backlog, its oldest
// tasks, at most `window` of them; the rest stay in the database. A queue is read from the
// database when it is first touched (Poll or AddTask), when its window runs low (half) while
// the database may hold more, and when a poll finds it empty and it was last read
// kReloadInterval ago or more (a task stored by a path that did not reach this host). A
// read always takes the oldest tasks of the queue, skipping those held or recently handed
// out, never "after the last id seen": ids are drawn when a commit inserts, so a commit may
// become visible after one holding higher ids. A task can therefore be delivered twice (a
// read that saw it just before its start consumed it); starting a stale task answers
// NOT_FOUND and the poll goes on. Without a loader every task is kept in memory.
//
// Thread safety: all methods are safe from any thread; callbacks run outside the lock, and
// so do the loader's database reads (one at a time per queue).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/common/timer_thread.h"
#include "server-core/deployments/deployment_routing.h"
#include "server-core/observability/server_metrics.h"
#include "server-core/persistence/execution_store.h"

namespace tock::server::matching {

using persistence::TaskKind;
using persistence::TaskQueueTask;

struct PollerInfo {
  std::string identity;
  absl::Time last_access_time;
};

// Reads the pending tasks of one queue from the database, oldest first, at most `limit`
// (ExecutionStore::LoadQueueTasks). Called without the engine's lock, from the thread of
// the Poll or AddTask that needed it.
using TaskLoader = std::function<absl::StatusOr<std::vector<TaskQueueTask>>(
    const std::string& namespace_id, const std::string& task_queue, TaskKind kind,
    int32_t limit)>;

class MatchingEngine {
 public:
  static constexpr size_t kDefaultWindow = 1000;
  // `window`: the most tasks of one queue held in memory when a loader is set.
  MatchingEngine(Clock& clock, TimerThread& timers, size_t window = kDefaultWindow)
      : clock_(clock), timers_(timers), window_(window < 2 ? 2 : window) {}
  // Gauges of the polls waiting (set once, before the first poll; must outlive this).
  void SetMetrics(const ServerMetrics& metrics) { metrics_ = &metrics; }
  // Where queues page their backlog from (set once, before the first poll or task).
  void SetTaskLoader(TaskLoader loader);
  // Told (outside the lock, from the thread that added or read them) that a queue holds
  // tasks no poll here waits for: after AddTask or a read of the database left some. With
  // several hosts, a partition's tasks are then offered to the queue's root
  // (routing/queue_partitions.h). `placing_queue`: the queue that places the queue's tasks
  // (for a sticky queue, its workflow's normal queue). Set once, before the first task.
  using TasksWaiting = std::function<void(const std::string& namespace_id,
                                          const std::string& task_queue, TaskKind kind,
                                          const std::string& placing_queue)>;
  void SetTasksWaiting(TasksWaiting hook);
  // Worker Deployments: the routing of a namespace's versioned queues
  // (deployments/deployment_routing.h), read under this engine's lock. A task of a versioned
  // queue goes only to the polls of its target version ("" the unversioned workers'); a
  // sticky task goes to its sticky worker unless its unpinned run's target moved to another
  // version, which sends it to the normal queue (as when its worker is gone). Without it
  // (set once, before the first poll) no queue is versioned.
  using RoutingOf = std::function<std::shared_ptr<const deployments::DeploymentRouting>(
      const std::string& namespace_id)>;
  void SetRouting(RoutingOf routing);
  // The routing of a namespace changed: its held tasks are matched again with waiting polls.
  void Rematch(const std::string& namespace_id);

  using PollId = uint64_t;
  using PollCallback = std::function<void(std::optional<TaskQueueTask>)>;

  // A task is ready: hand it to a waiting poller or keep it (with a loader, beyond the
  // window only the fact that the database holds more is kept). A task handed out and given
  // back (its start failed) comes here too. A task for a worker's sticky queue
  // (TransferTask.sticky) whose worker is gone (no poll within kStickyPollerWindow, or shut
  // down) goes to the workflow's normal queue instead, as an ordinary task (Temporal's
  // StickyWorkerUnavailable). `partition`: the queue's root is another host, which decides
  // whether the sticky worker is gone (Offer), so the task is kept here as it is.
  void AddTask(TaskQueueTask task, bool partition = false);
  static constexpr absl::Duration kStickyPollerWindow = absl::Seconds(10);

  // Waits for a task on (namespace, queue, kind) until `deadline`. `done` runs exactly once.
  // `queries_only` (a poll on a standby namespace, reference/replication.md §4.3): the poll
  // takes only legacy query tasks (KIND_QUERY); the queue's other tasks stay for later polls.
  // `worker_key`: the worker instance polling (PollXTaskQueueRequest.worker_instance_key), so
  // that ReleaseWorkerPolls can end its polls; a key released lately gets nothing at once.
  // `prefer`: the poll takes a task it prefers among the kPreferScan oldest rather than the
  // oldest, and a task arriving goes to the oldest poll among the first kPreferScan waiting
  // that prefers it (a poll forwarded by another host prefers the tasks of its runs:
  // routing/call_router.h). `version`: the Worker Deployment version of a versioned poller
  // ("deployment:build"; empty for an unversioned one), whose tasks it alone takes.
  using Prefer = std::function<bool(const TaskQueueTask&)>;
  PollId Poll(const std::string& namespace_id, const std::string& task_queue, TaskKind kind,
              absl::Time deadline, const std::string& identity, PollCallback done,
              bool queries_only = false, const std::string& worker_key = {},
              Prefer prefer = nullptr, const std::string& version = {});
  static constexpr int kPreferScan = 32;

  // Hands `task` (of another host's partition of a queue this host owns) to a poll waiting on
  // its queue here, if one may take it: the first of the kPreferScan oldest that prefers
  // it, or else the oldest. Never keeps the task: when none waits, `task` is left as it is
  // and stays in the partition that offered it. A sticky task whose worker is gone (as in
  // AddTask) is refused as such, for its partition to send to the normal queue.
  enum class Offered { kTaken, kNoPoll, kWorkerGone };
  Offered Offer(TaskQueueTask& task);

  // The oldest task held in the queue, taken out to be offered to the queue's root (it is
  // remembered as handed out, like a task a poll took); nothing when none is held. One the
  // root refused comes back through AddTask(task, /*partition=*/true).
  std::optional<TaskQueueTask> TakeToOffer(const std::string& namespace_id,
                                           const std::string& task_queue, TaskKind kind);

  // Reads the queue from the database if it needs it (as a poll finding it empty would):
  // a host finds the stored tasks of its partitions this way (routing/queue_partitions.h).
  void Touch(const std::string& namespace_id, const std::string& task_queue, TaskKind kind);

  // The poll's caller went away: `done` gets nothing (unless it already ran).
  void CancelPoll(PollId id);

  // Shutdown has begun: every waiting poll gets nothing now, and later polls at once, so
  // workers get their (empty) answers instead of waiting out the poll. Tasks stay stored.
  void ReleasePolls();

  // A worker instance shuts down (ShutdownWorker, namespace capability
  // worker_poll_complete_on_shutdown): its waiting polls get nothing now, and its polls
  // during the next kShutDownWorkerMemory get nothing at once, so the worker stops without
  // waiting out a poll, and no task is handed to a poll whose worker is gone (a poll either
  // took its task before this, or takes none). Returns how many polls were ended.
  size_t ReleaseWorkerPolls(const std::string& namespace_id, const std::string& worker_key);
  // As Temporal's matching remembers them (shutdownWorkersCacheTTL and MaxSize).
  static constexpr absl::Duration kShutDownWorkerMemory = absl::Seconds(30);
  // The worker of a sticky queue shut down (ShutdownWorker.sticky_task_queue): the tasks
  // waiting there go to their normal queues, and so do later ones. Returns how many moved.
  size_t ReleaseStickyQueue(const std::string& namespace_id, const std::string& sticky_queue);
  static constexpr size_t kShutDownWorkersKept = 10000;

  // Another host became the owner of some queues: drops the in-memory state of every queue
  // for which `forget(namespace_id, task_queue, kind)` is true. Their waiting polls get
  // nothing now; their tasks leave memory only (they stay stored), and a later touch reads
  // the queue from the database again. Returns how many queues were forgotten.
  using QueuePredicate = std::function<bool(const std::string& namespace_id,
                                            const std::string& task_queue, TaskKind kind)>;
  size_t ForgetQueues(const QueuePredicate& forget);

  // Pollers seen in the last 5 minutes, and the number of tasks waiting in memory (with a
  // loader, at most the window: more may be stored).
  std::vector<PollerInfo> Pollers(const std::string& namespace_id, const std::string& task_queue,
                                  TaskKind kind);
  size_t Backlog(const std::string& namespace_id, const std::string& task_queue, TaskKind kind);
  // The tasks waiting in memory in every queue of `kind` (the console's backlog chart; the
  // windows' sum, so at most the window per queue). One pass over the queues.
  size_t TotalBacklog(TaskKind kind);

  // Queues held in memory. A queue with no task, no waiting poll and no poller seen in the
  // last kPollerMemory is forgotten (at most kSweepInterval later), so queues that clients
  // name once do not accumulate.
  size_t QueueCount();
  static constexpr absl::Duration kPollerMemory = absl::Minutes(5);
  static constexpr absl::Duration kSweepInterval = absl::Minutes(1);
  // A poll that finds its queue empty reads it again when the last read is this old.
  static constexpr absl::Duration kReloadInterval = absl::Seconds(10);
  // How long a task handed out is not read back from the database (its start is expected
  // to have consumed it by then; one that was not, e.g. its poller vanished, is due again).
  static constexpr absl::Duration kHandedOutMemory = absl::Seconds(10);

 private:
  using Key = std::tuple<std::string, std::string, TaskKind>;
  struct Waiter {
    PollId id;
    PollCallback done;
    TimerThread::Id timer;
    bool queries_only = false;
    std::string worker_key;  // empty: the poller named none
    Prefer prefer;
    std::string version;  // a versioned poller's version; empty: unversioned
  };
  struct Queue {
    uint64_t incarnation = 0;  // tells a load in flight that the queue was forgotten
    std::multimap<int64_t, TaskQueueTask> tasks;  // the window, by task id (0: unstored)
    std::list<Waiter> waiters;
    std::map<std::string, absl::Time> pollers;  // identity -> last poll
    // Paging (with a loader).
    bool loaded = false;        // a read of the database completed
    bool loading = false;       // a read is in flight
    bool more_stored = true;    // the database may hold tasks not held here
    uint64_t dropped = 0;       // tasks not kept for the window (a read in flight rereads)
    absl::Time last_load = absl::InfinitePast();  // when the last read started
    std::unordered_set<int64_t> handed_out;       // ids handed out in kHandedOutMemory
    std::deque<std::pair<absl::Time, int64_t>> handed_out_order;  // oldest first
  };
  // A read of a queue, decided under the lock and run without it.
  struct Load {
    Key key;
    uint64_t incarnation;
    uint64_t dropped;
    int32_t limit;
    TaskLoader loader;
  };
  using Handoff = std::pair<PollCallback, TaskQueueTask>;
  // A queue holding tasks no poll waits for, to tell TasksWaiting about.
  struct Waiting {
    Key key;
    std::string placing_queue;
  };
  // The queue's Waiting when it holds tasks and a hook is set.
  std::optional<Waiting> WaitingLocked(const Key& key, const Queue& q) const;
  void Tell(const std::optional<Waiting>& waiting) const;

  Queue& QueueLocked(const Key& key);
  // Keeps `task` in the window (without duplicating an id held); beyond the window the
  // newest task held leaves memory and the queue remembers the database holds more.
  void KeepLocked(Queue& q, TaskQueueTask task);
  using Routing = std::shared_ptr<const deployments::DeploymentRouting>;
  Routing RoutingLocked(const std::string& namespace_id) const;
  // The version `task` goes to ("" the unversioned polls').
  static std::string TargetOf(const Routing& routing, const TaskQueueTask& task);
  // Whether poll `w` may take `task` (a queries-only poll takes only queries; a poll of
  // another version than the task's target takes none of it; a sticky task goes to any poll
  // of its sticky queue).
  static bool MayTake(const Waiter& w, const TaskQueueTask& task, const Routing& routing);
  // Whether the target of a sticky task's unpinned run moved to another version than the
  // one its sticky worker runs: it then goes to its normal queue.
  static bool StickyVersionMoved(const Routing& routing, const TaskQueueTask& task);
  // Among the kPreferScan polls from `first` on, the first that may take `task` and prefers
  // it (a poll another host forwarded prefers its own runs' tasks); `first` when none does.
  static std::list<Waiter>::iterator Preferring(std::list<Waiter>& waiters,
                                                std::list<Waiter>::iterator first,
                                                const TaskQueueTask& task, const Routing& routing);
  // Pairs waiting polls with the oldest tasks each may take.
  void MatchLocked(const Key& key, Queue& q, std::vector<Handoff>& out);
  using TaskIt = std::multimap<int64_t, TaskQueueTask>::iterator;
  // The oldest task held that `w` may take (or one it prefers among the kPreferScan oldest
  // of those), or end().
  TaskIt FindForLocked(Queue& q, const Waiter& w, const Routing& routing);
  // Takes the task at `it`, remembering that it was handed out.
  TaskQueueTask TakeLocked(Queue& q, TaskIt it);
  void ExpireHandedOutLocked(Queue& q, absl::Time now);
  // A read the queue needs now, marked in flight; nothing when it needs none.
  std::optional<Load> StartLoadLocked(const Key& key, Queue& q, bool polling, absl::Time now);
  // Reads, merges the tasks into the window, hands them to waiting polls, and reads again
  // while the queue still needs it.
  void RunLoad(Load load);
  static void Deliver(std::vector<Handoff>& handoffs);
  // Removes waiter `id` and returns its callback (empty when it already completed).
  PollCallback TakeWaiter(PollId id);
  PollCallback TakeWaiterLocked(PollId id);
  // Forgets a waiter leaving its queue in the polls of its worker.
  void UntrackLocked(const std::string& namespace_id, const Waiter& w);
  // Whether a worker polls the sticky queue of `task` (one waits, or one was seen within
  // kStickyPollerWindow).
  bool StickyWorkerPresentLocked(const TaskQueueTask& task, absl::Time now) const;
  // Whether (namespace, worker) shut down in the last kShutDownWorkerMemory.
  bool ShutDownLocked(const std::string& namespace_id, const std::string& worker_key,
                      absl::Time now);
  // Drops pollers not seen for kPollerMemory and the queues left with nothing.
  void SweepLocked(absl::Time now);

  // The pending-polls gauge of a kind of task.
  const metrics::Gauge& PendingPolls(TaskKind kind) const {
    return kind == TaskKind::kActivity ? metrics_->activity_pending_polls
                                       : metrics_->workflow_pending_polls;
  }

  Clock& clock_;
  TimerThread& timers_;
  const size_t window_;
  const ServerMetrics* metrics_ = &kNoServerMetrics;
  std::mutex mu_;
  TaskLoader loader_;
  TasksWaiting tasks_waiting_;
  RoutingOf routing_of_;
  std::map<Key, Queue> queues_;
  uint64_t next_incarnation_ = 1;
  std::map<PollId, Key> waiting_;  // open polls -> their queue
  using WorkerKey = std::pair<std::string, std::string>;  // namespace id, worker instance key
  std::map<WorkerKey, std::set<PollId>> worker_polls_;  // open polls that named their worker
  // Workers shut down lately, oldest first (at most kShutDownWorkersKept).
  std::deque<std::pair<absl::Time, WorkerKey>> shut_down_order_;
  std::map<WorkerKey, absl::Time> shut_down_;
  PollId next_poll_id_ = 1;
  absl::Time last_sweep_ = absl::InfinitePast();
  bool releasing_ = false;
};

}  // namespace tock::server::matching
