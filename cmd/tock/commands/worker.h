// `tock worker list|describe|count`: the workers that heartbeat to the namespace
// (WorkflowService ListWorkers, DescribeWorker, CountWorkers), with the temporal CLI's names
// and flags.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddWorkerCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
