// `tock cluster describe|list|upsert|remove|members|shards`.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddClusterCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
