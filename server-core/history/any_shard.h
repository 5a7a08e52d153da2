// The history operations that one run's work needs done to ANOTHER run (or that the poll
// path needs done to the run of a task), wherever that run's shard is owned: here, or on
// another host sharing the database (server-core/routing forwards them). The engine
// implements them for the shards it owns; with one host that is every shard.
//
// Thread safety: implementations are safe from any thread.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "server-core/persistence/execution_store.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "tock/cluster/v1/host_service.pb.h"

namespace tock::server::history {

namespace wf = temporal::api::workflowservice::v1;

// The namespace a call addresses, resolved by the frontend.
struct NamespaceRef {
  std::string id;
  std::string name;
  int64_t failover_version = 0;
  // A write this cluster makes even where the namespace is not active: the termination of a
  // run that lost a version conflict (replication_applier.cc).
  bool conflict_resolution = false;
};

// An answer given later, once, from any thread (often the thread that finished its commit).
template <typename T>
using Answer = std::function<void(absl::StatusOr<T>)>;

class AnyShard {
 public:
  virtual ~AnyShard() = default;

  // The poll path: matching handed out `task`; start it. NOT_FOUND when the task is stale
  // (the caller then polls again).
  virtual absl::StatusOr<wf::PollWorkflowTaskQueueResponse> RecordWorkflowTaskStarted(
      const NamespaceRef& ns, const persistence::TaskQueueTask& task,
      const std::string& identity) = 0;
  virtual absl::StatusOr<wf::PollActivityTaskQueueResponse> RecordActivityTaskStarted(
      const NamespaceRef& ns, const persistence::TaskQueueTask& task,
      const std::string& identity) = 0;
  // The same, answered through `done` rather than by waiting for the start's commit (no
  // thread waits). By default, the calls above.
  virtual void RecordWorkflowTaskStartedAsync(const NamespaceRef& ns,
                                              const persistence::TaskQueueTask& task,
                                              const std::string& identity,
                                              Answer<wf::PollWorkflowTaskQueueResponse> done) {
    done(RecordWorkflowTaskStarted(ns, task, identity));
  }
  virtual void RecordActivityTaskStartedAsync(const NamespaceRef& ns,
                                              const persistence::TaskQueueTask& task,
                                              const std::string& identity,
                                              Answer<wf::PollActivityTaskQueueResponse> done) {
    done(RecordActivityTaskStarted(ns, task, identity));
  }
  // The poll path for a query task; NOT_FOUND when the query is no longer waiting.
  virtual absl::StatusOr<wf::PollWorkflowTaskQueueResponse> StartQueryTask(
      const NamespaceRef& ns, const persistence::TaskQueueTask& task) = 0;

  // A child run of `child.parent()` (ALREADY_EXISTS when its request id started one before).
  virtual absl::StatusOr<wf::StartWorkflowExecutionResponse> StartChildWorkflow(
      const NamespaceRef& ns, const tock::cluster::v1::StartChild& child) = 0;
  // The parent records that its child closed (NOT_FOUND when the parent is gone).
  virtual absl::Status RecordChildClosed(const tock::cluster::v1::ChildClosed& closed) = 0;

  virtual absl::Status SignalWorkflow(const NamespaceRef& ns,
                                      const wf::SignalWorkflowExecutionRequest& req) = 0;
  virtual absl::Status RequestCancelWorkflow(
      const NamespaceRef& ns, const wf::RequestCancelWorkflowExecutionRequest& req) = 0;
  virtual absl::Status TerminateWorkflow(const NamespaceRef& ns,
                                         const wf::TerminateWorkflowExecutionRequest& req) = 0;
};

}  // namespace tock::server::history
