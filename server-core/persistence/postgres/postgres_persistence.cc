#include "server-core/persistence/postgres/postgres_persistence.h"

#include "server-core/persistence/assembled_persistence.h"
#include "server-core/persistence/postgres/pg_schema.h"
#include "server-core/persistence/postgres/pg_stores.h"

namespace tock::persistence {

absl::StatusOr<std::unique_ptr<Persistence>> OpenPostgresPersistence(const std::string& url,
                                                                     int max_connections) {
  PgPoolOptions options;
  options.max_connections = max_connections;
  absl::StatusOr<std::unique_ptr<PgPool>> pool = PgPool::Open(url, options);
  if (!pool.ok()) return pool.status();
  if (absl::Status s = MigratePostgres(**pool); !s.ok()) return s;
  PgPool& db = **pool;
  Stores stores{NewPostgresNamespaceStore(db),    NewPostgresClusterMetadataStore(db),
                NewPostgresExecutionStore(db),    NewPostgresVisibilityStore(db),
                NewPostgresArchivalQueueStore(db), NewPostgresMembershipStore(db), NewPostgresBatchStore(db),
                NewPostgresScheduleStore(db),     NewPostgresDeploymentStore(db),     NewPostgresReplicationStore(db),
                NewPostgresTimerStore(db),        NewPostgresNexusEndpointStore(db)};
  // postgresql://USER@HOST:PORT/DB: never the password.
  // Each COMMIT waits as the server's synchronous_commit says (on by default: flushed).
  BackendFacts facts{"postgres", db.location(), /*shared_by_hosts=*/true,
                     "the PostgreSQL server's (synchronous_commit; on by default: survives "
                     "power loss)"};
  return AssemblePersistence(std::shared_ptr<PgPool>(std::move(*pool)), std::move(stores),
                             std::move(facts));
}

}  // namespace tock::persistence
