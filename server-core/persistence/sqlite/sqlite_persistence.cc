#include "server-core/persistence/sqlite/sqlite_persistence.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/assembled_persistence.h"
#include "server-core/persistence/sqlite/sqlite_schema.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"

namespace tock::persistence {

namespace {

// What an acknowledged change survives, from the database itself (the banner's line).
absl::StatusOr<std::string> Durability(SqliteDb& db) {
  if (db.in_memory()) return std::string("none (in memory: the data goes with the process)");
  absl::StatusOr<int> synchronous = db.SynchronousInForce();
  if (!synchronous.ok()) return synchronous.status();
  switch (*synchronous) {
    case 0:
      return std::string("off (a crash of the machine may corrupt the database)");
    case 1:
      return std::string("normal (survives a crash of the process, not power loss)");
    default:  // 2 FULL, 3 EXTRA
      return std::string("full (survives power loss)");
  }
}

}  // namespace

absl::StatusOr<SqliteDb::Synchronous> ParseSqliteSynchronous(const std::string& value) {
  if (value == "full") return SqliteDb::Synchronous::kFull;
  if (value == "normal") return SqliteDb::Synchronous::kNormal;
  // Quoted, but bounded: the value comes from a file or a command line.
  const bool long_value = value.size() > 32;
  return absl::InvalidArgumentError(absl::StrCat(
      "must be full (a commit survives power loss) or normal (it survives a crash of the "
      "process only); got \"",
      long_value ? value.substr(0, 32) : value, long_value ? "...\"" : "\""));
}

absl::StatusOr<std::unique_ptr<Persistence>> OpenSqlitePersistence(
    const std::string& path, SqliteDb::Synchronous synchronous) {
  if (!path.empty() && path != ":memory:") {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent)) {
      return absl::UnavailableError(absl::StrCat("cannot open the SQLite database ", path,
                                                 ": the directory ", parent.string(),
                                                 " does not exist"));
    }
  }
  absl::StatusOr<std::unique_ptr<SqliteDb>> db =
      SqliteDb::Open(path, SqliteDb::kInMemoryLimitBytes, synchronous);
  if (!db.ok()) return db.status();
  if (absl::Status s = MigrateSqlite(**db); !s.ok()) return s;
  absl::StatusOr<std::string> durability = Durability(**db);
  if (!durability.ok()) return durability.status();
  SqliteDb& conn = **db;
  Stores stores{NewSqliteNamespaceStore(conn),    NewSqliteClusterMetadataStore(conn),
                NewSqliteExecutionStore(conn),    NewSqliteVisibilityStore(conn),
                NewSqliteArchivalQueueStore(conn), NewSqliteMembershipStore(conn), NewSqliteBatchStore(conn),
                NewSqliteScheduleStore(conn),     NewSqliteDeploymentStore(conn),     NewSqliteReplicationStore(conn),
                NewSqliteTimerStore(conn),        NewSqliteNexusEndpointStore(conn)};
  // One process only: a second tock-server on the same file is refused at open.
  BackendFacts facts{"sqlite", conn.location(), /*shared_by_hosts=*/false,
                     std::move(*durability)};
  return AssemblePersistence(std::shared_ptr<SqliteDb>(std::move(*db)), std::move(stores),
                             std::move(facts));
}

}  // namespace tock::persistence
