// The PostgreSQL schema as an ordered list of migrations, the counterpart of
// sqlite_schema.h: the same tables and columns, so that both backends keep one contract.
// Each migration is applied once, in its own transaction, and recorded in schema_version.
// Add a migration; never edit an applied one.
//
// Several hosts may start at once on one database: each migration transaction first takes
// a transaction-scoped advisory lock, so one host migrates while the others wait and then
// find the work done.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server-core/persistence/postgres/pg_db.h"

namespace tock::persistence {

struct PgMigration {
  int version;
  std::string description;
  std::string sql;
};

const std::vector<PgMigration>& PostgresMigrations();

// The key of the advisory lock that serializes migrations (pg_advisory_xact_lock(bigint)).
inline constexpr int64_t kPgMigrationLockKey = 0x546f636b0001;  // "Tock", 1

// Applies the pending migrations. FAILED_PRECONDITION when the database's schema is newer
// than this binary knows (it was written by a newer Tock), or when the database holds
// tables of another program and no Tock schema; errors of the pool otherwise.
absl::Status MigratePostgres(PgPool& pool);

}  // namespace tock::persistence
