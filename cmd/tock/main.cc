// tock: the operator CLI. Everything happens in app.cc; this only binds the process.
#include <unistd.h>

#include <iostream>

#include "cmd/tock/app.h"

int main(int argc, char** argv) {
  tock::cli::CommandContext ctx(std::cin, std::cout, std::cerr, isatty(STDIN_FILENO) == 1,
                                isatty(STDOUT_FILENO) == 1);
  CLI::App app{"", "tock"};
  tock::cli::BuildApp(app, ctx);
  return tock::cli::Run(app, ctx, argc, argv);
}
