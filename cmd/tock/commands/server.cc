#include "cmd/tock/commands/server.h"

#include <pthread.h>

#include <csignal>
#include <memory>

#include "lib/common/clock.h"
#include "server-core/server.h"

namespace tock::cli {
namespace {

struct StartDevFlags {
  int port = 7233;
  std::string ip = "127.0.0.1";
  std::string db_file;
  std::vector<std::string> namespaces;
  std::string config;
};

absl::Status StartDev(CommandContext& ctx, const StartDevFlags& flags, bool port_given,
                      bool ip_given) {
  server::ServerConfig config;
  if (!flags.config.empty()) {
    absl::StatusOr<server::ServerConfig> loaded = server::LoadServerConfig(flags.config);
    if (!loaded.ok()) return loaded.status();
    config = *loaded;
  }
  if (port_given || flags.config.empty()) config.port = flags.port;
  if (ip_given || flags.config.empty()) config.ip = flags.ip;
  if (!flags.db_file.empty()) config.persistence.sqlite_path = flags.db_file;
  config.namespaces.insert(config.namespaces.end(), flags.namespaces.begin(),
                           flags.namespaces.end());

  // Stop signals are taken by this thread only (gRPC's threads inherit the mask).
  // The previous mask comes back on return, so a REPL that ran start-dev gets Ctrl-C back.
  sigset_t stop;
  sigset_t previous;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, &previous);
  struct RestoreMask {
    sigset_t* mask;
    ~RestoreMask() { pthread_sigmask(SIG_SETMASK, mask, nullptr); }
  } restore{&previous};

  absl::StatusOr<std::unique_ptr<server::TockServer>> server =
      server::TockServer::Start(config, RealClock());
  if (!server.ok()) return server.status();
  ctx.out << (*server)->Banner() << "\n"
          << "Try, in another terminal:\n"
          << "  tock --address " << (*server)->address()
          << " namespace register orders --retention 3d\n"
          << "  tock --address " << (*server)->address() << " namespace describe orders\n"
          << "  tock --address " << (*server)->address() << " namespace list\n"
          << "  tock --address " << (*server)->address() << " cluster describe\n"
          << "Press Ctrl-C to stop.\n"
          << std::flush;
  int signal = 0;
  sigwait(&stop, &signal);
  ctx.err << "\nShutting down\n";
  (*server)->Shutdown();
  return absl::OkStatus();
}

}  // namespace

void AddServerCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand("server", "Run the Tock server");
  group->require_subcommand(1);
  auto flags = std::make_shared<StartDevFlags>();
  CLI::App* cmd = group->add_subcommand(
      "start-dev", "Start a development server in this process (embedded SQLite)");
  auto* port = cmd->add_option("--port", flags->port, "Port (0: any free port)");
  auto* ip = cmd->add_option("--ip", flags->ip, "Address to listen on");
  cmd->add_option("--db-file", flags->db_file, "SQLite file to keep data in (default: memory)");
  cmd->add_option("--namespace", flags->namespaces, "Namespace to register at start (repeatable)");
  cmd->add_option("--config", flags->config, "tock-server YAML configuration")
      ->check(CLI::ExistingFile);
  cmd->footer(
      "Examples:\n"
      "  tock server start-dev\n"
      "  tock server start-dev --db-file tock.db --port 7233 --namespace orders\n");
  cmd->callback([&ctx, flags, port, ip] {
    ctx.action = [&ctx, flags, port, ip]() {
      return StartDev(ctx, *flags, port->count() > 0, ip->count() > 0);
    };
  });
}

}  // namespace tock::cli
