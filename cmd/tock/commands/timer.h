// `tock timer create|get|update|delete|list`: the durable timer service of tock-server
// (issue 14): timers that POST a callback URL when due, retried by their policy.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddTimerCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
