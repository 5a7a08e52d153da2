// Runs whole `tock` command lines in process, through the same command tree as main(), and
// starts a real tock-server in process (real gRPC on a free 127.0.0.1 port, in-memory
// SQLite) for the lines that need one. No fake frontend: what the commands get back is
// what the real server answers.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cmd/tock/app.h"
#include "lib/common/clock.h"
#include "server-core/server.h"

namespace tock::cli::testing {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

struct Terminal {
  bool stdin_is_terminal = false;
  bool stdout_is_terminal = false;
};

// Runs one `tock` command line (without the program name) with stdin holding `input`.
inline CliResult RunTock(const std::vector<std::string>& args, const std::string& input = "",
                         Terminal terminal = {}) {
  std::istringstream in(input);
  std::ostringstream out, err;
  CommandContext ctx(in, out, err, terminal.stdin_is_terminal, terminal.stdout_is_terminal);
  CliResult result;
  result.code = RunArgs(ctx, args);
  result.out = out.str();
  result.err = err.str();
  return result;
}

// A tock-server with an in-memory database for one test; shut down when it goes away.
class InProcessServer {
 public:
  InProcessServer() {
    server::ServerConfig config;
    config.port = 0;
    auto started = server::TockServer::Start(config, RealClock());
    EXPECT_TRUE(started.ok()) << started.status();
    if (started.ok()) server_ = std::move(*started);
  }
  ~InProcessServer() {
    if (server_) server_->Shutdown();
  }
  bool ok() const { return server_ != nullptr; }
  std::string address() const { return server_ ? server_->address() : ""; }

 private:
  std::unique_ptr<server::TockServer> server_;
};

}  // namespace tock::cli::testing
