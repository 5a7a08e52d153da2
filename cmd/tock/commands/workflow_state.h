// `tock workflow describe-state`: a run's internal state as this cluster stores it (Tock's
// AdminService.DescribeMutableState; Temporal's tdbg `workflow describe`): its state
// (CREATED, RUNNING, ZOMBIE, COMPLETED), zombie or not, the last write version, and every
// history branch with its version history items, the current one marked. For operators of
// replicated namespaces: compare two clusters' copies of a run.
//
// The card is a pure function of the answer, testable without a server.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"
#include "cmd/tock/output/printer.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::cli {

// Workflow id, run id, current run, status, state, zombie, last write version, next event
// id, last event task id, db version, workflow task, pending work, branches.
CardRows MutableStateCard(const tock::admin::v1::DescribeMutableStateResponse& state);

// Adds `describe-state` to the `workflow` group.
void AddWorkflowDescribeStateCommand(CLI::App& group, CommandContext& ctx);

}  // namespace tock::cli
