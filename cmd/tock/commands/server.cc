#include "cmd/tock/commands/server.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/common/duration.h"
#include "lib/common/proto_json.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "tock/admin/v1/service.grpc.pb.h"

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

// The tock-server binary start-dev runs: the one installed (or built) beside this `tock`, else
// the first on PATH. `tock` does not carry the server itself, so that its every start stays
// small (issue 12: start-up of one-shot commands).
absl::StatusOr<std::string> FindServerBinary() {
  std::string beside;
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    beside = (self.parent_path() / "tock-server").string();
    if (access(beside.c_str(), X_OK) == 0) return beside;
  }
  const char* path = std::getenv("PATH");
  if (path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      std::string candidate = absl::StrCat(dir, "/tock-server");
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return absl::NotFoundError(absl::StrCat(
      "tock server start-dev runs the tock-server program, which was found neither beside tock (",
      beside.empty() ? "its directory is unknown" : beside,
      ") nor on PATH; install it with tock (cmake --install puts both in bin/)"));
}

// Replaces this process with tock-server (same pid, so signals reach the server directly),
// which prints what start-dev always printed (--as-tock-start-dev). Returns only on failure.
absl::Status StartDev(const StartDevFlags& flags, bool port_given, bool ip_given) {
  absl::StatusOr<std::string> binary = FindServerBinary();
  if (!binary.ok()) return binary.status();
  std::vector<std::string> args = {*binary, "--as-tock-start-dev"};
  if (!flags.config.empty()) args.insert(args.end(), {"--config", flags.config});
  // Without a configuration the flags' defaults apply; with one, only the flags given.
  if (port_given || flags.config.empty()) {
    args.insert(args.end(), {"--port", std::to_string(flags.port)});
  }
  if (ip_given || flags.config.empty()) args.insert(args.end(), {"--ip", flags.ip});
  if (!flags.db_file.empty()) args.insert(args.end(), {"--db-file", flags.db_file});
  for (const std::string& name : flags.namespaces) args.insert(args.end(), {"--namespace", name});
  if (flags.time_skipping) args.push_back("--enable-time-skipping");
  if (!flags.archival_dir.empty()) args.insert(args.end(), {"--archival-dir", flags.archival_dir});
  if (flags.metrics_port) {
    args.insert(args.end(), {"--metrics-port", std::to_string(*flags.metrics_port)});
  }
  if (!flags.log_level.empty()) args.insert(args.end(), {"--log-level", flags.log_level});
  if (!flags.log_format.empty()) args.insert(args.end(), {"--log-format", flags.log_format});
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  execv(argv[0], argv.data());
  return absl::InternalError(absl::StrCat("cannot run ", *binary, ": ", std::strerror(errno)));
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
      "start-dev", "Start a development server (tock-server, embedded SQLite)");
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
    ctx.action = [flags, port, ip]() {
      return StartDev(*flags, port->count() > 0, ip->count() > 0);
    };
  });
  AddAdvanceTime(*group, ctx);
}

}  // namespace tock::cli
