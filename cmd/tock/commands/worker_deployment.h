// `tock worker deployment ...`: Worker Deployments and their versions (WorkflowService
// DescribeWorkerDeployment, SetWorkerDeploymentCurrentVersion, ...), with the temporal CLI's
// command names and flags (reference/api_2026.md §3.3.10).
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

// Adds the `deployment` group under `worker`.
void AddWorkerDeploymentCommands(CLI::App& worker, CommandContext& ctx);

}  // namespace tock::cli
