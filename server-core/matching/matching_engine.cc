#include "server-core/matching/matching_engine.h"

namespace tock::server::matching {

void MatchingEngine::AddTask(TaskQueueTask task) {
  PollCallback done;
  {
    std::lock_guard lock(mu_);
    Queue& q = queues_[{task.namespace_id, task.task_queue, task.kind}];
    if (q.waiters.empty()) {
      q.tasks.push_back(std::move(task));
      return;
    }
    Waiter w = std::move(q.waiters.front());
    q.waiters.pop_front();
    PendingPolls(task.kind).Increment(-1);
    waiting_.erase(w.id);
    timers_.Cancel(w.timer);
    done = std::move(w.done);
  }
  done(std::move(task));
}

MatchingEngine::PollId MatchingEngine::Poll(const std::string& namespace_id,
                                            const std::string& task_queue, TaskKind kind,
                                            absl::Time deadline, const std::string& identity,
                                            PollCallback done) {
  std::optional<TaskQueueTask> ready;
  PollId id;
  {
    std::lock_guard lock(mu_);
    id = next_poll_id_++;
    const absl::Time now = clock_.Now();
    if (now - last_sweep_ >= kSweepInterval) SweepLocked(now);
    Key key{namespace_id, task_queue, kind};
    Queue& q = queues_[key];
    q.pollers[identity] = now;
    if (releasing_) {
      // Shutting down: answered below with nothing.
    } else if (!q.tasks.empty()) {
      ready = std::move(q.tasks.front());
      q.tasks.pop_front();
    } else {
      TimerThread::Id timer = timers_.Schedule(deadline, [this, id] {
        if (PollCallback expired = TakeWaiter(id)) expired(std::nullopt);
      });
      q.waiters.push_back(Waiter{id, std::move(done), timer});
      PendingPolls(kind).Increment();
      waiting_[id] = key;
      return id;
    }
  }
  done(std::move(ready));
  return id;
}

void MatchingEngine::SweepLocked(absl::Time now) {
  last_sweep_ = now;
  const absl::Time cutoff = now - kPollerMemory;
  for (auto it = queues_.begin(); it != queues_.end();) {
    Queue& q = it->second;
    std::erase_if(q.pollers, [&](const auto& p) { return p.second < cutoff; });
    it = q.tasks.empty() && q.waiters.empty() && q.pollers.empty() ? queues_.erase(it)
                                                                   : std::next(it);
  }
}

size_t MatchingEngine::QueueCount() {
  std::lock_guard lock(mu_);
  return queues_.size();
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
  }
  for (PollCallback& done : released) done(std::nullopt);
}

void MatchingEngine::CancelPoll(PollId id) {
  if (PollCallback cancelled = TakeWaiter(id)) cancelled(std::nullopt);
}

MatchingEngine::PollCallback MatchingEngine::TakeWaiter(PollId id) {
  std::lock_guard lock(mu_);
  auto it = waiting_.find(id);
  if (it == waiting_.end()) return nullptr;
  const TaskKind kind = std::get<2>(it->second);
  Queue& q = queues_[it->second];
  waiting_.erase(it);
  for (auto w = q.waiters.begin(); w != q.waiters.end(); ++w) {
    if (w->id == id) {
      timers_.Cancel(w->timer);
      PollCallback done = std::move(w->done);
      q.waiters.erase(w);
      PendingPolls(kind).Increment(-1);
      return done;
    }
  }
  return nullptr;
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

}  // namespace tock::server::matching
