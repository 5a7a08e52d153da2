#include "server-core/persistence/persistence.h"

#include "absl/strings/str_cat.h"
#include "server-core/persistence/sqlite/sqlite_persistence.h"

namespace tock::persistence {

absl::StatusOr<std::unique_ptr<Persistence>> OpenPersistence(const PersistenceConfig& config) {
  if (config.engine == "sqlite") return OpenSqlitePersistence(config.sqlite_path);
  return absl::InvalidArgumentError(absl::StrCat(
      "persistence.engine: unknown engine \"", config.engine, "\"; allowed: sqlite"));
}

}  // namespace tock::persistence
