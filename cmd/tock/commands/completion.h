// `tock completion bash|zsh|fish` (the shell script) and the hidden
// `tock __complete WORDS... CURRENT` the scripts call on TAB.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

void AddCompletionCommands(CLI::App& app, CommandContext& ctx);

}  // namespace tock::cli
