#include "cmd/tock/app.h"

#include "cmd/tock/commands/cluster.h"
#include "cmd/tock/commands/namespace.h"
#include "cmd/tock/commands/server.h"
#include "cmd/tock/commands/workflow.h"

namespace tock::cli {

void BuildApp(CLI::App& app, CommandContext& ctx) {
  app.description(
      "tock: operate Temporal-style workflow clusters (namespaces, retention, failover, "
      "clusters) and run the Tock server");
  app.footer(
      "Examples:\n"
      "  tock server start-dev                           # a local server on 127.0.0.1:7233\n"
      "  tock namespace register orders --retention 3d\n"
      "  tock namespace describe orders -o json\n"
      "  tock --address prod:7233 namespace list\n"
      "\n"
      "Environment: TOCK_ADDRESS (then TEMPORAL_ADDRESS), TOCK_NAMESPACE (then\n"
      "TEMPORAL_NAMESPACE), TOCK_API_KEY, NO_COLOR.\n"
      "Exit status: 0 ok, 1 error, 2 usage or invalid input, 3 not found,\n"
      "4 unavailable or timeout, 5 already exists or conflict.\n");
  app.set_version_flag("--version", "tock 0.1.0");
  app.require_subcommand(0, 1);
  // Global flags may come before or after the command.
  app.fallthrough();
  GlobalOptions& o = ctx.options;
  app.add_option("--address", o.address, "Frontend address HOST:PORT (env TOCK_ADDRESS)")
      ->default_str(o.address);
  app.add_option("-n,--namespace", o.namespace_name, "Namespace (env TOCK_NAMESPACE)")
      ->default_str(o.namespace_name);
  app.add_option("-o,--output", o.output,
                 "Output: table, card, json or jsonl (default: table on a terminal, else json)")
      ->check(CLI::IsMember({"table", "card", "json", "jsonl"}));
  app.add_option("--timeout", o.timeout, "Deadline of each call, e.g. 10s, 1m")
      ->default_str(o.timeout);
  app.add_flag("--tls", o.tls, "Connect with TLS");
  app.add_option("--tls-ca-cert", o.tls_ca_cert, "CA certificate (PEM) to trust");
  app.add_option("--tls-cert", o.tls_cert, "Client certificate (PEM) for mutual TLS");
  app.add_option("--tls-key", o.tls_key, "Client key (PEM) for mutual TLS");
  app.add_option("--tls-server-name", o.tls_server_name, "Server name to verify");
  app.add_option("--api-key", o.api_key, "API key, sent as a bearer token (env TOCK_API_KEY)");
  app.add_option("--color", o.color, "Color: auto, always or never (honours NO_COLOR)")
      ->check(CLI::IsMember({"auto", "always", "never"}));

  AddNamespaceCommands(app, ctx);
  AddClusterCommands(app, ctx);
  AddWorkflowCommands(app, ctx);
  AddTaskQueueCommands(app, ctx);
  AddServerCommands(app, ctx);
}

int Run(CLI::App& app, CommandContext& ctx, int argc, const char* const* argv) {
  ctx.action = nullptr;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    ctx.out << app.help(e.what() == std::string("--help-all") ? "" : "", CLI::AppFormatMode::Normal);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, ctx.out, ctx.err);
    ctx.err << "error: " << e.what() << "\n";
    ctx.err << "Run with --help for usage.\n";
    return kExitUsage;
  }
  if (!ctx.action) {
    ctx.out << app.help();
    return kExitOk;
  }
  absl::Status status = ctx.action();
  if (!status.ok()) {
    ctx.err << "error: " << status.message() << "\n";
    return ExitCodeFor(status);
  }
  return kExitOk;
}

}  // namespace tock::cli
