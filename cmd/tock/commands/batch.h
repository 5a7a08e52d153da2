// `tock batch terminate|cancel|signal|delete|list|describe|stop`: batch operations over the
// workflows of a visibility query, on Temporal's WorkflowService batch API
// (StartBatchOperation, DescribeBatchOperation, ListBatchOperations, StopBatchOperation).
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::cli {

void AddBatchCommands(CLI::App& app, CommandContext& ctx);

// Starts `req` after the confirmation `tock batch` asks for (`what` names the action; `yes`
// skips it), then, unless `no_wait`, follows the job to its end: a progress bar on a
// terminal, the summary card or the DescribeBatchOperationResponse, an error when it failed.
// Shared by `tock batch` and `tock workflow reset --query`.
absl::Status StartAndFollowBatch(CommandContext& ctx,
                                 const temporal::api::workflowservice::v1::StartBatchOperationRequest& req,
                                 const std::string& what, bool yes, bool no_wait);

}  // namespace tock::cli
