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
#include "cmd/tock-server/server_flags.h"
#include "lib/common/duration.h"
#include "lib/common/proto_json.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "tock/admin/v1/service.grpc.pb.h"

namespace tock::cli {
namespace {

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

// The arguments of tock-server for `tock server start-dev` given these flags: the ones given,
// as given (one list: cmd/tock-server/server_flags.h), and the defaults of a development
// server where neither the flags nor a configuration file choose.
std::vector<std::string> StartDevArguments(const server::ServerFlags& flags,
                                           const std::vector<CLI::Option*>& options) {
  std::vector<std::string> args = {"--as-tock-start-dev"};
  std::vector<std::string> given = server::GivenFlagsAsArguments(options);
  args.insert(args.end(), given.begin(), given.end());
  // A development database file need not survive power loss: no fsync per commit.
  if (flags.config_path.empty() && !flags.sqlite_synchronous && !flags.postgres_url) {
    args.insert(args.end(), {"--sqlite-synchronous", "normal"});
  }
  return args;
}

// Replaces this process with tock-server (same pid, so signals reach the server directly),
// which prints what start-dev always printed (--as-tock-start-dev). Returns only on failure.
absl::Status StartDev(const std::vector<std::string>& server_args) {
  absl::StatusOr<std::string> binary = FindServerBinary();
  if (!binary.ok()) return binary.status();
  std::vector<std::string> args = {*binary};
  args.insert(args.end(), server_args.begin(), server_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  execv(argv[0], argv.data());
  return absl::InternalError(absl::StrCat("cannot run ", *binary, ": ", std::strerror(errno)));
}

void AddStartDev(CLI::App& group, CommandContext& ctx) {
  auto flags = std::make_shared<server::ServerFlags>();
  CLI::App* cmd = group.add_subcommand(
      "start-dev", "Start a development server (tock-server; embedded SQLite in memory unless "
                   "told otherwise)");
  // Every flag of tock-server, from its one list.
  auto options = std::make_shared<std::vector<CLI::Option*>>(server::AddServerFlags(*cmd, *flags));
  cmd->footer(
      "Takes every flag of tock-server(8). Without --config or --sqlite-synchronous, a\n"
      "database file is written with synchronous normal: it survives a crash of the server,\n"
      "not power loss (tock-server's default is full). Without --http-port or authorization,\n"
      "Temporal's HTTP API is served on 127.0.0.1:7243 (or any free port when that is taken;\n"
      "the banner shows it).\n"
      "\n"
      "Examples:\n"
      "  tock server start-dev\n"
      "  tock server start-dev --metrics-port 9090 --log-level debug\n"
      "  tock server start-dev --db-file tock.db --port 7233 --namespace orders\n"
      "  tock server start-dev --http-port 8080   # Temporal's HTTP API there (default 7243)\n"
      "  tock server start-dev --archival-dir ./archive --enable-time-skipping\n");
  cmd->callback([&ctx, flags, options] {
    ctx.action = [flags, options]() { return StartDev(StartDevArguments(*flags, *options)); };
  });
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
           {"Deleted by retention", std::to_string(resp->runs_deleted_by_retention())},
           {"Timers settled", resp->timers_settled() ? "yes" : "no"},
           {"Schedules settled", resp->schedules_settled() ? "yes" : "no"}});
      return absl::OkStatus();
    };
  });
}

}  // namespace

void AddServerCommands(CLI::App& app, CommandContext& ctx) {
  CLI::App* group = app.add_subcommand("server", "Run the Tock server");
  group->require_subcommand(1);
  AddStartDev(*group, ctx);
  AddAdvanceTime(*group, ctx);
}

}  // namespace tock::cli
