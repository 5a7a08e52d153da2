// The persistence layer of one server: one store per aggregate over one database.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server-core/persistence/archival_queue_store.h"
#include "server-core/persistence/batch_store.h"
#include "server-core/persistence/deployment_store.h"
#include "server-core/persistence/nexus_endpoint_store.h"
#include "server-core/persistence/schedule_store.h"
#include "server-core/persistence/cluster_metadata_store.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/membership_store.h"
#include "server-core/persistence/namespace_store.h"
#include "server-core/persistence/replication_store.h"
#include "server-core/persistence/timer_store.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::persistence {

// Testing only (Temporal's persistence fault injection): `rate` of the store calls fail.
// See fault_injection.h.
struct FaultInjectionConfig {
  double rate = 0;    // 0: off
  uint64_t seed = 0;  // 0: a random seed
  // A slower disk: each sync of a SQLite database file waits this long before the fsync
  // (sqlite/slow_sync_vfs.h). Zero: off. At most 1 s.
  absl::Duration sync_delay;
};

struct PersistenceConfig {
  // "sqlite" (the default: one process on one file) or "postgres" (several hosts may
  // share one database).
  std::string engine = "sqlite";
  // SQLite database file; empty or ":memory:" for an in-memory database.
  std::string sqlite_path;
  // `persistence.sqlite.synchronous` for a database file: "full" (the default: a commit is
  // on the disk before it is answered, and survives power loss) or "normal" (it survives a
  // crash of the process only; no fsync per commit). See SqliteDb::Synchronous.
  std::string sqlite_synchronous = "full";
  // `persistence.sqlite.handler_threads`: threads that run the calls which wait for their
  // commit (rpc::Dispatcher::RunHandlersOnThreads, Hop::kUnary), so that gRPC's few
  // callback threads go on taking calls meanwhile and concurrent commits share a
  // transaction; 0 runs every call on gRPC's threads. Measured (docs/performance.md): 1.5x
  // the workflows/s at `full`, 1.14x at `normal`, and about 40 % fewer WAL pages per
  // transition.
  int sqlite_handler_threads = 32;
  // PostgreSQL: libpq's URL, postgresql://USER[:PASSWORD]@HOST[:PORT]/DB (a password is
  // better kept in ~/.pgpass or PGPASSWORD than in the URL), and the size of the pool.
  std::string postgres_url;
  int postgres_max_connections = 20;
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
  virtual BatchStore& batches() = 0;
  virtual ScheduleStore& schedules() = 0;
  virtual DeploymentStore& deployments() = 0;  // Worker Deployments (issue 37)
  virtual ReplicationStore& replication() = 0;
  virtual MembershipStore& membership() = 0;
  virtual TimerStore& timers() = 0;  // the timer service (issue 14)
  virtual NexusEndpointStore& nexus_endpoints() = 0;  // cluster-global (issue 37)
  // For banners and DescribeCluster: "sqlite", and the file or ":memory:"; or "postgres",
  // and postgresql://USER@HOST:PORT/DB (never the password).
  virtual std::string engine() const = 0;
  virtual std::string location() const = 0;
  // Whether several tock-server hosts may run on this database at once (they then share its
  // shards by membership); false when it belongs to one process (SQLite).
  virtual bool shared_by_hosts() const = 0;
  // What an acknowledged change survives, for the banner: "full (survives power loss)",
  // "normal (...)" or "none (in memory ...)" for SQLite, read from the database itself.
  virtual std::string durability() const = 0;
};

// Opens (creating when needed) the database and applies pending schema migrations.
// UNAVAILABLE when the file cannot be opened or the PostgreSQL database cannot be reached;
// FAILED_PRECONDITION when the schema is newer than this binary knows; INVALID_ARGUMENT for
// an unknown engine or a postgres engine without a URL.
absl::StatusOr<std::unique_ptr<Persistence>> OpenPersistence(const PersistenceConfig& config);

}  // namespace tock::persistence
