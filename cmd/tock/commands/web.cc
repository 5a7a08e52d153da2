#include "cmd/tock/commands/web.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tock/admin/v1/service.grpc.pb.h"

extern char** environ;

namespace tock::cli {
namespace {

// Opens `url` with the desktop's opener (xdg-open, or open on macOS), without waiting for
// the browser. False when none could be started.
bool OpenInBrowser(const std::string& url) {
  for (const char* opener : {"xdg-open", "open"}) {
    pid_t pid = 0;
    std::string program = opener;
    std::string arg = url;
    char* argv[] = {program.data(), arg.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    const int rc = posix_spawnp(&pid, opener, &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) continue;
    int status = 0;
    waitpid(pid, &status, 0);  // openers hand the URL over and return
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  }
  return false;
}

}  // namespace

std::string ReachableConsoleUrl(const std::string& reported, const std::string& address) {
  for (const char* wildcard : {"://0.0.0.0:", "://[::]:", "://:::"}) {
    const size_t at = reported.find(wildcard);
    if (at == std::string::npos) continue;
    std::string host = address.substr(0, address.rfind(':'));
    if (host.empty()) host = "127.0.0.1";
    const size_t port_at = at + std::string(wildcard).size() - 1;  // the ':' before the port
    return absl::StrCat(reported.substr(0, at), "://", host, reported.substr(port_at));
  }
  return reported;
}

void AddWebCommand(CLI::App& app, CommandContext& ctx) {
  auto no_open = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "web", "Open the server's web console (its URL printed; opened in the browser on a terminal)");
  cmd->add_flag("--no-open", *no_open, "Print the URL only");
  cmd->footer(
      "The console is served by tock-server on its HTTP port (--http-port; start-dev: 7243)\n"
      "unless it runs with --headless. The URL is asked of the server --address names.\n"
      "\n"
      "Examples:\n"
      "  tock web\n"
      "  tock web --no-open -o json\n");
  cmd->callback([&ctx, no_open] {
    ctx.action = [&ctx, no_open]() -> absl::Status {
      auto c = ctx.connection();
      if (!c.ok()) return c.status();
      auto resp = (*c)->Call(&tock::admin::v1::AdminService::Stub::DescribeCluster, (*c)->admin(),
                             tock::admin::v1::DescribeClusterRequest());
      if (!resp.ok()) return resp.status();
      if (resp->console_url().empty()) {
        return absl::NotFoundError(absl::StrCat(
            "the server at ", ctx.options.address,
            " serves no web console: start it with --http-port (tock server start-dev does) "
            "and without --headless"));
      }
      const std::string url = ReachableConsoleUrl(resp->console_url(), ctx.options.address);
      auto printer = ctx.printer();
      if (!printer.ok()) return printer.status();
      const bool open = !*no_open && ctx.stdout_is_terminal && OpenInBrowser(url);
      printer->Object(nlohmann::json{{"url", url}, {"opened", open}},
                      {{"Console", url}, {"Opened", open ? "in the browser" : "no (open the URL)"}});
      return absl::OkStatus();
    };
  });
}

}  // namespace tock::cli
