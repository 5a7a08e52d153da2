#include "cmd/tock/commands/server.h"

#include <pthread.h>

#include <csignal>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "lib/common/clock.h"
#include "lib/common/duration.h"
#include "lib/common/env.h"
#include "lib/common/metrics.h"
#include "lib/common/proto_json.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "server-core/server.h"

namespace tock::cli {
namespace {

struct StartDevFlags {
  int port = 7233;
  std::string ip = "127.0.0.1";
  std::string db_file;
  std::vector<std::string> namespaces;
  std::string config;
  bool time_skipping = false;
  std::string archival_dir;
  std::optional<int> metrics_port;
  std::string log_level;
  std::string log_format;
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
  if (flags.time_skipping) config.time_skipping = true;
  if (!flags.archival_dir.empty()) config.archival.UseDirectory(flags.archival_dir);
  config.namespaces.insert(config.namespaces.end(), flags.namespaces.begin(),
                           flags.namespaces.end());
  if (flags.metrics_port) {
    if (!config.metrics) config.metrics.emplace();
    config.metrics->port = *flags.metrics_port;
  }
  if (!flags.log_level.empty()) config.log.level = flags.log_level;
  if (!flags.log_format.empty()) config.log.format = flags.log_format;
  if (absl::Status s = config.Validate(); !s.ok()) return s;  // names the bad key
  absl::StatusOr<std::unique_ptr<Logger>> logger = server::MakeLogger(config.log);
  if (!logger.ok()) return logger.status();
  std::unique_ptr<MetricsRegistry> metrics =
      config.metrics ? std::make_unique<MetricsRegistry>() : MetricsRegistry::Disabled();
  const Env env{RealClock(), **logger, *metrics};

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
      server::TockServer::Start(config, env);
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

// `tock server advance-time 25h`: the dev server's time skipping (AdminService.AdvanceTime).
void AddAdvanceTime(CLI::App& group, CommandContext& ctx) {
  auto duration = std::make_shared<std::string>();
  CLI::App* cmd = group.add_subcommand(
      "advance-time",
      "Move a time-skipping dev server's clock forward (timers fire, retention passes)");
  cmd->add_option("duration", *duration, "How far: 90m, 25h, 3d")->required();
  cmd->footer(
      "The server must run with --enable-time-skipping; others refuse.\n"
      "\n"
      "Example:\n"
      "  tock server advance-time 3d\n");
  cmd->callback([&ctx, duration] {
    ctx.action = [&ctx, duration]() -> absl::Status {
      absl::StatusOr<absl::Duration> d = ParseHumanDuration(*duration);
      if (!d.ok() || *d <= absl::ZeroDuration()) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid duration \"", *duration,
                         "\": use a positive duration such as 90m, 25h or 3d"));
      }
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      tock::admin::v1::AdvanceTimeRequest req;
      *req.mutable_duration() = ToProtoDuration(*d);
      auto resp = (*c)->Call(&tock::admin::v1::AdminService::Stub::AdvanceTime, (*c)->admin(), req);
      if (!resp.ok()) return resp.status();
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      printer->Object(
          ProtoToJson(*resp),
          {{"Server time", FormatTimestamp(FromProtoTime(resp->server_time()))},
           {"Deleted by retention", std::to_string(resp->runs_deleted_by_retention())}});
      return absl::OkStatus();
    };
  });
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
  cmd->add_flag("--enable-time-skipping", flags->time_skipping,
                "Allow `tock server advance-time` (development and tests only)");
  cmd->add_option("--archival-dir", flags->archival_dir,
                  "Archive histories and visibility records under this directory; new "
                  "namespaces archive by default");
  cmd->add_option("--metrics-port", flags->metrics_port,
                  "Serve Prometheus metrics at http://127.0.0.1:PORT/metrics (0: any free port)");
  cmd->add_option("--log-level", flags->log_level, "debug, info (default), warn, error or off")
      ->check(CLI::IsMember({"debug", "info", "warn", "warning", "error", "off"}));
  cmd->add_option("--log-format", flags->log_format, "text (default) or json (to stderr)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->footer(
      "Examples:\n"
      "  tock server start-dev\n"
      "  tock server start-dev --metrics-port 9090 --log-level debug\n"
      "  tock server start-dev --db-file tock.db --port 7233 --namespace orders\n"
      "  tock server start-dev --archival-dir ./archive --enable-time-skipping\n");
  cmd->callback([&ctx, flags, port, ip] {
    ctx.action = [&ctx, flags, port, ip]() {
      return StartDev(ctx, *flags, port->count() > 0, ip->count() > 0);
    };
  });
  AddAdvanceTime(*group, ctx);
}

}  // namespace tock::cli
