// tock-server writes the flags given (server_flags.h) over its configuration: each flag
// overrides its key of the config file. The result is then checked as a whole
// (ServerConfig::Validate), its errors naming the key a flag sets.
#pragma once

#include "cmd/tock-server/server_flags.h"
#include "server-core/config/server_config.h"

namespace tock::server {

// Loads --config (when given) and applies the flags over it. NOT_FOUND or INVALID_ARGUMENT
// from the file, naming it or the key.
absl::StatusOr<ServerConfig> ConfigFromFlags(const ServerFlags& flags);

}  // namespace tock::server
