// `tock operator search-attribute create|list|remove`: the custom search attributes of a
// namespace, through the Temporal OperatorService; and `tock operator nexus endpoint ...`
// (nexus_endpoint.h).
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddOperatorCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
