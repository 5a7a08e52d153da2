// The global part of the CLI contract (DESIGN.md): --address / TOCK_ADDRESS / TEMPORAL_ADDRESS,
// -n / TOCK_NAMESPACE / TEMPORAL_NAMESPACE, -o, --timeout, exit 4 when the server cannot be
// reached, and --help with an example on every command.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

// A socket that accepts TCP connections (the kernel completes the handshake from the backlog)
// but never speaks HTTP/2: calls to it can only time out.
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
        listen(fd_, 16) == 0 && getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port_ = ntohs(addr.sin_port);
    }
  }
  ~SilentListener() {
    if (fd_ >= 0) close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST_F(CliTest, UnreachableServerIsExitFour) {
  std::string closed = "127.0.0.1:" + std::to_string(ClosedLocalPort());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--timeout", "2s", "namespace", "list", "-o", "json"},
        std::vector<std::string>{"namespace", "describe", "default", "-o", "json"},
        std::vector<std::string>{"namespace", "register", "x", "--retention", "3d"},
        std::vector<std::string>{"cluster", "describe"}}) {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", closed};
    argv.insert(argv.end(), args.begin(), args.end());
    auto started = std::chrono::steady_clock::now();
    ProcessResult r = RunProcess(argv, {}, "", std::chrono::seconds(60));
    auto took = std::chrono::steady_clock::now() - started;
    EXPECT_EQ(r.exit_code, kExitUnavailable) << Describe(args, r);
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(closed), std::string::npos) << "the error names the address: " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_LT(took, std::chrono::seconds(20)) << "a refused connection is not waited on";
  }
  // A name that does not resolve: unavailable too.
  ProcessResult dns = RunProcess({TOCK_CLI_BIN, "--address", "no-such-host.invalid:7233",
                                  "--timeout", "5s", "namespace", "list"},
                                 {}, "", std::chrono::seconds(60));
  EXPECT_EQ(dns.exit_code, kExitUnavailable) << dns.err;
  EXPECT_EQ(dns.err.rfind("error: ", 0), 0u) << dns.err;
  // The same through the environment.
  ProcessResult env = RunProcess({TOCK_CLI_BIN, "namespace", "list"}, {{"TOCK_ADDRESS", closed}});
  EXPECT_EQ(env.exit_code, kExitUnavailable) << env.err;
}

TEST_F(CliTest, TimeoutIsExitFour) {
  SilentListener silent;
  ASSERT_NE(silent.port(), 0);
  auto started = std::chrono::steady_clock::now();
  ProcessResult r = RunProcess({TOCK_CLI_BIN, "--address", silent.address(), "--timeout", "1s",
                                "namespace", "describe", "default"},
                               {}, "", std::chrono::seconds(30));
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_FALSE(r.timed_out) << "--timeout 1s was not honoured";
  EXPECT_EQ(r.exit_code, kExitUnavailable) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_LT(took, std::chrono::seconds(10));
}

TEST_F(CliTest, AddressFromFlagThenTockThenTemporalEnvironment) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"envns", "--description", "from env"}));
  const std::string good = server_->address();
  const std::string bad = "127.0.0.1:" + std::to_string(ClosedLocalPort());
  struct Case {
    std::vector<std::string> flags;
    std::map<std::string, std::string> env;
  };
  const std::vector<Case> reach = {
      {{}, {{"TOCK_ADDRESS", good}}},
      {{}, {{"TEMPORAL_ADDRESS", good}}},
      {{}, {{"TOCK_ADDRESS", good}, {"TEMPORAL_ADDRESS", bad}}},
      {{"--address", good}, {{"TOCK_ADDRESS", bad}, {"TEMPORAL_ADDRESS", bad}}},
  };
  for (const auto& c : reach) {
    std::vector<std::string> argv = {TOCK_CLI_BIN};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    for (const char* a : {"namespace", "describe", "envns", "-o", "json"}) argv.push_back(a);
    ProcessResult r = RunProcess(argv, c.env);
    ASSERT_EQ(r.exit_code, kExitOk) << r.err;
    EXPECT_EQ(At(json::parse(r.out, nullptr, false), "/namespaceInfo/description"), "from env");
  }
  // TOCK_ADDRESS wins over TEMPORAL_ADDRESS: a bad TOCK_ADDRESS is used.
  ProcessResult r = RunProcess({TOCK_CLI_BIN, "namespace", "describe", "envns"},
                               {{"TOCK_ADDRESS", bad}, {"TEMPORAL_ADDRESS", good}});
  EXPECT_EQ(r.exit_code, kExitUnavailable) << r.err;
}

