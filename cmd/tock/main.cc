// tock: the operator CLI. Everything happens in app.cc; this only binds the process.
#include <grpc/support/log.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cmd/tock/app.h"
#include "cmd/tock/repl/repl.h"

int main(int argc, char** argv) {
  // gRPC's own log lines ("Handshake failed with fatal error ...") would come before tock's
  // error, which says the same in words the operator can act on (lib/client/tls_probe.h).
  // GRPC_VERBOSITY set by the user keeps them.
  if (std::getenv("GRPC_VERBOSITY") == nullptr) gpr_set_log_function([](gpr_log_func_args*) {});
  tock::cli::CommandContext ctx(std::cin, std::cout, std::cerr, isatty(STDIN_FILENO) == 1,
                                isatty(STDOUT_FILENO) == 1);
  // Bare `tock` on a terminal opens the interactive session; elsewhere it prints help.
  if (argc == 1 && ctx.stdin_is_terminal && ctx.stdout_is_terminal) {
    return tock::cli::repl::RunRepl(ctx);
  }
  CLI::App app{"", "tock"};
  tock::cli::BuildApp(app, ctx);
  return tock::cli::Run(app, ctx, argc, argv);
}
