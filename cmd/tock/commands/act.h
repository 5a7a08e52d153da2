// The action of a command that talks to the server and prints: `call(connection, printer)`
// runs once the connection and the printer are open (their errors are the command's).
#pragma once

#include <CLI/CLI.hpp>

#include "cmd/tock/context.h"

namespace tock::cli {

template <typename Call>
void Act(CLI::App* cmd, CommandContext& ctx, Call call) {
  cmd->callback([&ctx, call] {
    ctx.action = [&ctx, call]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      return call(**c, *printer);
    };
  });
}

}  // namespace tock::cli
