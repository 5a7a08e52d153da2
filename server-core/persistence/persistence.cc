#include "server-core/persistence/persistence.h"

#include "absl/strings/str_cat.h"
#include "server-core/persistence/postgres/postgres_persistence.h"
#include "server-core/persistence/sqlite/slow_sync_vfs.h"
#include "server-core/persistence/sqlite/sqlite_persistence.h"

namespace tock::persistence {

absl::StatusOr<std::unique_ptr<Persistence>> OpenPersistence(const PersistenceConfig& config) {
  if (config.engine == "sqlite") {
    absl::StatusOr<SqliteDb::Synchronous> synchronous =
        ParseSqliteSynchronous(config.sqlite_synchronous);
    if (!synchronous.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("persistence.sqlite.synchronous ",
                                                     synchronous.status().message()));
    }
    InstallSlowSyncVfs(config.fault_injection.sync_delay);
    return OpenSqlitePersistence(config.sqlite_path, *synchronous);
  }
  if (config.engine == "postgres") {
    if (config.postgres_url.empty()) {
      return absl::InvalidArgumentError(
          "persistence.postgres.url is empty; the postgres engine needs "
          "postgresql://USER@HOST:PORT/DB (or tock-server --postgres-url)");
    }
    return OpenPostgresPersistence(config.postgres_url, config.postgres_max_connections);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "persistence.engine: unknown engine \"", config.engine, "\"; allowed: sqlite, postgres"));
}

}  // namespace tock::persistence
