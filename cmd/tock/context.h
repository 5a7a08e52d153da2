// What every command needs besides its own flags: the streams, the global options, the
// printer and a lazily opened connection. One CommandContext lives for a whole process (or,
// later, a whole REPL session, so the connection stays open between commands).
#pragma once

#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "cmd/tock/exit_codes.h"
#include "cmd/tock/output/printer.h"
#include "lib/client/connection.h"

namespace tock::cli {

struct GlobalOptions {
  std::string address;
  std::string namespace_name;
  std::string output;  // empty: table on a terminal, json otherwise (see ResolveOutputFormat)
  std::string timeout = "10s";
  bool tls = false;
  std::string tls_ca_cert;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_server_name;
  std::string api_key;
  std::string identity;  // the caller's identity in requests; empty: "tock"
  std::string color = "auto";  // auto: on a terminal unless NO_COLOR is set
};

// The defaults of the global options from the environment (TOCK_* before TEMPORAL_*).
GlobalOptions DefaultGlobalOptions();

// -o as given, else table on a terminal and json otherwise (pipes and scripts get JSON).
absl::StatusOr<OutputFormat> ResolveOutputFormat(const std::string& output,
                                                 bool stdout_is_terminal);

// --color always|never, or auto: on a terminal unless NO_COLOR is set (https://no-color.org).
bool ResolveColor(const std::string& color, bool stdout_is_terminal, bool no_color_env);

// The connection settings of the global options. INVALID_ARGUMENT for a bad --timeout.
absl::StatusOr<client::ConnectionOptions> ToConnectionOptions(const GlobalOptions& options);

class CommandContext {
 public:
  CommandContext(std::istream& in, std::ostream& out, std::ostream& err, bool stdin_is_terminal,
                 bool stdout_is_terminal)
      : in(in),
        out(out),
        err(err),
        stdin_is_terminal(stdin_is_terminal),
        stdout_is_terminal(stdout_is_terminal),
        no_color_env(std::getenv("NO_COLOR") != nullptr && *std::getenv("NO_COLOR") != '\0'),
        options(DefaultGlobalOptions()) {}

  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  const bool stdin_is_terminal;
  const bool stdout_is_terminal;
  const bool no_color_env;  // NO_COLOR set (non-empty) when the context was made
  GlobalOptions options;

  // The command chosen by the parse; it runs after parsing succeeded.
  std::function<absl::Status()> action;

  // The connection for the current options, opened on first use and reused while the
  // address and credentials stay the same.
  absl::StatusOr<client::Connection*> connection();

  // A printer in the chosen format (validated), writing to `out`.
  absl::StatusOr<Printer> printer();

  // Ctrl-C: cancels the calls in flight on the open connection, and those started until
  // ClearInterrupt(). Safe from another thread (the interrupt watcher's), not from a signal
  // handler.
  void Interrupt();
  void ClearInterrupt();
  bool interrupted();

 private:
  std::mutex connection_mu_;  // connection_ may be replaced while Interrupt() runs
  std::unique_ptr<client::Connection> connection_;
  std::string connection_key_;
  bool interrupted_ = false;
};

}  // namespace tock::cli
