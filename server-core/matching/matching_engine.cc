#include "server-core/matching/matching_engine.h"

#include <algorithm>
#include <iterator>

namespace tock::server::matching {

void MatchingEngine::SetTaskLoader(TaskLoader loader) {
  std::lock_guard lock(mu_);
  loader_ = std::move(loader);
}

void MatchingEngine::SetTasksWaiting(TasksWaiting hook) {
  std::lock_guard lock(mu_);
  tasks_waiting_ = std::move(hook);
}

void MatchingEngine::SetRouting(RoutingOf routing) {
  std::lock_guard lock(mu_);
  routing_of_ = std::move(routing);
}

MatchingEngine::Routing MatchingEngine::RoutingLocked(const std::string& namespace_id) const {
  return routing_of_ == nullptr ? nullptr : routing_of_(namespace_id);
}

std::string MatchingEngine::TargetOf(const Routing& routing, const TaskQueueTask& task) {
  return routing == nullptr ? std::string() : routing->TargetOf(task);
}

bool MatchingEngine::StickyVersionMoved(const Routing& routing, const TaskQueueTask& task) {
  return task.task.sticky() && !task.task.pinned() && routing != nullptr &&
         routing->Versioned(task.task.task_queue(), task.kind) &&
         TargetOf(routing, task) != task.task.deployment_version();
}

void MatchingEngine::Rematch(const std::string& namespace_id) {
  std::vector<Handoff> handoffs;
  {
    std::lock_guard lock(mu_);
    for (auto it = queues_.lower_bound(Key{namespace_id, "", TaskKind{}});
         it != queues_.end() && std::get<0>(it->first) == namespace_id; ++it) {
      if (!it->second.waiters.empty()) MatchLocked(it->first, it->second, handoffs);
    }
  }
  Deliver(handoffs);
}

std::optional<MatchingEngine::Waiting> MatchingEngine::WaitingLocked(const Key& key,
                                                                     const Queue& q) const {
  if (tasks_waiting_ == nullptr || q.tasks.empty()) return std::nullopt;
  const TaskQueueTask& oldest = q.tasks.begin()->second;
  return Waiting{key, persistence::PlacingQueue(oldest.task_queue, oldest.task)};
}

void MatchingEngine::Tell(const std::optional<Waiting>& waiting) const {
  if (!waiting) return;
  const auto& [namespace_id, task_queue, kind] = waiting->key;
  tasks_waiting_(namespace_id, task_queue, kind, waiting->placing_queue);
}

MatchingEngine::Queue& MatchingEngine::QueueLocked(const Key& key) {
  auto [it, created] = queues_.try_emplace(key);
  if (created) it->second.incarnation = next_incarnation_++;
  return it->second;
}

void MatchingEngine::KeepLocked(Queue& q, TaskQueueTask task) {
  const int64_t id = task.task_id;
  if (id != 0 && q.tasks.contains(id)) return;  // held already (a read saw it too)
  q.tasks.emplace(id, std::move(task));
  if (loader_ == nullptr || q.tasks.size() <= window_) return;
  // The newest leaves memory (it is stored), so the window is always the oldest tasks.
  q.tasks.erase(std::prev(q.tasks.end()));
  q.more_stored = true;
  ++q.dropped;
}

MatchingEngine::TaskIt MatchingEngine::FindForLocked(Queue& q, const Waiter& w,
                                                     const Routing& routing) {
  // Queries (id 0, never stored) come first in the window, so a queries-only poll finds
  // one at once; a versioned poll may pass over the tasks of other versions.
  auto first = std::find_if(q.tasks.begin(), q.tasks.end(),
                            [&](const auto& t) { return MayTake(w, t.second, routing); });
  if (!w.prefer || first == q.tasks.end()) return first;
  int scanned = 0;
  for (auto t = first; t != q.tasks.end() && scanned < kPreferScan; ++t) {
    if (!MayTake(w, t->second, routing)) continue;
    ++scanned;
    if (w.prefer(t->second)) return t;
  }
  return first;
}

TaskQueueTask MatchingEngine::TakeLocked(Queue& q, TaskIt it) {
  TaskQueueTask task = std::move(it->second);
  q.tasks.erase(it);
  if (loader_ != nullptr && task.task_id != 0) {
    const absl::Time now = clock_.Now();
    ExpireHandedOutLocked(q, now);  // here too: sync matches alone would let the set grow
    if (q.handed_out.insert(task.task_id).second) q.handed_out_order.emplace_back(now, task.task_id);
  }
  return task;
}

void MatchingEngine::ExpireHandedOutLocked(Queue& q, absl::Time now) {
  while (!q.handed_out_order.empty() &&
         now - q.handed_out_order.front().first >= kHandedOutMemory) {
    q.handed_out.erase(q.handed_out_order.front().second);
    q.handed_out_order.pop_front();
  }
}

void MatchingEngine::MatchLocked(const Key& key, Queue& q, std::vector<Handoff>& out) {
  if (q.waiters.empty() || q.tasks.empty()) return;
  const Routing routing = RoutingLocked(std::get<0>(key));
  // Oldest poll first; a poll finding nothing it may take (a queries-only poll while no
  // query waits, a version's poll while no task targets it) is passed over, and so are the
  // later polls of its kind, found as empty-handed.
  std::set<std::pair<bool, std::string>> empty_handed;
  for (auto w = q.waiters.begin(); w != q.waiters.end() && !q.tasks.empty();) {
    if (empty_handed.contains({w->queries_only, w->version})) {
      ++w;
      continue;
    }
    auto it = FindForLocked(q, Waiter{.queries_only = w->queries_only, .version = w->version},
                            routing);
    if (it == q.tasks.end()) {
      empty_handed.emplace(w->queries_only, w->version);
      ++w;
      continue;
    }
    auto taker = Preferring(q.waiters, w, it->second, routing);
    TaskQueueTask task = TakeLocked(q, it);
    PendingPolls(std::get<2>(key)).Increment(-1);
    waiting_.erase(taker->id);
    UntrackLocked(std::get<0>(key), *taker);
    timers_.Cancel(taker->timer);
    out.emplace_back(std::move(taker->done), std::move(task));
    if (taker == w) {
      w = q.waiters.erase(w);
    } else {
      q.waiters.erase(taker);  // `w` stays first in line
    }
  }
}

bool MatchingEngine::MayTake(const Waiter& w, const TaskQueueTask& task, const Routing& routing) {
  if (w.queries_only && task.task.kind() != tock::persistence::v1::TransferTask::KIND_QUERY) {
    return false;
  }
  return task.task.sticky() || TargetOf(routing, task) == w.version;
}

std::list<MatchingEngine::Waiter>::iterator MatchingEngine::Preferring(
    std::list<Waiter>& waiters, std::list<Waiter>::iterator first, const TaskQueueTask& task,
    const Routing& routing) {
  int scanned = 0;
  for (auto v = first; v != waiters.end() && scanned < kPreferScan; ++v, ++scanned) {
    if (v->prefer && MayTake(*v, task, routing) && v->prefer(task)) return v;
  }
  return first;
}

void MatchingEngine::Deliver(std::vector<Handoff>& handoffs) {
  for (auto& [done, task] : handoffs) done(std::move(task));
}

std::optional<MatchingEngine::Load> MatchingEngine::StartLoadLocked(const Key& key, Queue& q,
                                                                    bool polling,
                                                                    absl::Time now) {
  if (loader_ == nullptr || q.loading || releasing_) return std::nullopt;
  const bool needed = !q.loaded || (q.more_stored && q.tasks.size() <= window_ / 2) ||
                      (polling && q.tasks.empty() && now - q.last_load >= kReloadInterval);
  if (!needed) return std::nullopt;
  ExpireHandedOutLocked(q, now);
  q.loading = true;
  q.last_load = now;
  // The oldest stored tasks are mostly those held and those handed out: read past them.
  const size_t limit = window_ + q.handed_out.size();
  return Load{key, q.incarnation, q.dropped,
              static_cast<int32_t>(std::min<size_t>(limit, INT32_MAX)), loader_};
}

void MatchingEngine::RunLoad(Load load) {
  while (true) {
    const auto& [namespace_id, task_queue, kind] = load.key;
    absl::StatusOr<std::vector<TaskQueueTask>> read =
        load.loader(namespace_id, task_queue, kind, load.limit);
    std::vector<Handoff> handoffs;
    std::optional<Load> next;
    std::optional<Waiting> waiting;
    {
      std::lock_guard lock(mu_);
      auto it = queues_.find(load.key);
      // Forgotten (or swept) while reading: the tasks stay stored for the next owner.
      if (it == queues_.end() || it->second.incarnation != load.incarnation) return;
      Queue& q = it->second;
      q.loading = false;
      if (!read.ok()) return;  // still not loaded: the next touch reads again
      q.loaded = true;
      // More may be stored when the read was cut by its limit, or a task that arrived
      // during the read did not fit (it may have committed after the read began).
      q.more_stored = read->size() >= static_cast<size_t>(load.limit) || q.dropped != load.dropped;
      for (TaskQueueTask& task : *read) {
        if (q.handed_out.contains(task.task_id)) continue;  // its start may not have committed
        KeepLocked(q, std::move(task));
      }
      MatchLocked(load.key, q, handoffs);
      next = StartLoadLocked(load.key, q, /*polling=*/false, clock_.Now());
      waiting = WaitingLocked(load.key, q);
    }
    Deliver(handoffs);
    Tell(waiting);
    if (!next) return;
    load = std::move(*next);
  }
}

void MatchingEngine::AddTask(TaskQueueTask task, bool partition) {
  std::vector<Handoff> handoffs;
  std::optional<Load> load;
  std::optional<Waiting> waiting;
  {
    std::lock_guard lock(mu_);
    if (!partition && task.task.sticky() &&
        (!StickyWorkerPresentLocked(task, clock_.Now()) ||
         StickyVersionMoved(RoutingLocked(task.namespace_id), task))) {
      // Its worker is gone (or runs a version its run no longer goes to): a worker takes it
      // from the normal queue, with the whole history.
      task.task_queue = task.task.task_queue();
      task.task.set_sticky(false);
    }
    const Key key{task.namespace_id, task.task_queue, task.kind};
    Queue& q = QueueLocked(key);
    if (q.handed_out.erase(task.task_id) > 0) {  // given back: due again
      std::erase_if(q.handed_out_order, [&](const auto& h) { return h.second == task.task_id; });
    }
    KeepLocked(q, std::move(task));
    MatchLocked(key, q, handoffs);
    load = StartLoadLocked(key, q, /*polling=*/false, clock_.Now());
    waiting = WaitingLocked(key, q);
  }
  Deliver(handoffs);
  Tell(waiting);
  if (load) RunLoad(std::move(*load));
}

void MatchingEngine::Touch(const std::string& namespace_id, const std::string& task_queue,
                           TaskKind kind) {
  std::optional<Load> load;
  std::optional<Waiting> waiting;
  {
    std::lock_guard lock(mu_);
    if (releasing_) return;
    const Key key{namespace_id, task_queue, kind};
    Queue& q = QueueLocked(key);
    load = StartLoadLocked(key, q, /*polling=*/true, clock_.Now());
    waiting = WaitingLocked(key, q);
  }
  Tell(waiting);
  if (load) RunLoad(std::move(*load));
}

std::optional<TaskQueueTask> MatchingEngine::TakeToOffer(const std::string& namespace_id,
                                                         const std::string& task_queue,
                                                         TaskKind kind) {
  std::lock_guard lock(mu_);
  auto it = queues_.find(Key{namespace_id, task_queue, kind});
  if (it == queues_.end() || it->second.tasks.empty()) return std::nullopt;
  return TakeLocked(it->second, it->second.tasks.begin());
}

MatchingEngine::PollId MatchingEngine::Poll(const std::string& namespace_id,
                                            const std::string& task_queue, TaskKind kind,
                                            absl::Time deadline, const std::string& identity,
                                            PollCallback done, bool queries_only,
                                            const std::string& worker_key, Prefer prefer,
                                            const std::string& version) {
  std::optional<TaskQueueTask> ready;
  std::optional<Load> load;
  bool answer_now = true;  // with a task, or with nothing while shutting down
  PollId id;
  {
    std::lock_guard lock(mu_);
    id = next_poll_id_++;
    const absl::Time now = clock_.Now();
    if (now - last_sweep_ >= kSweepInterval) SweepLocked(now);
    Key key{namespace_id, task_queue, kind};
    Queue& q = QueueLocked(key);
    q.pollers[identity] = now;
    Waiter waiter{.id = id, .queries_only = queries_only, .worker_key = worker_key,
                  .prefer = std::move(prefer), .version = version};
    auto found = q.tasks.empty() ? q.tasks.end()
                                 : FindForLocked(q, waiter, RoutingLocked(namespace_id));
    if (releasing_ || (!worker_key.empty() && ShutDownLocked(namespace_id, worker_key, now))) {
      // Shutting down (the server or this worker): answered below with nothing.
    } else if (found != q.tasks.end()) {
      const bool query = found->second.task.kind() == tock::persistence::v1::TransferTask::KIND_QUERY;
      ready = TakeLocked(q, found);
      if (!query) load = StartLoadLocked(key, q, /*polling=*/true, now);
    } else {
      TimerThread::Id timer = timers_.Schedule(deadline, [this, id] {
        if (PollCallback expired = TakeWaiter(id)) expired(std::nullopt);
      });
      waiter.done = std::move(done);
      waiter.timer = timer;
      q.waiters.push_back(std::move(waiter));
      PendingPolls(kind).Increment();
      waiting_[id] = key;
      if (!worker_key.empty()) worker_polls_[{namespace_id, worker_key}].insert(id);
      answer_now = false;
      load = StartLoadLocked(key, q, /*polling=*/true, now);
      if (!load) return id;
    }
  }
  if (answer_now) done(std::move(ready));
  if (load) RunLoad(std::move(*load));
  return id;
}

MatchingEngine::Offered MatchingEngine::Offer(TaskQueueTask& task) {
  PollCallback done;
  {
    std::lock_guard lock(mu_);
    if (releasing_) return Offered::kNoPoll;
    const Routing routing = RoutingLocked(task.namespace_id);
    if (task.task.sticky() && (!StickyWorkerPresentLocked(task, clock_.Now()) ||
                               StickyVersionMoved(routing, task))) {
      return Offered::kWorkerGone;
    }
    auto it = queues_.find(Key{task.namespace_id, task.task_queue, task.kind});
    if (it == queues_.end()) return Offered::kNoPoll;
    std::list<Waiter>& waiters = it->second.waiters;
    auto first = std::find_if(waiters.begin(), waiters.end(),
                              [&](const Waiter& w) { return MayTake(w, task, routing); });
    if (first == waiters.end()) return Offered::kNoPoll;
    done = TakeWaiterLocked(Preferring(waiters, first, task, routing)->id);
  }
  done(std::move(task));
  return Offered::kTaken;
}

void MatchingEngine::SweepLocked(absl::Time now) {
  last_sweep_ = now;
  const absl::Time cutoff = now - kPollerMemory;
  for (auto it = queues_.begin(); it != queues_.end();) {
    Queue& q = it->second;
    std::erase_if(q.pollers, [&](const auto& p) { return p.second < cutoff; });
    ExpireHandedOutLocked(q, now);
    // A queue forgotten with stored tasks reads them again when it is next touched.
    it = q.tasks.empty() && q.waiters.empty() && q.pollers.empty() ? queues_.erase(it)
                                                                   : std::next(it);
  }
}

size_t MatchingEngine::QueueCount() {
  std::lock_guard lock(mu_);
  return queues_.size();
}

size_t MatchingEngine::ForgetQueues(const QueuePredicate& forget) {
  std::vector<PollCallback> released;
  size_t forgotten = 0;
  {
    std::lock_guard lock(mu_);
    for (auto it = queues_.begin(); it != queues_.end();) {
      const auto& [namespace_id, task_queue, kind] = it->first;
      if (!forget(namespace_id, task_queue, kind)) {
        ++it;
        continue;
      }
      for (Waiter& w : it->second.waiters) {
        timers_.Cancel(w.timer);
        waiting_.erase(w.id);
        UntrackLocked(namespace_id, w);
        released.push_back(std::move(w.done));
        PendingPolls(kind).Increment(-1);
      }
      it = queues_.erase(it);
      ++forgotten;
    }
  }
  for (PollCallback& done : released) done(std::nullopt);
  return forgotten;
}

void MatchingEngine::ReleasePolls() {
  std::vector<PollCallback> released;
  {
    std::lock_guard lock(mu_);
    releasing_ = true;
    for (auto& [key, q] : queues_) {
      for (Waiter& w : q.waiters) {
        timers_.Cancel(w.timer);
        released.push_back(std::move(w.done));
        PendingPolls(std::get<2>(key)).Increment(-1);
      }
      q.waiters.clear();
    }
    waiting_.clear();
    worker_polls_.clear();
  }
  for (PollCallback& done : released) done(std::nullopt);
}

void MatchingEngine::CancelPoll(PollId id) {
  if (PollCallback cancelled = TakeWaiter(id)) cancelled(std::nullopt);
}

MatchingEngine::PollCallback MatchingEngine::TakeWaiter(PollId id) {
  std::lock_guard lock(mu_);
  return TakeWaiterLocked(id);
}

MatchingEngine::PollCallback MatchingEngine::TakeWaiterLocked(PollId id) {
  auto it = waiting_.find(id);
  if (it == waiting_.end()) return nullptr;
  const TaskKind kind = std::get<2>(it->second);
  auto queue = queues_.find(it->second);
  waiting_.erase(it);
  if (queue == queues_.end()) return nullptr;
  std::list<Waiter>& waiters = queue->second.waiters;
  for (auto w = waiters.begin(); w != waiters.end(); ++w) {
    if (w->id == id) {
      timers_.Cancel(w->timer);
      UntrackLocked(std::get<0>(queue->first), *w);
      PollCallback done = std::move(w->done);
      waiters.erase(w);
      PendingPolls(kind).Increment(-1);
      return done;
    }
  }
  return nullptr;
}

void MatchingEngine::UntrackLocked(const std::string& namespace_id, const Waiter& w) {
  if (w.worker_key.empty()) return;
  auto it = worker_polls_.find({namespace_id, w.worker_key});
  if (it == worker_polls_.end()) return;
  it->second.erase(w.id);
  if (it->second.empty()) worker_polls_.erase(it);
}

bool MatchingEngine::ShutDownLocked(const std::string& namespace_id,
                                    const std::string& worker_key, absl::Time now) {
  while (!shut_down_order_.empty() &&
         shut_down_order_.front().first + kShutDownWorkerMemory <= now) {
    auto [when, key] = shut_down_order_.front();
    shut_down_order_.pop_front();
    auto it = shut_down_.find(key);
    if (it != shut_down_.end() && it->second == when) shut_down_.erase(it);  // not renewed
  }
  return shut_down_.contains({namespace_id, worker_key});
}

bool MatchingEngine::StickyWorkerPresentLocked(const TaskQueueTask& task, absl::Time now) const {
  auto it = queues_.find(Key{task.namespace_id, task.task_queue, task.kind});
  if (it == queues_.end()) return false;
  if (!it->second.waiters.empty()) return true;
  for (const auto& [identity, last] : it->second.pollers) {
    if (now - last < kStickyPollerWindow) return true;
  }
  return false;
}

size_t MatchingEngine::ReleaseStickyQueue(const std::string& namespace_id,
                                          const std::string& sticky_queue) {
  if (sticky_queue.empty()) return 0;
  std::vector<TaskQueueTask> moved;
  {
    std::lock_guard lock(mu_);
    auto it = queues_.find(Key{namespace_id, sticky_queue, TaskKind::kWorkflow});
    if (it == queues_.end()) return 0;
    Queue& q = it->second;
    q.pollers.clear();  // so that later tasks for it go to their normal queue too
    for (auto task = q.tasks.begin(); task != q.tasks.end();) {
      if (!task->second.task.sticky()) {
        ++task;
        continue;
      }
      task->second.task_queue = task->second.task.task_queue();
      task->second.task.set_sticky(false);
      moved.push_back(std::move(task->second));
      task = q.tasks.erase(task);
    }
  }
  for (TaskQueueTask& task : moved) AddTask(std::move(task));
  return moved.size();
}

size_t MatchingEngine::ReleaseWorkerPolls(const std::string& namespace_id,
                                          const std::string& worker_key) {
  if (worker_key.empty()) return 0;
  std::vector<PollCallback> released;
  {
    std::lock_guard lock(mu_);
    const absl::Time now = clock_.Now();
    const WorkerKey key{namespace_id, worker_key};
    ShutDownLocked(namespace_id, worker_key, now);  // drops what has expired
    shut_down_[key] = now;
    shut_down_order_.emplace_back(now, key);
    while (shut_down_order_.size() > kShutDownWorkersKept) {
      auto [when, oldest] = shut_down_order_.front();
      shut_down_order_.pop_front();
      auto it = shut_down_.find(oldest);
      if (it != shut_down_.end() && it->second == when) shut_down_.erase(it);
    }
    auto polls = worker_polls_.find(key);
    if (polls != worker_polls_.end()) {
      const std::set<PollId> ids = polls->second;  // TakeWaiterLocked erases from it
      for (PollId id : ids) {
        if (PollCallback done = TakeWaiterLocked(id)) released.push_back(std::move(done));
      }
    }
  }
  for (PollCallback& done : released) done(std::nullopt);
  return released.size();
}

std::vector<PollerInfo> MatchingEngine::Pollers(const std::string& namespace_id,
                                                const std::string& task_queue, TaskKind kind) {
  std::lock_guard lock(mu_);
  std::vector<PollerInfo> out;
  auto it = queues_.find({namespace_id, task_queue, kind});
  if (it == queues_.end()) return out;
  const absl::Time cutoff = clock_.Now() - kPollerMemory;
  for (const auto& [identity, last] : it->second.pollers) {
    if (last >= cutoff) out.push_back({identity, last});
  }
  return out;
}

size_t MatchingEngine::Backlog(const std::string& namespace_id, const std::string& task_queue,
                               TaskKind kind) {
  std::lock_guard lock(mu_);
  auto it = queues_.find({namespace_id, task_queue, kind});
  return it == queues_.end() ? 0 : it->second.tasks.size();
}

size_t MatchingEngine::TotalBacklog(TaskKind kind) {
  std::lock_guard lock(mu_);
  size_t total = 0;
  for (const auto& [key, queue] : queues_) {
    if (std::get<2>(key) == kind) total += queue.tasks.size();
  }
  return total;
}

}  // namespace tock::server::matching
