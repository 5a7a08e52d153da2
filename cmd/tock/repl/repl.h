// `tock shell` (and bare `tock` on a terminal): an interactive session on libedit with line
// editing, reverse search (Ctrl-R), persistent history, TAB completion, and one connection
// kept open for every command. Each line is parsed by the same command tree as one-shot
// mode (RunArgs), so whatever works as `tock X` works as `X` here.
//
// Session commands: `use NAMESPACE`, `\output table|card|json|jsonl`, `\timing on|off`,
// `open WORKFLOW_ID [RUN_ID]` (the history inspector), `help`, `exit` (or Ctrl-D).
// Ctrl-C cancels the running command (or clears the line being typed), never the session.
#pragma once

#include <string>

#include "cmd/tock/context.h"

namespace tock::cli::repl {

// Where the line history lives: $XDG_STATE_HOME/tock/history, else
// ~/.local/state/tock/history. Empty when neither variable is set.
std::string HistoryFilePath();

// Runs the session until exit or end of input; returns the exit code of the last command
// (0 after `exit`). Works on a pipe too (no editing then), which scripts and benchmarks use.
int RunRepl(CommandContext& ctx);

}  // namespace tock::cli::repl