TEST_F(CliTest, NamespaceFromFlagThenEnvironmentThenDefault) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"flagns", "--description", "flag"}));
  ASSERT_NO_FATAL_FAILURE(Register({"tockns", "--description", "tock env"}));
  ASSERT_NO_FATAL_FAILURE(Register({"temporalns", "--description", "temporal env"}));
  struct Case {
    std::vector<std::string> flags;
    std::map<std::string, std::string> env;
    std::string name;
  };
  const std::vector<Case> cases = {
      {{}, {}, "default"},
      {{"-n", "flagns"}, {}, "flagns"},
      {{"--namespace", "flagns"}, {}, "flagns"},
      {{}, {{"TOCK_NAMESPACE", "tockns"}}, "tockns"},
      {{}, {{"TEMPORAL_NAMESPACE", "temporalns"}}, "temporalns"},
      {{}, {{"TOCK_NAMESPACE", "tockns"}, {"TEMPORAL_NAMESPACE", "temporalns"}}, "tockns"},
      {{"-n", "flagns"}, {{"TOCK_NAMESPACE", "tockns"}}, "flagns"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", server_->address()};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    for (const char* a : {"namespace", "describe", "-o", "json"}) argv.push_back(a);
    ProcessResult r = RunProcess(argv, c.env);
    ASSERT_EQ(r.exit_code, kExitOk) << c.name << ": " << r.err;
    EXPECT_EQ(At(json::parse(r.out, nullptr, false), "/namespaceInfo/name"), c.name);
  }
  // An explicit NAME argument wins over -n.
  std::vector<std::string> args = {"-n", "flagns", "namespace", "describe", "tockns", "-o", "json"};
  ProcessResult r = Tock(args);
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(At(json::parse(r.out, nullptr, false), "/namespaceInfo/name"), "tockns");
  // -n of a missing namespace: the exact NOT_FOUND message.
  ExpectError({"-n", "missingns", "namespace", "describe"}, kExitNotFound,
              "Namespace missingns is not found.");
  ExpectError({"-n", "missingns", "namespace", "history"}, kExitNotFound,
              "Namespace missingns is not found.");
}

TEST_F(CliTest, EveryOutputFormat) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"fmt", "--retention", "3d", "--description", "formats"}));
  for (const std::string format : {"table", "card", "json", "jsonl"}) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"namespace", "describe", "fmt"},
          std::vector<std::string>{"namespace", "list"},
          std::vector<std::string>{"namespace", "history", "fmt"},
          std::vector<std::string>{"cluster", "describe"},
          std::vector<std::string>{"cluster", "list"}}) {
      std::vector<std::string> full = args;
      full.push_back("-o");
      full.push_back(format);
      ProcessResult r = Tock(full);
      EXPECT_EQ(r.exit_code, kExitOk) << Describe(full, r);
      EXPECT_FALSE(r.out.empty()) << Describe(full, r);
      EXPECT_EQ(r.err, "") << Describe(full, r);
      if (format == "json") {
        EXPECT_FALSE(json::parse(r.out, nullptr, false).is_discarded()) << Describe(full, r);
      } else if (format == "jsonl") {
        for (const json& line : ParseJsonLines(r.out)) EXPECT_TRUE(line.is_object()) << line;
      } else if (args[0] == "namespace" && args[1] != "history") {
        EXPECT_NE(r.out.find("fmt"), std::string::npos) << Describe(full, r);
      }
    }
  }
  // Long option spelling.
  ProcessResult long_form = Tock({"namespace", "describe", "fmt", "--output", "json"});
  EXPECT_EQ(At(json::parse(long_form.out, nullptr, false), "/namespaceInfo/description"),
            "formats");
}

TEST_F(CliTest, EveryCommandHasHelpWithAnExample) {
  const std::vector<std::vector<std::string>> commands = {
      {},
      {"namespace"},
      {"namespace", "register"},
      {"namespace", "describe"},
      {"namespace", "list"},
      {"namespace", "update"},
      {"namespace", "failover"},
      {"namespace", "deprecate"},
      {"namespace", "delete"},
      {"namespace", "history"},
      {"cluster"},
      {"cluster", "describe"},
      {"cluster", "list"},
      {"server"},
      {"server", "start-dev"},
  };
  for (auto args : commands) {
    args.push_back("--help");
    std::vector<std::string> argv = {TOCK_CLI_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, kExitOk) << Describe(args, r);
    EXPECT_NE(r.out.find("Example"), std::string::npos) << Describe(args, r);
    if (args.size() > 1) {
      // The example shows this very command.
      std::string command = "tock";
      for (size_t i = 0; i + 1 < args.size(); ++i) command += " " + args[i];
      EXPECT_NE(r.out.find(command), std::string::npos) << Describe(args, r);
    }
  }
  ProcessResult server_help = RunProcess({TOCK_SERVER_BIN, "--help"});
  EXPECT_EQ(server_help.exit_code, kExitOk) << server_help.err;
  EXPECT_NE(server_help.out.find("Example"), std::string::npos) << server_help.out;
}

}  // namespace
}  // namespace tock::testing
