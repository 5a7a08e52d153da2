// The harness the CLI tests stand on: output capture, stdin, environment, time limits,
// terminals and start failures of the server process.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

TEST(HarnessTest, LargeInputAndOutputDoNotDeadlock) {
  std::string input(1 << 20, 'x');  // far beyond a pipe buffer, both ways at once
  for (size_t i = 0; i < input.size(); i += 100) input[i] = '\n';
  ProcessResult r = RunProcess({"/bin/cat"}, {}, input, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, input);
}

TEST(HarnessTest, SeparatesStreamsAndPassesEnvironmentAndExitCode) {
  ProcessResult r = RunProcess({"/bin/sh", "-c", "echo out; echo \"err $TOCK_HARNESS\" >&2; exit 7"},
                               {{"TOCK_HARNESS", "value"}});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err value\n");
}

TEST(HarnessTest, KillsAChildThatOutlivesItsTimeout) {
  auto started = std::chrono::steady_clock::now();
  ProcessResult r = RunProcess({"/bin/sleep", "30"}, {}, "", std::chrono::milliseconds(300));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

TEST(HarnessTest, ChildThatIgnoresItsInputDoesNotKillTheTest) {
  ProcessResult r = RunProcess({"/bin/true"}, {}, std::string(1 << 20, 'x'));
  EXPECT_EQ(r.exit_code, 0);
}

TEST(HarnessTest, MissingBinaryIsReported) {
  ProcessResult r = RunProcess({"/nonexistent/tock"});
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_NE(r.err.find("/nonexistent/tock"), std::string::npos);
}

TEST(HarnessTest, TerminalStdin) {
  ProcessResult piped = RunProcess({"/bin/sh", "-c", "test -t 0 && echo tty || echo pipe"});
  EXPECT_EQ(piped.out, "pipe\n");
  ProcessResult tty = RunProcess({"/bin/sh", "-c", "test -t 0 && read a && echo \"tty $a\""}, {},
                                 "yes\n", std::chrono::seconds(10), {.stdin_is_terminal = true});
  EXPECT_EQ(tty.exit_code, 0) << tty.err;
  EXPECT_EQ(tty.out, "tty yes\n");
}

TEST(HarnessTest, ClosedPortRefusesConnections) {
  int port = ClosedLocalPort();
  ASSERT_GT(port, 0);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int error = errno;
  close(fd);
  EXPECT_EQ(rc, -1);
  EXPECT_EQ(error, ECONNREFUSED);
}

TEST(HarnessTest, ServerThatFailsToStartSaysWhy) {
  TempDir dir;
  ServerProcess server(TOCK_SERVER_BIN);
  EXPECT_FALSE(server.Start({"--config", dir.Write("x.yaml", "nonsense_key: 1\n")}));
  EXPECT_GT(server.exit_code(), 0);
  EXPECT_NE(server.error().find("nonsense_key"), std::string::npos) << server.error();
  EXPECT_FALSE(server.running());
  EXPECT_EQ(server.Stop(), -1);
}

TEST(HarnessTest, ServerStartsStopsAndTempDirCleansUp) {
  std::filesystem::path where;
  {
    TempDir dir;
    where = dir.path();
    ServerProcess server(TOCK_SERVER_BIN);
    ASSERT_TRUE(server.Start({"--db-file", dir.File("t.db")})) << server.error();
    EXPECT_TRUE(server.running());
    EXPECT_NE(server.address().find("127.0.0.1:"), std::string::npos);
    EXPECT_EQ(kill(server.pid(), 0), 0);
    pid_t pid = server.pid();
    EXPECT_EQ(server.Stop(), 0) << server.stderr_text();
    EXPECT_FALSE(server.running());
    EXPECT_NE(kill(pid, 0), 0) << "reaped";
    EXPECT_TRUE(std::filesystem::exists(dir.File("t.db")));
  }
  EXPECT_FALSE(std::filesystem::exists(where));
}

}  // namespace
}  // namespace tock::testing
