// `tock workflow ...` (start, execute, result, describe, show, signal, query, stack, reset
// (workflow_reset.h), cancel, terminate, delete, list, count) and `tock task-queue describe`.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddWorkflowCommands(CLI::App& app, CommandContext& ctx);
void AddTaskQueueCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
