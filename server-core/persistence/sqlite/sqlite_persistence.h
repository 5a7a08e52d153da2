// The SQLite backend as a whole: one connection, its migrations, the five stores over it.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server-core/persistence/persistence.h"

namespace tock::persistence {

// Opens (creating when needed) the SQLite database at `path` ("" or ":memory:" for an
// in-memory one) and applies pending migrations. UNAVAILABLE when the file cannot be opened;
// FAILED_PRECONDITION when its schema is newer than this binary knows or it is not Tock's.
absl::StatusOr<std::unique_ptr<Persistence>> OpenSqlitePersistence(const std::string& path);

}  // namespace tock::persistence
