// `tock schedule create|describe|list|update|toggle|trigger|backfill|delete`: Temporal
// schedules through WorkflowService (CreateSchedule, DescribeSchedule, ListSchedules,
// UpdateSchedule, PatchSchedule, DeleteSchedule).
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddScheduleCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
