// The command tree itself: help with an example on every command, usage errors (exit 2),
// no state carried between lines (against a real in-process server), and no connection for
// commands that need none.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "tests/unit/cli/cli_runner.h"

namespace tock::cli::testing {
namespace {

// The paths of every visible command in the tree ({"namespace", "register"}, ...), root
// included.
void CollectCommands(CLI::App& app, std::vector<std::string> path,
                     std::vector<std::vector<std::string>>& out) {
  out.push_back(path);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;  // hidden (`tock __complete`): not for people
    std::vector<std::string> next = path;
    next.push_back(sub->get_name());
    CollectCommands(*sub, next, out);
  }
}

std::vector<std::vector<std::string>> AllCommands() {
  std::istringstream in;
  std::ostringstream out, err;
  CommandContext ctx(in, out, err, false, false);
  CLI::App app{"", "tock"};
  BuildApp(app, ctx);
  std::vector<std::vector<std::string>> commands;
  CollectCommands(app, {}, commands);
  return commands;
}

TEST(CommandTreeTest, EveryCommandHasHelpWithAnExampleOfItself) {
  std::vector<std::vector<std::string>> commands = AllCommands();
  ASSERT_GE(commands.size(), 15u);
  for (std::vector<std::string> args : commands) {
    std::string command = "tock";
    for (const auto& word : args) command += " " + word;
    args.push_back("--help");
    CliResult r = RunTock(args);
    EXPECT_EQ(r.code, 0) << command;
    EXPECT_EQ(r.err, "") << command;
    EXPECT_NE(r.out.find("Example"), std::string::npos) << command << "\n" << r.out;
    EXPECT_NE(r.out.find("\n  " + command), std::string::npos)
        << "an example of `" << command << "` itself:\n" << r.out;
  }
}

TEST(CommandTreeTest, RootHelpDocumentsTheContract) {
  CliResult r = RunTock({"--help"});
  for (const char* needle : {"--address", "TOCK_ADDRESS", "TEMPORAL_ADDRESS", "--namespace",
                             "--output", "table on a terminal", "--timeout", "--tls",
                             "--tls-ca-cert", "--tls-cert", "--tls-key", "--tls-server-name",
                             "--api-key", "--color", "NO_COLOR", "--version", "Exit status",
                             "3 not found", "5 already exists"}) {
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle;
  }
  EXPECT_EQ(RunTock({}).out, r.out) << "bare tock prints its help";
  EXPECT_EQ(RunTock({}).code, 0);
}

TEST(CommandTreeTest, VersionFlag) {
  CliResult r = RunTock({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("tock ", 0), 0u) << r.out;
}

TEST(CommandTreeTest, UsageErrorsAreExitTwoOnStderr) {
  struct Case {
    std::vector<std::string> args;
    std::string in_stderr;
  };
  const std::vector<Case> cases = {
      {{"namespace", "register"}, "name is required"},
      {{"namespace", "failover", "x"}, "--to"},
      {{"namespace", "list", "-o", "yaml"}, "yaml"},
      {{"--color", "pink", "namespace", "list"}, "pink"},
      {{"namespace", "register", "d", "--bogus"}, "--bogus"},
      {{"namespace", "frobnicate"}, "frobnicate"},
      {{"frobnicate"}, "frobnicate"},
      {{"namespace", "register", "a", "b"}, "b"},
  };
  for (const auto& c : cases) {
    CliResult r = RunTock(c.args);
    EXPECT_EQ(r.code, 2) << c.args.back() << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.in_stderr), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  CliResult hint = RunTock({"namespace", "register"});
  EXPECT_NE(hint.err.find("Run 'tock namespace register --help' for usage."), std::string::npos)
      << hint.err;
}

int ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(CommandTreeTest, UnreachableServerIsExitFourNamingTheAddress) {
  const std::string nowhere = "127.0.0.1:" + std::to_string(ClosedPort());
  CliResult r = RunTock({"--address", nowhere, "--timeout", "5s", "namespace", "list"});
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find(nowhere), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(CommandTreeTest, BadTimeoutIsExitTwo) {
  CliResult r = RunTock({"--timeout", "soon", "namespace", "list"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--timeout"), std::string::npos) << r.err;
}

TEST(CommandTreeTest, NothingCarriesOverBetweenLines) {
  InProcessServer server;
  ASSERT_TRUE(server.ok());
  std::istringstream in;
  std::ostringstream out, err;
  CommandContext ctx(in, out, err, false, false);
  const std::vector<std::string> address = {"--address", server.address()};
  auto line = [&](std::vector<std::string> args) {
    args.insert(args.begin(), address.begin(), address.end());
    out.str("");
    err.str("");
    return RunArgs(ctx, args);
  };
  ASSERT_EQ(line({"namespace", "register", "first", "--retention", "3d", "--data", "a=1"}), 0)
      << err.str();
  ASSERT_EQ(line({"namespace", "register", "second"}), 0) << err.str();
  // The second line had no --retention and no --data: none of the first line's flags stuck.
  EXPECT_EQ(nlohmann::json::parse(out.str())["config"]["workflowExecutionRetentionTtl"],
            "172800s");
  EXPECT_TRUE(nlohmann::json::parse(out.str())["namespaceInfo"]["data"].empty());
  // Neither did a global flag.
  ASSERT_EQ(line({"-n", "first", "namespace", "describe", "-o", "jsonl"}), 0) << err.str();
  EXPECT_EQ(nlohmann::json::parse(out.str())["namespaceInfo"]["name"], "first");
  ASSERT_EQ(line({"namespace", "describe", "-o", "jsonl"}), 0) << err.str();
  EXPECT_EQ(nlohmann::json::parse(out.str())["namespaceInfo"]["name"], "default")
      << "the server's own namespace, not the earlier line's -n";
  EXPECT_EQ(ctx.options.namespace_name, "default");
}

TEST(CommandTreeTest, HelpAndBadInputNeedNoConnection) {
  // A context whose connection would fail loudly if opened: an empty address.
  std::istringstream in;
  std::ostringstream out, err;
  CommandContext ctx(in, out, err, false, false);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--address", "", "--help"},
        std::vector<std::string>{"--address", "", "namespace", "register", "x", "--retention",
                                 "0"}}) {
    err.str("");
    int code = RunArgs(ctx, args);
    EXPECT_EQ(err.str().find("address"), std::string::npos) << err.str();
    EXPECT_TRUE(code == 0 || code == 2) << code;
  }
}

}  // namespace
}  // namespace tock::cli::testing
