#include "server-core/nexus/nexus_task_queues.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/common/ids.h"

namespace tock::server::nexus {
namespace {

namespace wf = temporal::api::workflowservice::v1;

// A token is "<namespace id>/<task id>/<task queue>" (ids hold no '/'): the namespace checks
// the responder's, the task id finds the task, the queue routes the answer to the host its
// polls go to (QueueOfToken).
std::string TokenOf(const std::string& namespace_id, const std::string& task_id,
                    const std::string& task_queue) {
  return absl::StrCat(namespace_id, "/", task_id, "/", task_queue);
}

// A duration as Go prints it ("9.5s"), as Temporal's request-timeout header carries it.
std::string GoDuration(absl::Duration d) {
  if (d < absl::ZeroDuration()) d = absl::ZeroDuration();
  return absl::StrCat(absl::ToDoubleMilliseconds(d) / 1000.0, "s");
}

absl::Status Expired() { return absl::NotFoundError("Nexus task not found or already expired"); }

}  // namespace

NexusTaskQueues::NexusTaskQueues(Clock& clock, TimerThread& timers) : clock_(clock), timers_(timers) {}

NexusTaskQueues::~NexusTaskQueues() {
  ReleasePolls();
  std::vector<Done> dispatches;
  {
    std::lock_guard lock(mu_);
    for (auto& [token, entry] : tasks_) {
      timers_.Cancel(entry.second->timer);
      if (entry.second->done) dispatches.push_back(std::move(entry.second->done));
    }
    tasks_.clear();
    queues_.clear();
  }
  for (Done& d : dispatches) d(absl::UnavailableError("the server is stopping"));
}

void NexusTaskQueues::ReleasePolls() {
  std::vector<PollDone> polls;
  {
    std::lock_guard lock(mu_);
    for (auto& [key, queue] : queues_) {
      for (WaitingPoll& p : queue.polls) {
        timers_.Cancel(p.timer);
        polls.push_back(std::move(p.done));
      }
      queue.polls.clear();
    }
    polls_.clear();
  }
  for (PollDone& p : polls) p(wf::PollNexusTaskQueueResponse());
}

void NexusTaskQueues::Dispatch(const std::string& namespace_id, const std::string& task_queue,
                               temporal::api::nexus::v1::Request request, absl::Time deadline,
                               Done done) {
  auto task = std::make_shared<Task>();
  task->token = TokenOf(namespace_id, NewUuid(), task_queue);
  (*request.mutable_header())["request-timeout"] = GoDuration(deadline - clock_.Now());
  task->request = std::move(request);
  task->deadline = deadline;
  task->done = std::move(done);
  const QueueKey key{namespace_id, task_queue};
  std::optional<WaitingPoll> poll;
  {
    std::lock_guard lock(mu_);
    Queue& queue = queues_[key];
    if (queue.polls.empty() && queue.tasks.size() >= kMaxWaitingPerQueue) {
      Done refused = std::move(task->done);
      refused(absl::ResourceExhaustedError(absl::StrCat(
          "too many Nexus tasks wait for a poller of task queue ", task_queue, " (at most ",
          kMaxWaitingPerQueue, ")")));
      return;
    }
    tasks_[task->token] = {key, task};
    task->timer = timers_.Schedule(deadline, [this, token = task->token] { ExpireTask(token); });
    if (queue.polls.empty()) {
      queue.tasks.push_back(task);
      return;
    }
    poll = std::move(queue.polls.front());
    queue.polls.pop_front();
    polls_.erase(poll->id);
  }
  Deliver(task, std::move(*poll));
}

uint64_t NexusTaskQueues::Poll(const std::string& namespace_id, const std::string& task_queue,
                               const std::string& identity,
                               const std::string& worker_instance_key, absl::Time deadline,
                               PollDone done) {
  const QueueKey key{namespace_id, task_queue};
  std::shared_ptr<Task> task;
  uint64_t id = 0;
  {
    std::lock_guard lock(mu_);
    id = next_id_++;
    RecordPoller(key, identity);
    Queue& queue = queues_[key];
    if (queue.tasks.empty()) {
      WaitingPoll& waiting = queue.polls.emplace_back();
      waiting.id = id;
      waiting.worker_instance_key = worker_instance_key;
      waiting.done = std::move(done);
      waiting.timer = timers_.Schedule(deadline, [this, key, id] { ExpirePoll(key, id); });
      polls_[id] = key;
      return id;
    }
    task = queue.tasks.front();
    queue.tasks.pop_front();
  }
  WaitingPoll now;
  now.id = id;
  now.done = std::move(done);
  Deliver(task, std::move(now));
  return id;
}

void NexusTaskQueues::Deliver(const std::shared_ptr<Task>& task, WaitingPoll poll) {
  timers_.Cancel(poll.timer);
  wf::PollNexusTaskQueueResponse out;
  out.set_task_token(task->token);
  *out.mutable_request() = task->request;
  poll.done(std::move(out));
}

void NexusTaskQueues::CancelPoll(uint64_t poll_id) {
  QueueKey key;
  {
    std::lock_guard lock(mu_);
    auto it = polls_.find(poll_id);
    if (it == polls_.end()) return;  // answered already
    key = it->second;
  }
  ExpirePoll(key, poll_id);
}

void NexusTaskQueues::ReleaseWorkerPolls(const std::string& namespace_id,
                                         const std::string& worker_instance_key) {
  if (worker_instance_key.empty()) return;
  std::vector<PollDone> released;
  {
    std::lock_guard lock(mu_);
    for (auto& [key, queue] : queues_) {
      if (key.first != namespace_id) continue;
      std::erase_if(queue.polls, [&](WaitingPoll& p) {
        if (p.worker_instance_key != worker_instance_key) return false;
        timers_.Cancel(p.timer);
        polls_.erase(p.id);
        released.push_back(std::move(p.done));
        return true;
      });
    }
  }
  for (PollDone& done : released) done(wf::PollNexusTaskQueueResponse());
}

void NexusTaskQueues::ExpirePoll(const QueueKey& key, uint64_t poll_id) {
  PollDone done;
  {
    std::lock_guard lock(mu_);
    if (polls_.erase(poll_id) == 0) return;
    auto q = queues_.find(key);
    if (q == queues_.end()) return;
    auto& polls = q->second.polls;
    for (auto it = polls.begin(); it != polls.end(); ++it) {
      if (it->id != poll_id) continue;
      done = std::move(it->done);
      polls.erase(it);
      break;
    }
    if (q->second.polls.empty() && q->second.tasks.empty()) queues_.erase(q);
  }
  if (done) done(wf::PollNexusTaskQueueResponse());
}

void NexusTaskQueues::ExpireTask(const std::string& token) {
  Done done;
  {
    std::lock_guard lock(mu_);
    auto it = tasks_.find(token);
    if (it == tasks_.end()) return;
    const auto [key, task] = it->second;
    tasks_.erase(it);
    done = std::move(task->done);
    auto q = queues_.find(key);
    if (q != queues_.end()) {
      std::erase(q->second.tasks, task);
      if (q->second.polls.empty() && q->second.tasks.empty()) queues_.erase(q);
    }
  }
  if (done) done(absl::DeadlineExceededError("upstream timeout"));
}

absl::StatusOr<NexusTaskQueues::Done> NexusTaskQueues::Take(const std::string& namespace_id,
                                                            const std::string& token) {
  if (token.rfind(namespace_id + "/", 0) != 0) {
    return absl::InvalidArgumentError("the task token is not one of this namespace's Nexus tasks");
  }
  std::lock_guard lock(mu_);
  auto it = tasks_.find(token);
  if (it == tasks_.end()) return Expired();
  std::shared_ptr<Task> task = it->second.second;
  tasks_.erase(it);
  timers_.Cancel(task->timer);
  return std::move(task->done);
}

absl::Status NexusTaskQueues::Complete(const std::string& namespace_id, const std::string& token,
                                       const temporal::api::nexus::v1::Response& response) {
  if (response.has_start_operation() && response.start_operation().has_async_success()) {
    const std::string& op_token = response.start_operation().async_success().operation_token();
    if (op_token.empty()) return absl::InvalidArgumentError("missing opration token in response");
    if (op_token.size() > kMaxOperationTokenBytes) {
      return absl::InvalidArgumentError(absl::StrCat("operation token length exceeds allowed limit (",
                                                     op_token.size(), "/", kMaxOperationTokenBytes, ")"));
    }
  }
  absl::StatusOr<Done> done = Take(namespace_id, token);
  if (!done.ok()) return done.status();
  (*done)(NexusAnswer{response, std::nullopt});
  return absl::OkStatus();
}

absl::Status NexusTaskQueues::Fail(const std::string& namespace_id, const std::string& token,
                                   const temporal::api::failure::v1::Failure& failure) {
  absl::StatusOr<Done> done = Take(namespace_id, token);
  if (!done.ok()) return done.status();
  (*done)(NexusAnswer{std::nullopt, failure});
  return absl::OkStatus();
}

void NexusTaskQueues::RecordPoller(const QueueKey& key, const std::string& identity) {
  const absl::Time now = clock_.Now();
  if (!pollers_.contains(key) && pollers_.size() >= kMaxPolledQueues) {
    // Forget every queue not polled lately; still full: this queue's pollers go unrecorded.
    for (auto q = pollers_.begin(); q != pollers_.end();) {
      std::erase_if(q->second, [&](const auto& p) { return p.second < now - kPollerMemory; });
      q = q->second.empty() ? pollers_.erase(q) : std::next(q);
    }
    if (pollers_.size() >= kMaxPolledQueues) return;
  }
  std::map<std::string, absl::Time>& seen = pollers_[key];
  seen[identity] = now;
  if (seen.size() <= kMaxPollersPerQueue) return;
  // Over the bound: forget the stale, then the oldest.
  std::erase_if(seen, [&](const auto& p) { return p.second < now - kPollerMemory; });
  while (seen.size() > kMaxPollersPerQueue) {
    seen.erase(std::min_element(seen.begin(), seen.end(), [](const auto& a, const auto& b) {
      return a.second < b.second;
    }));
  }
}

std::vector<std::pair<std::string, absl::Time>> NexusTaskQueues::Pollers(
    const std::string& namespace_id, const std::string& task_queue) {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, absl::Time>> out;
  auto it = pollers_.find({namespace_id, task_queue});
  if (it == pollers_.end()) return out;
  const absl::Time cutoff = clock_.Now() - kPollerMemory;
  std::erase_if(it->second, [&](const auto& p) { return p.second < cutoff; });
  out.assign(it->second.begin(), it->second.end());
  if (it->second.empty()) pollers_.erase(it);
  return out;
}

size_t NexusTaskQueues::WaitingDispatches(const std::string& namespace_id,
                                          const std::string& task_queue) {
  std::lock_guard lock(mu_);
  auto q = queues_.find({namespace_id, task_queue});
  return q == queues_.end() ? 0 : q->second.tasks.size();
}

size_t NexusTaskQueues::WaitingPolls(const std::string& namespace_id, const std::string& task_queue) {
  std::lock_guard lock(mu_);
  auto q = queues_.find({namespace_id, task_queue});
  return q == queues_.end() ? 0 : q->second.polls.size();
}

std::optional<std::pair<std::string, std::string>> NexusTaskQueues::QueueOfToken(
    const std::string& token) {
  const size_t first = token.find('/');
  const size_t second = first == std::string::npos ? first : token.find('/', first + 1);
  if (second == std::string::npos || first == 0 || second + 1 >= token.size()) return std::nullopt;
  return std::make_pair(token.substr(0, first), token.substr(second + 1));
}

}  // namespace tock::server::nexus
