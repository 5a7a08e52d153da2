// tock-server as a process on PostgreSQL: the --postgres-url flag and the config section,
// the banner and `tock cluster describe` naming the database without its password, data
// kept across a restart, and the refusals at start (an unreachable database: exit 4; a
// bad configuration: exit 2, naming the key). Against the run's shared PostgreSQL (the
// `postgres` ctest fixture), a fresh database per test.
#include <gtest/gtest.h>


#include "tests/support/postgres_server.h"
#include "tests/support/process.h"

namespace tock::testing {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitUnavailable = 4;

bool Contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

class PostgresServerCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.Create(TOCK_POSTGRES_FIXTURE_FILE, "tock_cli")) << db_.error();
    url_ = db_.url();
    database_ = url_.substr(url_.rfind('/') + 1);
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  void StartServer(const std::vector<std::string>& args) {
    server_ = std::make_unique<ServerProcess>(TOCK_SERVER_BIN);
    ASSERT_TRUE(server_->Start(args)) << server_->error();
  }
  ProcessResult Tock(std::vector<std::string> args) {
    args.insert(args.begin(), {TOCK_CLI_BIN, "--address", server_->address()});
    return RunProcess(args);
  }
  // The URL as the banner shows it: user@host:port/db, never a password.
  std::string Shown() const {
    return "postgresql://" + url_.substr(url_.find("://") + 3);
  }

  FreshPostgresDatabase db_;  // first: dropped after the server that uses it stopped
  std::string url_, database_;
  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(PostgresServerCliTest, ServesFromPostgresAndKeepsDataAcrossARestart) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--postgres-url", url_}));
  EXPECT_TRUE(Contains(server_->banner(), "  database:   postgres " + Shown() + "\n"))
      << server_->banner();
  ASSERT_EQ(Tock({"namespace", "register", "kept", "--retention", "4d"}).exit_code, kExitOk);
  ProcessResult describe = Tock({"cluster", "describe", "-o", "json"});
  ASSERT_EQ(describe.exit_code, kExitOk) << describe.err;
  EXPECT_TRUE(Contains(describe.out, "\"persistenceEngine\": \"postgres\"")) << describe.out;
  EXPECT_TRUE(Contains(describe.out, "\"persistenceLocation\": \"" + Shown() + "\""))
      << describe.out;
  EXPECT_EQ(server_->Stop(), 0) << server_->stderr_text();

  ASSERT_NO_FATAL_FAILURE(StartServer({"--postgres-url", url_}));
  ProcessResult kept = Tock({"namespace", "describe", "kept", "-o", "json"});
  EXPECT_EQ(kept.exit_code, kExitOk) << kept.err;
  EXPECT_TRUE(Contains(kept.out, "345600s")) << kept.out;
}

TEST_F(PostgresServerCliTest, TheConfigFileSectionWorksAndThePasswordIsNeverShown) {
  // Trust authentication ignores the password; the server must still never print it.
  const std::string with_password =
      "postgresql://tock:n0t-for-your-eyes@" + url_.substr(url_.find('@') + 1);
  const std::string config = dir_.Write(
      "server.yaml", "persistence:\n  engine: postgres\n  postgres: {url: \"" + with_password +
                         "\", max_connections: 4}\n");
  ASSERT_NO_FATAL_FAILURE(StartServer({"--config", config}));
  EXPECT_TRUE(Contains(server_->banner(), "postgres " + Shown())) << server_->banner();
  EXPECT_FALSE(Contains(server_->banner(), "n0t-for-your-eyes"));
  ProcessResult describe = Tock({"cluster", "describe", "-o", "json"});
  EXPECT_EQ(describe.exit_code, kExitOk) << describe.err;
  EXPECT_FALSE(Contains(describe.out, "n0t-for-your-eyes"));
  server_->Stop();
  EXPECT_FALSE(Contains(server_->stderr_text(), "n0t-for-your-eyes"));
}

TEST_F(PostgresServerCliTest, AnUnreachableDatabaseExits4NamingIt) {
  const int port = ClosedLocalPort();
  const std::string url =
      "postgresql://tock:n0t-for-your-eyes@127.0.0.1:" + std::to_string(port) + "/nowhere";
  ProcessResult r = RunProcess({TOCK_SERVER_BIN, "--port", "0", "--postgres-url", url}, {}, "",
                               std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, kExitUnavailable) << r.err;
  EXPECT_TRUE(Contains(r.err, "the PostgreSQL database at 127.0.0.1:" + std::to_string(port) +
                                  "/nowhere is unavailable: "))
      << r.err;
  EXPECT_FALSE(Contains(r.err, "n0t-for-your-eyes")) << r.err;
}

TEST_F(PostgresServerCliTest, BadPostgresSettingsExit2NamingTheKey) {
  struct Case {
    std::string yaml;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"persistence: {engine: postgres}\n", "persistence.postgres.url"},
      {"persistence: {engine: postgres, postgres: {uri: \"x\"}}\n", "persistence.postgres.uri"},
      {"persistence: {engine: postgres, postgres: {url: \"" + url_ +
           "\", max_connections: 0}}\n",
       "persistence.postgres.max_connections"},
      {"persistence: {postgres: {url: \"" + url_ + "\"}}\n", "persistence.postgres.url"},
      {"persistence: {engine: mysql}\n", "allowed: sqlite, postgres"},
  };
  for (const Case& c : cases) {
    const std::string config = dir_.Write("bad.yaml", c.yaml);
    ProcessResult r = RunProcess({TOCK_SERVER_BIN, "--port", "0", "--config", config});
    EXPECT_EQ(r.exit_code, kExitUsage) << c.yaml << r.err;
    EXPECT_TRUE(Contains(r.err, c.expected)) << c.yaml << r.err;
    EXPECT_FALSE(Contains(r.err, database_)) << "the URL is not repeated: " << r.err;
  }
  // One database at a time.
  ProcessResult both = RunProcess(
      {TOCK_SERVER_BIN, "--port", "0", "--postgres-url", url_, "--db-file", dir_.File("x.db")});
  EXPECT_EQ(both.exit_code, kExitUsage) << both.err;
  EXPECT_TRUE(Contains(both.err, "excludes")) << both.err;
}

}  // namespace
}  // namespace tock::testing
