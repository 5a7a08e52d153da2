// The history engine's reach beyond this host: the AnyShard operations (history/any_shard.h)
// run on the engine when this host owns the run's shard and are sent to the owner
// otherwise (HostService/History). Ready tasks stay on this host, in its partition of their
// queue (queue_partitions.h).
//
// A refusal for ownership (the shard or queue is moving) or an unreachable owner is retried
// for a few seconds with the owner looked up again: the engine's own callers retry
// failures anyway (transfer tasks with backoff until done; a poll whose task could not be
// started puts it back), so the budget only keeps a move from showing as an error.
//
// Thread safety: safe from any thread.
#pragma once

#include <atomic>

#include "server-core/history/history_engine.h"
#include "server-core/routing/peers.h"
#include "server-core/routing/placement.h"

namespace tock::server::routing {

namespace wf = temporal::api::workflowservice::v1;

class RoutedHistory : public history::AnyShard {
 public:
  static constexpr absl::Duration kRetryBudget = absl::Seconds(5);

  RoutedHistory(history::HistoryEngine& local, history::ShardController& shards,
                Placement& placement, Peers& peers);
  ~RoutedHistory() override;
  // Shutdown: nothing is retried any more. Call when shutdown begins (calls waiting on a
  // retry would hold gRPC's shutdown). Idempotent.
  void Stop();

  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> RecordWorkflowTaskStarted(
      const history::NamespaceRef& ns, const persistence::TaskQueueTask& task,
      const std::string& identity) override;
  absl::StatusOr<wf::PollActivityTaskQueueResponse> RecordActivityTaskStarted(
      const history::NamespaceRef& ns, const persistence::TaskQueueTask& task,
      const std::string& identity) override;
  // Without a waiting thread when this host owns the run's shard; else as above.
  void RecordWorkflowTaskStartedAsync(
      const history::NamespaceRef& ns, const persistence::TaskQueueTask& task,
      const std::string& identity,
      history::Answer<wf::PollWorkflowTaskQueueResponse> done) override;
  void RecordActivityTaskStartedAsync(
      const history::NamespaceRef& ns, const persistence::TaskQueueTask& task,
      const std::string& identity,
      history::Answer<wf::PollActivityTaskQueueResponse> done) override;
  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> StartQueryTask(
      const history::NamespaceRef& ns, const persistence::TaskQueueTask& task) override;
  absl::StatusOr<wf::StartWorkflowExecutionResponse> StartChildWorkflow(
      const history::NamespaceRef& ns, const tock::cluster::v1::StartChild& child) override;
  absl::Status RecordChildClosed(const tock::cluster::v1::ChildClosed& closed) override;
  absl::Status SignalWorkflow(const history::NamespaceRef& ns,
                              const wf::SignalWorkflowExecutionRequest& req) override;
  absl::Status RequestCancelWorkflow(const history::NamespaceRef& ns,
                                     const wf::RequestCancelWorkflowExecutionRequest& req) override;
  absl::Status TerminateWorkflow(const history::NamespaceRef& ns,
                                 const wf::TerminateWorkflowExecutionRequest& req) override;

 private:
  // Runs `local` when this host owns the shard of (namespace_id, workflow_id), else sends
  // `request` to its owner; the answer's bytes parsed as Response (or only the status).
  // A start on this host's shard without waiting (`local_async`), or else `waiting` (OnOwner,
  // with its retries): also when the local start found the shard moving.
  template <typename Response, typename LocalAsync, typename Waiting>
  void StartOnOwner(const std::string& namespace_id, const std::string& workflow_id,
                    LocalAsync local_async, Waiting waiting, history::Answer<Response> done);
  template <typename Response, typename Local>
  absl::StatusOr<Response> OnOwner(const std::string& namespace_id,
                                   const std::string& workflow_id,
                                   const tock::cluster::v1::HistoryRequest& request, Local local);
  absl::Status Remote(const std::string& owner, const tock::cluster::v1::HistoryRequest& request,
                      std::string* response);

  history::HistoryEngine& local_;
  history::ShardController& shards_;
  Placement& placement_;
  Peers& peers_;
  std::atomic<bool> stopping_{false};
};

}  // namespace tock::server::routing
