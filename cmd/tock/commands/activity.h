// `tock activity complete|fail`: finish an activity from outside its worker (asynchronous
// completion by id: RespondActivityTaskCompletedById, RespondActivityTaskFailedById).
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddActivityCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
