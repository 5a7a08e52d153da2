// The whole `tock` command tree. main() parses argv with it; the REPL will feed it lines.
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

// Adds the global flags and every command group to `app`.
void BuildApp(CLI::App& app, CommandContext& ctx);

// Parses `argv` and runs the chosen command: prints errors as "error: <message>" on the
// context's error stream and returns the exit code of DESIGN.md.
int Run(CLI::App& app, CommandContext& ctx, int argc, const char* const* argv);

}  // namespace tock::cli
