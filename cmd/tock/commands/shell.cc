#include "cmd/tock/commands/shell.h"

#include "cmd/tock/repl/repl.h"

namespace tock::cli {

void AddShellCommand(CLI::App& app, CommandContext& ctx) {
  CLI::App* cmd = app.add_subcommand(
      "shell", "Interactive session: line editing, history, TAB completion, history inspector");
  cmd->footer(
      "Inside, every command works without the leading `tock`; `use NAMESPACE`, `\\output json`,\n"
      "`\\timing on`, `open WORKFLOW_ID` (then events, event N, find, timeline, pending,\n"
      "follow, export FILE, back), `help`, `exit`. Ctrl-C cancels the running command.\n"
      "The line history is kept in $XDG_STATE_HOME/tock/history (~/.local/state/tock/history).\n"
      "\n"
      "Examples:\n"
      "  tock shell\n"
      "  tock --address prod:7233 -n orders shell\n");
  cmd->callback([&ctx] {
    ctx.action = [&ctx]() -> absl::Status {
      // Errors of the session's commands were printed as they happened; leaving is success.
      repl::RunRepl(ctx);
      return absl::OkStatus();
    };
  });
}

}  // namespace tock::cli
