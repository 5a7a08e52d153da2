// `tock batch terminate|cancel|signal|delete|list|describe|stop`: batch operations over the
// workflows of a visibility query, on Temporal's WorkflowService batch API
// (StartBatchOperation, DescribeBatchOperation, ListBatchOperations, StopBatchOperation).
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddBatchCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
