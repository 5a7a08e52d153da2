// The SQLite schema as an ordered list of migrations. Each is applied once, in its own
// transaction, and recorded in schema_version. Add a migration; never edit an applied one.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server-core/persistence/sqlite/sqlite_db.h"

namespace tock::persistence {

struct Migration {
  int version;
  std::string description;
  std::string sql;
  // What SQL cannot do, run after `sql` in the same transaction (null: nothing).
  absl::Status (*then)(SqliteDb& db) = nullptr;
};

const std::vector<Migration>& SqliteMigrations();

// Applies the pending migrations. FAILED_PRECONDITION when the database's schema is newer
// than this binary knows (it was written by a newer Tock).
absl::Status MigrateSqlite(SqliteDb& db);

}  // namespace tock::persistence
