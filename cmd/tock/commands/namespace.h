// `tock namespace ...`: register, describe, list, update, failover, deprecate, delete, history.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddNamespaceCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
