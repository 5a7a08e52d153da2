// The whole `tock` command tree. main() parses argv with it; the REPL feeds it lines.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

// Adds the global flags and every command group to `app`. The commands keep references to
// `ctx`, which must outlive `app`. Building the tree opens nothing (no connection, no gRPC).
void BuildApp(CLI::App& app, CommandContext& ctx);

// Parses `argv` and runs the chosen command: prints errors as "error: <message>" on the
// context's error stream and returns the exit code of DESIGN.md (ExitCodeFor). Parse errors
// (unknown flag, missing argument, bad -o) are exit 2; --help and --version exit 0.
int Run(CLI::App& app, CommandContext& ctx, int argc, const char* const* argv);

// The same for one command line already split into words (without the program name), on a
// freshly built tree: nothing of an earlier line (its flags, its -n) carries over except
// what `ctx` keeps on purpose (the open connection). For the REPL and the tests.
int RunArgs(CommandContext& ctx, const std::vector<std::string>& args);

}  // namespace tock::cli
