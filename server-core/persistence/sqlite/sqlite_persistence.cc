#include "server-core/persistence/sqlite/sqlite_persistence.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/assembled_persistence.h"
#include "server-core/persistence/sqlite/sqlite_schema.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"

namespace tock::persistence {

absl::StatusOr<std::unique_ptr<Persistence>> OpenSqlitePersistence(const std::string& path) {
  if (!path.empty() && path != ":memory:") {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent)) {
      return absl::UnavailableError(absl::StrCat("cannot open the SQLite database ", path,
                                                 ": the directory ", parent.string(),
                                                 " does not exist"));
    }
  }
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  if (!db.ok()) return db.status();
  if (absl::Status s = MigrateSqlite(**db); !s.ok()) return s;
  SqliteDb& conn = **db;
  Stores stores{NewSqliteNamespaceStore(conn),    NewSqliteClusterMetadataStore(conn),
                NewSqliteExecutionStore(conn),    NewSqliteVisibilityStore(conn),
                NewSqliteArchivalQueueStore(conn), NewSqliteMembershipStore(conn), NewSqliteBatchStore(conn),
                NewSqliteScheduleStore(conn),     NewSqliteReplicationStore(conn),
                NewSqliteTimerStore(conn)};
  // One process only: a second tock-server on the same file is refused at open.
  BackendFacts facts{"sqlite", conn.location(), /*shared_by_hosts=*/false};
  return AssemblePersistence(std::shared_ptr<SqliteDb>(std::move(*db)), std::move(stores),
                             std::move(facts));
}

}  // namespace tock::persistence
