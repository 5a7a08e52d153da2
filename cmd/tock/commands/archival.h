// `tock archival ...`: trigger and status through a server; show and list straight from an
// archive URI with no server (offline).
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddArchivalCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
