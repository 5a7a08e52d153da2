// `tock shell`: the interactive session (cmd/tock/repl).
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddShellCommand(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
