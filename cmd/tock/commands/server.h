// `tock server start-dev`: runs tock-server (found beside tock, else on PATH) for development;
// `tock server advance-time`: the dev server's clock.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddServerCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
