// The SQLite backend as a whole: one connection, its migrations, the five stores over it.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server-core/persistence/persistence.h"
#include "server-core/persistence/sqlite/sqlite_db.h"

namespace tock::persistence {

// Opens (creating when needed) the SQLite database at `path` ("" or ":memory:" for an
// in-memory one) and applies pending migrations. UNAVAILABLE when the file cannot be opened;
// FAILED_PRECONDITION when its schema is newer than this binary knows or it is not Tock's.
// `synchronous` applies to a file (SqliteDb::Synchronous).
absl::StatusOr<std::unique_ptr<Persistence>> OpenSqlitePersistence(
    const std::string& path, SqliteDb::Synchronous synchronous = SqliteDb::Synchronous::kFull);

// The value of `persistence.sqlite.synchronous` ("full" or "normal"); otherwise
// INVALID_ARGUMENT saying what is allowed (the caller names the key).
absl::StatusOr<SqliteDb::Synchronous> ParseSqliteSynchronous(const std::string& value);

}  // namespace tock::persistence
