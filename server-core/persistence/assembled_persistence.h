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
};

// `db` is destroyed after every store (they use it). `location` is shown in banners: never
// a password.
std::unique_ptr<Persistence> AssemblePersistence(std::shared_ptr<void> db, Stores stores,
                                                 std::string engine, std::string location);

}  // namespace tock::persistence
