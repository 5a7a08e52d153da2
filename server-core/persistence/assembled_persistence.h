// What every backend's Persistence is: its six stores over one database handle (a SQLite
// connection, a PostgreSQL pool) that outlives them. Backends build the stores and hand
// them over here instead of each writing the same class.
#pragma once

#include <memory>
#include <string>

#include "server-core/persistence/persistence.h"

namespace tock::persistence {

struct Stores {
  std::unique_ptr<NamespaceStore> namespaces;
  std::unique_ptr<ClusterMetadataStore> cluster_metadata;
  std::unique_ptr<ExecutionStore> executions;
  std::unique_ptr<VisibilityStore> visibility;
  std::unique_ptr<ArchivalQueueStore> archival_queue;
  std::unique_ptr<MembershipStore> membership;
  std::unique_ptr<BatchStore> batches;
  std::unique_ptr<ScheduleStore> schedules;
  std::unique_ptr<DeploymentStore> deployments;
  std::unique_ptr<ReplicationStore> replication;
  std::unique_ptr<TimerStore> timers;
  std::unique_ptr<NexusEndpointStore> nexus_endpoints;
};

// What describes a backend: its engine name, the location banners show (never a password),
// whether several hosts may share it (Persistence::shared_by_hosts), and what an
// acknowledged change survives (Persistence::durability).
struct BackendFacts {
  std::string engine;
  std::string location;
  bool shared_by_hosts = false;
  std::string durability;
};

// `db` is destroyed after every store (they use it).
std::unique_ptr<Persistence> AssemblePersistence(std::shared_ptr<void> db, Stores stores,
                                                 BackendFacts facts);

}  // namespace tock::persistence
