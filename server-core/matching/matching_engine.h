// Task queues: where ready workflow and activity tasks meet the workers' long polls.
//
// A task arrives after the change that made it was committed (its row is already in the
// database, so nothing is lost if the process dies); a waiting poller takes it at once
// (sync match), otherwise it waits in memory (the backlog; reloaded from the database at
// start). A poll waits without a thread until a task comes, its deadline passes (it then
// gets nothing, which the frontend turns into the empty response), or it is cancelled.
//
// Thread safety: all methods are safe from any thread; callbacks run outside the lock.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "lib/common/timer_thread.h"
#include "server-core/observability/server_metrics.h"
#include "server-core/persistence/execution_store.h"

namespace tock::server::matching {

using persistence::TaskKind;
using persistence::TaskQueueTask;

struct PollerInfo {
  std::string identity;
  absl::Time last_access_time;
};

class MatchingEngine {
 public:
  MatchingEngine(Clock& clock, TimerThread& timers) : clock_(clock), timers_(timers) {}
  // Gauges of the polls waiting (set once, before the first poll; must outlive this).
  void SetMetrics(const ServerMetrics& metrics) { metrics_ = &metrics; }

  using PollId = uint64_t;
  using PollCallback = std::function<void(std::optional<TaskQueueTask>)>;

  // A task is ready: hand it to a waiting poller or keep it.
  void AddTask(TaskQueueTask task);

  // Waits for a task on (namespace, queue, kind) until `deadline`. `done` runs exactly once.
  PollId Poll(const std::string& namespace_id, const std::string& task_queue, TaskKind kind,
              absl::Time deadline, const std::string& identity, PollCallback done);

  // The poll's caller went away: `done` gets nothing (unless it already ran).
  void CancelPoll(PollId id);

  // Shutdown has begun: every waiting poll gets nothing now, and later polls at once, so
  // workers get their (empty) answers instead of waiting out the poll. Tasks stay stored.
  void ReleasePolls();

  // Pollers seen in the last 5 minutes, and the number of tasks waiting.
  std::vector<PollerInfo> Pollers(const std::string& namespace_id, const std::string& task_queue,
                                  TaskKind kind);
  size_t Backlog(const std::string& namespace_id, const std::string& task_queue, TaskKind kind);

  // Queues held in memory. A queue with no task, no waiting poll and no poller seen in the
  // last kPollerMemory is forgotten (at most kSweepInterval later), so queues that clients
  // name once do not accumulate.
  size_t QueueCount();
  static constexpr absl::Duration kPollerMemory = absl::Minutes(5);
  static constexpr absl::Duration kSweepInterval = absl::Minutes(1);

 private:
  using Key = std::tuple<std::string, std::string, TaskKind>;
  struct Waiter {
    PollId id;
    PollCallback done;
    TimerThread::Id timer;
  };
  struct Queue {
    std::deque<TaskQueueTask> tasks;
    std::list<Waiter> waiters;
    std::map<std::string, absl::Time> pollers;  // identity -> last poll
  };

  // Removes waiter `id` and returns its callback (empty when it already completed).
  PollCallback TakeWaiter(PollId id);
  // Drops pollers not seen for kPollerMemory and the queues left with nothing.
  void SweepLocked(absl::Time now);

  // The pending-polls gauge of a kind of task.
  const metrics::Gauge& PendingPolls(TaskKind kind) const {
    return kind == TaskKind::kActivity ? metrics_->activity_pending_polls
                                       : metrics_->workflow_pending_polls;
  }

  Clock& clock_;
  TimerThread& timers_;
  const ServerMetrics* metrics_ = &kNoServerMetrics;
  std::mutex mu_;
  std::map<Key, Queue> queues_;
  std::map<PollId, Key> waiting_;  // open polls -> their queue
  PollId next_poll_id_ = 1;
  absl::Time last_sweep_ = absl::InfinitePast();
  bool releasing_ = false;
};

}  // namespace tock::server::matching
