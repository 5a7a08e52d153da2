// The PostgreSQL backend as a whole: one connection pool, its migrations, the stores over
// it. Several tock-server hosts may open the same database at once.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server-core/persistence/persistence.h"

namespace tock::persistence {

// Connects to `url` (postgresql://USER[:PASSWORD]@HOST[:PORT]/DB) with a pool of at most
// `max_connections`, and applies pending migrations (once, however many hosts start at
// the same time). INVALID_ARGUMENT for an unparsable URL or a bad max_connections;
// UNAVAILABLE ("the PostgreSQL database at HOST:PORT/DB is unavailable: ...") when it
// cannot be reached; FAILED_PRECONDITION when its schema is newer than this binary knows
// or it holds another program's tables. No message carries the password.
absl::StatusOr<std::unique_ptr<Persistence>> OpenPostgresPersistence(const std::string& url,
                                                                     int max_connections);

}  // namespace tock::persistence
