// `tock web`: the web console of the server tock talks to: its URL (asked of the server),
// printed, and opened in the browser when on a terminal.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddWebCommand(CLI::App& app, CommandContext& ctx);

// The console URL `reported` by the server, with a wildcard listening address (0.0.0.0, ::)
// replaced by the host of `address` (how tock reaches the server).
std::string ReachableConsoleUrl(const std::string& reported, const std::string& address);

}  // namespace tock::cli
