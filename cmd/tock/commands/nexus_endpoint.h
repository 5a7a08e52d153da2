// `tock operator nexus endpoint create|get|list|update|delete`: the cluster's Nexus endpoints
// (OperatorService), with the temporal CLI's names and flags; get, update and delete find the
// endpoint by name (ListNexusEndpoints{name}), as the temporal CLI does.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

// Adds `nexus endpoint ...` under the operator group.
void AddNexusEndpointCommands(CLI::App& operator_group, CommandContext& ctx);

}  // namespace tock::cli
