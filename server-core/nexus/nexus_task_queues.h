// Nexus tasks (reference/api_2026.md §4.3): never stored. A dispatch (the caller side's start
// or cancel of an operation) hands its request to a poller of the handler's (namespace, task
// queue) already waiting, or waits in memory for one; the poller's answer
// (RespondNexusTaskCompleted / RespondNexusTaskFailed, by the task's token) goes back to the
// dispatch. A dispatch no poller took, or no answer came for, by its deadline ends with
// DEADLINE_EXCEEDED "upstream timeout" (Temporal's RequestTimeout, a retryable handler error
// UPSTREAM_TIMEOUT to the caller); an answer after that is NOT_FOUND "Nexus task not found or
// already expired", as Temporal answers it.
//
// Thread safety: safe from any thread. Callbacks run without the lock held, on the calling
// thread or the timer thread; they must be short.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/common/clock.h"
#include "lib/common/timer_thread.h"
#include "temporal/api/failure/v1/message.pb.h"
#include "temporal/api/nexus/v1/message.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::nexus {

// The worker's answer to a Nexus task: its response, or the handler error it failed with.
struct NexusAnswer {
  std::optional<temporal::api::nexus::v1::Response> response;
  std::optional<temporal::api::failure::v1::Failure> failure;
};

class NexusTaskQueues {
 public:
  using Done = std::function<void(absl::StatusOr<NexusAnswer>)>;
  using PollDone =
      std::function<void(absl::StatusOr<temporal::api::workflowservice::v1::PollNexusTaskQueueResponse>)>;
  // Temporal's component.nexusoperations.limit.operation.token.length.
  static constexpr size_t kMaxOperationTokenBytes = 4096;
  // Dispatches that may wait for a poller per queue (more are refused RESOURCE_EXHAUSTED).
  static constexpr size_t kMaxWaitingPerQueue = 10000;

  NexusTaskQueues(Clock& clock, TimerThread& timers);
  // Answers every waiting poll empty and every dispatch UNAVAILABLE.
  ~NexusTaskQueues();
  // Answers every waiting poll empty now (the server stops: gRPC's shutdown waits for them).
  void ReleasePolls();

  // Sends `request` to a poller of (namespace_id, task_queue); `done` gets the answer, or an
  // error at `deadline`. The request's header gets `request-timeout` (what remains of the
  // deadline, as a Go duration) as Temporal's matching adds it.
  void Dispatch(const std::string& namespace_id, const std::string& task_queue,
                temporal::api::nexus::v1::Request request, absl::Time deadline, Done done);

  // A long poll of the worker `identity` (its `worker_instance_key`, may be empty): `done`
  // gets the next task (with its token) or, at `deadline`, an empty response. Returns an id
  // for CancelPoll.
  uint64_t Poll(const std::string& namespace_id, const std::string& task_queue,
                const std::string& identity, const std::string& worker_instance_key,
                absl::Time deadline, PollDone done);
  // The worker is shutting down (ShutdownWorker): its waiting polls answer empty now.
  void ReleaseWorkerPolls(const std::string& namespace_id, const std::string& worker_instance_key);
  // The poller went away: its poll ends (answered empty) and takes no task.
  void CancelPoll(uint64_t poll_id);

  // The worker's answers, by the token its poll returned. INVALID_ARGUMENT for a token of
  // another namespace or a malformed answer; NOT_FOUND when the dispatch stopped waiting.
  absl::Status Complete(const std::string& namespace_id, const std::string& token,
                        const temporal::api::nexus::v1::Response& response);
  absl::Status Fail(const std::string& namespace_id, const std::string& token,
                    const temporal::api::failure::v1::Failure& failure);

  // The (namespace id, task queue) a task token names, or nothing for a malformed token
  // (how hosts route a worker's answer to the host of its queue).
  static std::optional<std::pair<std::string, std::string>> QueueOfToken(const std::string& token);

  // The workers that polled the queue within kPollerMemory, with their last poll
  // (DescribeTaskQueue of type NEXUS).
  static constexpr absl::Duration kPollerMemory = absl::Minutes(5);
  static constexpr size_t kMaxPollersPerQueue = 1000;
  static constexpr size_t kMaxPolledQueues = 100000;
  std::vector<std::pair<std::string, absl::Time>> Pollers(const std::string& namespace_id,
                                                          const std::string& task_queue);

  // The queues' waiting dispatches and polls (tests, DescribeTaskQueue).
  size_t WaitingDispatches(const std::string& namespace_id, const std::string& task_queue);
  size_t WaitingPolls(const std::string& namespace_id, const std::string& task_queue);

 private:
  struct Task {
    std::string token;
    temporal::api::nexus::v1::Request request;
    absl::Time deadline;
    Done done;
    TimerThread::Id timer = 0;
  };
  struct WaitingPoll {
    uint64_t id = 0;
    std::string worker_instance_key;
    PollDone done;
    TimerThread::Id timer = 0;
  };
  struct Queue {
    std::deque<std::shared_ptr<Task>> tasks;  // dispatched, not taken yet
    std::deque<WaitingPoll> polls;            // waiting for a task
  };
  using QueueKey = std::pair<std::string, std::string>;  // (namespace id, task queue)

  // Hands `task` to `poll` (the lock is not held).
  void Deliver(const std::shared_ptr<Task>& task, WaitingPoll poll);
  void ExpireTask(const std::string& token);
  void RecordPoller(const QueueKey& key, const std::string& identity);  // the lock is held
  void ExpirePoll(const QueueKey& key, uint64_t poll_id);
  absl::StatusOr<Done> Take(const std::string& namespace_id, const std::string& token);

  Clock& clock_;
  TimerThread& timers_;
  std::mutex mu_;
  uint64_t next_id_ = 1;
  std::map<QueueKey, Queue> queues_;
  // Every task until answered or expired (taken or not), by token, with its queue.
  std::map<std::string, std::pair<QueueKey, std::shared_ptr<Task>>> tasks_;
  std::map<uint64_t, QueueKey> polls_;  // waiting polls' queues
  // Who polled each queue lately: identity -> last poll (forgotten after kPollerMemory).
  std::map<QueueKey, std::map<std::string, absl::Time>> pollers_;
};

}  // namespace tock::server::nexus
