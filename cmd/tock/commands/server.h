// `tock server start-dev`: the tock-server core in this process, for development.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddServerCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
