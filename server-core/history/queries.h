// Queries through legacy query tasks (reference/sdk_protocol.md §4, rules 1, 2, 4 and 6):
// a query waits while the run has a workflow task scheduled or started, then goes to the
// workflow's task queue as a query task (in memory only: a query is not durable) carrying
// the full history; the worker answers with RespondQueryTaskCompleted. At most 30 s.
//
// The dispatcher keeps the queries waiting for an answer; it needs of the engine (Engine)
// besides RunAccess the run's history, whether a speculative task is in flight, a call
// after the run's next commit, the way to matching, and whether the server is stopping.
//
// Thread safety: safe from any thread.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/common/clock.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/any_shard.h"
#include "server-core/history/mutation.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::history {

class QueryDispatcher {
 public:
  class Engine : public virtual RunAccess {
   public:
    virtual absl::StatusOr<std::vector<HistoryEvent>> ReadHistory(const MutableStateRecord& s) = 0;
    // Whether a workflow task shown to a worker but not written is in flight (updates.cc).
    virtual bool HasSpeculative(const std::string& run_id) = 0;
    // Calls `then(expired)` once: after the run's next commit, or at `limit`.
    virtual void AfterNextCommit(const RunKey& key, int64_t seen_next_event_id, absl::Time limit,
                                 std::function<void(bool expired)> then) = 0;
    // Hands a task to matching.
    virtual void QueueTask(persistence::TaskQueueTask task) = 0;
    // Shutdown has begun: nothing new waits.
    virtual bool ShuttingDown() = 0;
  };

  using Done = std::function<void(absl::StatusOr<wf::QueryWorkflowResponse>)>;

  QueryDispatcher(Engine& engine, Clock& clock, TimerThread& timers)
      : engine_(engine), clock_(clock), timers_(timers) {}

  // The query of run `key`: answered now (rejected by its condition), or once a worker
  // answered its query task, or DEADLINE_EXCEEDED at `deadline` (at most 30 s from now).
  void Query(const NamespaceRef& ns, const RunKey& key, const wf::QueryWorkflowRequest& req,
             absl::Time deadline, Done done);
  // The poll path: the query task as a worker receives it; NOT_FOUND when the query is no
  // longer waiting.
  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> StartTask(const NamespaceRef& ns,
                                                              const persistence::TaskQueueTask& task);
  // The worker's answer.
  absl::Status Complete(const NamespaceRef& ns, const wf::RespondQueryTaskCompletedRequest& req);
  // Shutdown: every waiting query is answered UNAVAILABLE (to query again elsewhere).
  void ReleaseAll();

 private:
  struct Pending {
    Done done;
    temporal::api::query::v1::WorkflowQuery query;
    RunKey key;
    TimerThread::Id timer = 0;
  };
  void Dispatch(const NamespaceRef& ns, const RunKey& key, const wf::QueryWorkflowRequest& req,
                absl::Time deadline, Done done);
  // The query task for a run that has no workflow task in flight.
  void SendTask(const NamespaceRef& ns, const RunKey& key, const MutableStateRecord& state,
                const wf::QueryWorkflowRequest& req, absl::Time deadline, Done done);

  Engine& engine_;
  Clock& clock_;
  TimerThread& timers_;
  std::mutex mu_;
  std::unordered_map<std::string, Pending> pending_;  // by query id; guarded by mu_
};

}  // namespace tock::server::history
