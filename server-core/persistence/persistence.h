// The persistence layer of one server: one store per aggregate over one database.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server-core/persistence/archival_queue_store.h"
#include "server-core/persistence/cluster_metadata_store.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/membership_store.h"
#include "server-core/persistence/namespace_store.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::persistence {

// Testing only (Temporal's persistence fault injection): `rate` of the store calls fail.
// See fault_injection.h.
struct FaultInjectionConfig {
  double rate = 0;    // 0: off
  uint64_t seed = 0;  // 0: a random seed
};

struct PersistenceConfig {
  // "sqlite" (the default) or "postgres" (not built yet).
  std::string engine = "sqlite";
  // SQLite database file; empty or ":memory:" for an in-memory database.
  std::string sqlite_path;
  FaultInjectionConfig fault_injection;
};

class Persistence {
 public:
  virtual ~Persistence() = default;
  virtual NamespaceStore& namespaces() = 0;
  virtual ClusterMetadataStore& cluster_metadata() = 0;
  virtual ExecutionStore& executions() = 0;
  virtual VisibilityStore& visibility() = 0;
  virtual ArchivalQueueStore& archival_queue() = 0;
  virtual MembershipStore& membership() = 0;
  // For banners and DescribeCluster: "sqlite", and the file or ":memory:".
  virtual std::string engine() const = 0;
  virtual std::string location() const = 0;
};

// Opens (creating when needed) the database and applies pending schema migrations.
// UNAVAILABLE when the file cannot be opened; FAILED_PRECONDITION when the schema is newer
// than this binary knows.
absl::StatusOr<std::unique_ptr<Persistence>> OpenPersistence(const PersistenceConfig& config);

}  // namespace tock::persistence
