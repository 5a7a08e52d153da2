// gRPC adapters of the frontend: they register the implemented methods of
// WorkflowService, OperatorService and tock.admin.v1.AdminService in the dispatcher and
// forward each request to an engine. No domain logic lives here.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "lib/common/clock.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/nexus/endpoint_registry.h"
#include "server-core/nexus/nexus_task_queues.h"
#include "server-core/persistence/visibility_store.h"
#include "server-core/rpc/dispatcher.h"

namespace tock::server::frontend {

namespace wf = temporal::api::workflowservice::v1;
namespace op = temporal::api::operatorservice::v1;

// Facts about the running server that GetClusterInfo, ListClusters and DescribeCluster report.
struct ServerFacts {
  std::string cluster_id;
  int32_t history_shard_count = 0;
  std::string persistence_engine;
  std::string persistence_location;
  absl::Time start_time;
  std::string console_url;  // set before the gRPC port opens; "": no console
};

void RegisterWorkflowServiceHandlers(rpc::Dispatcher& dispatcher,
                                     namespaces::NamespaceEngine& namespaces,
                                     const ServerFacts& facts);
// Search attributes and namespace deletion (the remote-cluster calls: server-core/replication).
// The calls Temporal's server keeps off by default, answered with its errors
// (gated_off_handlers.cc).
void RegisterGatedOffHandlers(rpc::Dispatcher& dispatcher);

// How long a worker's long poll may wait: until a second before the caller gives up, at most
// a minute; on this host's partition of another host's queue, until the router's limit.
absl::Time PollDeadline(const rpc::CallContext& ctx, absl::Time now);

// The handler side of Nexus: PollNexusTaskQueue, RespondNexusTaskCompleted/Failed
// (nexus_task_handler.cc).
void RegisterNexusTaskHandlers(rpc::Dispatcher& dispatcher, namespaces::NamespaceEngine& namespaces,
                               nexus::NexusTaskQueues& queues, Clock& clock);
// Also the Nexus endpoint registry's five calls (cluster-global: no namespace to resolve).
void RegisterOperatorServiceHandlers(rpc::Dispatcher& dispatcher,
                                     namespaces::NamespaceEngine& namespaces,
                                     nexus::EndpointRegistry& endpoints);
}  // namespace tock::server::frontend

namespace tock::server::history {
class HistoryEngine;
}
namespace tock::server::matching {
class MatchingEngine;
class WorkerRegistry;
}
namespace tock::server::archiver {
class ArchiveRegistry;
}
namespace tock::server::deployments {
class DeploymentRegistry;
}

namespace tock::server::frontend {

// Start, polls, task responses, signal/cancel/terminate/describe/history.
void RegisterWorkflowRpcHandlers(rpc::Dispatcher& dispatcher,
                                 namespaces::NamespaceEngine& namespaces,
                                 history::HistoryEngine& history,
                                 matching::MatchingEngine& matching, Clock& clock,
                                 archiver::ArchiveRegistry* archives = nullptr,
                                 deployments::DeploymentRegistry* deployments = nullptr,
                                 nexus::NexusTaskQueues* nexus_tasks = nullptr);

// The Worker Deployment calls (worker_deployment_handler.cc).
void RegisterWorkerDeploymentHandlers(rpc::Dispatcher& dispatcher,
                                      namespaces::NamespaceEngine& namespaces,
                                      deployments::DeploymentRegistry& registry, Clock& clock);

// RecordWorkerHeartbeat, ListWorkers, CountWorkers, DescribeWorker
// (worker_registry_handler.cc).
void RegisterWorkerRegistryHandlers(rpc::Dispatcher& dispatcher,
                                    namespaces::NamespaceEngine& namespaces,
                                    matching::WorkerRegistry& registry);

// List/Count of workflow executions over the visibility store.
void RegisterVisibilityHandlers(rpc::Dispatcher& dispatcher,
                                namespaces::NamespaceEngine& namespaces,
                                persistence::VisibilityStore& store);

void RegisterAdminServiceHandlers(rpc::Dispatcher& dispatcher,
                                  namespaces::NamespaceEngine& namespaces,
                                  const ServerFacts& facts);

// AdminService.DescribeMutableState (mutable_state_handler.cc): namespace resolved as a read.
void RegisterMutableStateHandler(rpc::Dispatcher& dispatcher,
                                 namespaces::NamespaceEngine& namespaces,
                                 history::HistoryEngine& history);

}  // namespace tock::server::frontend
