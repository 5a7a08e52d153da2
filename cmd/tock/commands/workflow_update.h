// `tock workflow update execute|start|result|describe`: workflow updates as the Temporal CLI
// sends and reads them (`temporal workflow update ...`), on admin's UpdateWorkflow and
// PollUpdate (lib/admin/workflow_update.h).
//
// - execute: sends an update and waits for its outcome; prints the result, or fails (exit 1)
//   with the failure's message when the workflow rejected or failed the update;
// - start --wait-for-stage accepted: sends an update and waits until the workflow accepted it;
//   prints the update id and run id (exit 1 when the workflow rejected it);
// - result --update-id ID: waits for the outcome of an update sent before, as execute;
// - describe --update-id ID: where the update stands now (stage, and outcome once completed),
//   without waiting; a failed update is described, not an error.
#pragma once

#include <CLI/CLI.hpp>

#include "absl/status/status.h"
#include "cmd/tock/context.h"
#include "lib/admin/workflow_update.h"

namespace tock::cli {

// The outcome of `status` as the command's answer: OK for a completed update that succeeded
// (or one not completed), else UNKNOWN (exit 1) `update "ID" of workflow "W" failed: MESSAGE`
// with the failure's message (a rejection is such a failure).
absl::Status UpdateFailure(const admin::UpdateStatus& status);

// Adds `update` and its four commands to the `workflow` group.
void AddWorkflowUpdateCommand(CLI::App& group, CommandContext& ctx);

}  // namespace tock::cli
