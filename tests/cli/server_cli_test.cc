// tock-server as a process: banner, clean shutdown, data kept on the database file across
// restarts (clean and kill -9), configuration refused at start with the field named.
#include <signal.h>

#include <regex>
#include <set>

#include "tests/cli/cli_fixture.h"
#include "tests/cli/help_text.h"

namespace tock::testing {
namespace {

// `needle` appears in `text` as a whole number (not part of a longer number or a word).
bool HasNumber(const std::string& text, const std::string& needle) {
  return std::regex_search(text, std::regex("(^|[^0-9A-Za-z])" + needle + "($|[^0-9A-Za-z])"));
}

TEST_F(CliTest, BannerFirstLineAndCleanShutdown) {
  StartServer();
  std::string first_line = server_->banner().substr(0, server_->banner().find('\n'));
  EXPECT_TRUE(std::regex_match(first_line,
                               std::regex(R"(Tock server \S+ listening on 127\.0\.0\.1:[1-9][0-9]*)")))
      << first_line;
  EXPECT_EQ(server_->Stop(), 0) << "SIGTERM shuts down cleanly; stderr: "
                                << server_->stderr_text();
}

TEST_F(CliTest, DataSurvivesARestartOnTheSameFile) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"kept", "--retention", "4d", "--data", "k=v"}));
  ASSERT_EQ(Tock({"namespace", "update", "kept", "--description", "v2"}).exit_code, kExitOk);
  ASSERT_NO_FATAL_FAILURE(Register({"gone"}));
  ASSERT_EQ(Tock({"namespace", "delete", "gone", "--yes"}).exit_code, kExitOk);
  json before = TockJson({"namespace", "describe", "kept"});
  std::string old_address = server_->address();
  EXPECT_EQ(server_->Stop(), 0) << "SIGTERM shuts down cleanly: " << server_->stderr_text();

  ASSERT_NO_FATAL_FAILURE(StartServer());
  json after = TockJson({"namespace", "describe", "kept"});
  EXPECT_EQ(At(after, "/config/workflowExecutionRetentionTtl"), "345600s");
  EXPECT_EQ(At(after, "/namespaceInfo/description"), "v2");
  EXPECT_EQ(At(after, "/namespaceInfo/data/k"), "v");
  EXPECT_EQ(At(after, "/namespaceInfo/id"), At(before, "/namespaceInfo/id"));
  EXPECT_EQ(TockJson({"namespace", "history", "kept"}).size(), 2u);
  EXPECT_EQ(At(TockJson({"namespace", "describe", "gone"}), "/namespaceInfo/state"),
            "NAMESPACE_STATE_DELETED");
  ExpectError({"namespace", "register", "kept"}, kExitConflict, "Namespace already exists.");
}

TEST_F(CliTest, SigintAlsoShutsDownCleanly) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"int"}));
  EXPECT_EQ(server_->Stop(SIGINT), 0) << server_->stderr_text();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  EXPECT_EQ(At(TockJson({"namespace", "describe", "int"}), "/namespaceInfo/name"), "int");
}

TEST_F(CliTest, GlobalNamespaceAndItsFailoversSurviveARestart) {
  ASSERT_NO_FATAL_FAILURE(StartTwoClusterServer());
  Register({"g", "--global", "--clusters", "a,b", "--active-cluster", "a"});
  ASSERT_EQ(Tock({"namespace", "failover", "g", "--to", "b"}).exit_code, kExitOk);
  json before = TockJson({"namespace", "describe", "g"});
  ASSERT_EQ(server_->Stop(), 0);
  ASSERT_NO_FATAL_FAILURE(StartTwoClusterServer());
  json after = TockJson({"namespace", "describe", "g"});
  EXPECT_EQ(after, before);
  EXPECT_EQ(At(after, "/failoverVersion"), "2");
  EXPECT_EQ(At(TockJson({"namespace", "failover", "g", "--to", "a"}), "/failoverVersion"), "11");
  EXPECT_EQ(TockJson({"namespace", "history", "g"}).size(), 3u);
}

TEST_F(CliTest, DataSurvivesKillNine) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"crash", "--retention", "6d"}));
  ASSERT_EQ(Tock({"namespace", "update", "crash", "--description", "acknowledged"}).exit_code,
            kExitOk);
  server_->Kill();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  json after = TockJson({"namespace", "describe", "crash"});
  EXPECT_EQ(At(after, "/config/workflowExecutionRetentionTtl"), "518400s");
  EXPECT_EQ(At(after, "/namespaceInfo/description"), "acknowledged")
      << "an acknowledged change survives a crash";
}

TEST_F(CliTest, ShardCountIsFixedWhenTheDatabaseIsCreated) {
  StartServer({"--config", dir_.Write("four.yaml", "history: {shards: 4}\n")});
  ASSERT_NO_FATAL_FAILURE(Register({"sharded"}));
  ASSERT_EQ(server_->Stop(), 0);

  std::string eight = dir_.Write("eight.yaml", "history: {shards: 8}\n");
  ProcessResult refused =
      RunProcess({TOCK_SERVER_BIN, "--port", "0", "--db-file", dir_.File("tock.db"), "--config",
                  eight},
                 {}, "", std::chrono::seconds(15));
  EXPECT_FALSE(refused.timed_out) << "the server started on a 4-shard database with 8 shards: "
                                  << refused.out;
  EXPECT_GT(refused.exit_code, 0) << refused.err;
  EXPECT_TRUE(HasNumber(refused.err, "4")) << refused.err;
  EXPECT_TRUE(HasNumber(refused.err, "8")) << refused.err;
  EXPECT_EQ(refused.out.find("listening on"), std::string::npos) << refused.out;

  ServerProcess other(TOCK_SERVER_BIN);
  EXPECT_FALSE(other.Start({"--db-file", dir_.File("tock.db"), "--config", eight}));
  EXPECT_GT(other.exit_code(), 0) << other.error();

  // The database is untouched: the right count starts and has the data.
  StartServer({"--config", dir_.File("four.yaml")});
  EXPECT_EQ(At(TockJson({"namespace", "describe", "sharded"}), "/namespaceInfo/name"), "sharded");
  EXPECT_EQ(At(TockJson({"cluster", "describe"}), "/historyShardCount"), 4);
}

TEST_F(CliTest, BadClusterConfigStopsTheServerNamingTheField) {
  struct Case {
    std::string from, to, field;
  };
  const std::vector<Case> cases = {
      // 0 < initial_failover_version < failover_version_increment
      {"initial_failover_version: 2", "initial_failover_version: 10", "initial_failover_version"},
      {"initial_failover_version: 2", "initial_failover_version: 0", "initial_failover_version"},
      // unique initial versions
      {"initial_failover_version: 2", "initial_failover_version: 1", "initial_failover_version"},
      // current and master clusters listed
      {"current_cluster_name: a", "current_cluster_name: c", "current_cluster_name"},
      {"master_cluster_name: a", "master_cluster_name: c", "master_cluster_name"},
  };
  int n = 0;
  for (const auto& c : cases) {
    std::string config = kTwoClusterConfigYaml;
    size_t at = config.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    config.replace(at, c.from.size(), c.to);
    std::string path = dir_.Write("bad" + std::to_string(n++) + ".yaml", config);
    ProcessResult r = RunProcess({TOCK_SERVER_BIN, "--port", "0", "--config", path}, {}, "",
                                 std::chrono::seconds(15));
    EXPECT_FALSE(r.timed_out) << c.to << ": the server started";
    EXPECT_GT(r.exit_code, 0) << c.to << ": " << r.err;
    EXPECT_NE(r.err.find(c.field), std::string::npos) << c.to << ": " << r.err;
    EXPECT_EQ(r.out.find("listening on"), std::string::npos) << c.to << ": " << r.out;
  }

  ServerProcess bad(TOCK_SERVER_BIN);
  std::string config = kTwoClusterConfigYaml;
  config.replace(config.find("initial_failover_version: 2"), 27, "initial_failover_version: 10");
  EXPECT_FALSE(bad.Start({"--config", dir_.Write("bad.yaml", config)}));
  EXPECT_NE(bad.error().find("initial_failover_version"), std::string::npos) << bad.error();
}

TEST_F(CliTest, UnknownConfigKeyIsRefused) {
  ProcessResult typo = RunProcess({TOCK_SERVER_BIN, "--port", "0", "--config",
                                   dir_.Write("typo.yaml", "listen: {prot: 1}\n")},
                                  {}, "", std::chrono::seconds(15));
  EXPECT_EQ(typo.exit_code, kExitUsage) << typo.err;
  EXPECT_NE(typo.err.find("listen.prot"), std::string::npos) << typo.err;
}

TEST_F(CliTest, ServerRegistersNamespacesGivenAtStart) {
  StartServer({"--namespace", "first", "--namespace", "second"});
  std::vector<std::string> names;
  for (const json& ns : TockJsonLines({"namespace", "list"})) {
    names.push_back(At(ns, "/namespaceInfo/name").is_string() ? At(ns, "/namespaceInfo/name") : "?");
  }
  EXPECT_EQ(names, (std::vector<std::string>{"default", "first", "second"}));
  EXPECT_EQ(At(TockJson({"namespace", "describe", "first"}), "/config/workflowExecutionRetentionTtl"),
            "172800s");
}

TEST_F(CliTest, StartDevServesTheSameApi) {
  ServerProcess dev(TOCK_CLI_BIN);
  ASSERT_TRUE(dev.Start({"server", "start-dev", "--namespace", "orders", "--db-file",
                         dir_.File("dev.db")}))
      << dev.error();
  ProcessResult r = RunProcess(
      {TOCK_CLI_BIN, "--address", dev.address(), "namespace", "describe", "orders", "-o", "json"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(At(json::parse(r.out, nullptr, false), "/namespaceInfo/name"), "orders");
  EXPECT_NE(dev.banner().find("database:"), std::string::npos) << dev.banner();
  EXPECT_EQ(dev.Stop(), 0) << dev.stderr_text();
}

// Durability is a stated choice (review P1-9): a database file is power-safe unless told
// otherwise, and the banner says which is in force.
TEST_F(CliTest, BannerStatesTheDurabilityInForce) {
  StartServer();
  EXPECT_NE(server_->banner().find("\n  durability: full (survives power loss)\n"),
            std::string::npos)
      << server_->banner();
  ASSERT_EQ(server_->Stop(), 0) << server_->stderr_text();

  StartServer({"--sqlite-synchronous", "normal"});
  EXPECT_NE(server_->banner().find("\n  durability: normal (survives a crash of the process, "
                                   "not power loss"),
            std::string::npos)
      << server_->banner();
  ASSERT_EQ(server_->Stop(), 0) << server_->stderr_text();

  StartServer({"--config",
               dir_.Write("normal.yaml", "persistence: {sqlite: {synchronous: normal}}\n")});
  EXPECT_NE(server_->banner().find("  durability: normal"), std::string::npos)
      << server_->banner();
}

TEST_F(CliTest, BadSynchronousValueIsRefused) {
  ProcessResult flag = RunProcess({TOCK_SERVER_BIN, "--port", "0", "--sqlite-synchronous", "off"},
                                  {}, "", std::chrono::seconds(15));
  EXPECT_EQ(flag.exit_code, kExitUsage) << flag.err;
  EXPECT_NE(flag.err.find("--sqlite-synchronous"), std::string::npos) << flag.err;
  EXPECT_EQ(flag.out.find("listening on"), std::string::npos) << flag.out;

  ProcessResult config = RunProcess(
      {TOCK_SERVER_BIN, "--port", "0", "--config",
       dir_.Write("bad.yaml", "persistence: {sqlite: {synchronous: fast}}\n")},
      {}, "", std::chrono::seconds(15));
  EXPECT_EQ(config.exit_code, kExitUsage) << config.err;
  EXPECT_NE(config.err.find("persistence.sqlite.synchronous: must be full"), std::string::npos)
      << config.err;
}

// start-dev takes tock-server's flags (--http-port was refused), and keeps a development
// database file fast: synchronous normal unless told otherwise.
TEST_F(CliTest, StartDevTakesTheServerFlags) {
  ServerProcess dev(TOCK_CLI_BIN);
  ASSERT_TRUE(dev.Start({"server", "start-dev", "--http-port", "0", "--db-file",
                         dir_.File("dev.db"), "--namespace", "a", "--namespace", "b"}))
      << dev.error();
  EXPECT_NE(dev.banner().find("  timers:     http://127.0.0.1:"), std::string::npos)
      << dev.banner();
  EXPECT_NE(dev.banner().find("  durability: normal"), std::string::npos) << dev.banner();
  // A repeated flag is handed over whole.
  EXPECT_TRUE(std::regex_search(dev.banner(), std::regex(R"(namespaces: [^\n]*\ba\b)")))
      << dev.banner();
  EXPECT_TRUE(std::regex_search(dev.banner(), std::regex(R"(namespaces: [^\n]*\bb\b)")))
      << dev.banner();
  EXPECT_EQ(dev.Stop(), 0) << dev.stderr_text();

  ASSERT_TRUE(dev.Start({"server", "start-dev", "--db-file", dir_.File("full.db"),
                         "--sqlite-synchronous", "full", "--enable-time-skipping"}))
      << dev.error();
  EXPECT_NE(dev.banner().find("  durability: full"), std::string::npos) << dev.banner();
  ProcessResult advanced =
      RunProcess({TOCK_CLI_BIN, "--address", dev.address(), "server", "advance-time", "1h"});
  EXPECT_EQ(advanced.exit_code, kExitOk) << advanced.err;
  EXPECT_EQ(dev.Stop(), 0) << dev.stderr_text();
}

// The flags' names in a CLI11 --help text.
std::set<std::string> FlagNames(const std::string& help) {
  const std::vector<std::string> listed = LongFlags(help);
  return {listed.begin(), listed.end()};
}

// One list of flags (cmd/tock-server/server_flags.h): start-dev shows exactly tock-server's.
TEST_F(CliTest, StartDevTakesEveryFlagOfTockServer) {
  ProcessResult server = RunProcess({TOCK_SERVER_BIN, "--help"});
  ProcessResult dev = RunProcess({TOCK_CLI_BIN, "server", "start-dev", "--help"});
  ASSERT_EQ(server.exit_code, kExitOk) << server.err;
  ASSERT_EQ(dev.exit_code, kExitOk) << dev.err;
  const std::set<std::string> server_flags = FlagNames(server.out);
  EXPECT_GT(server_flags.size(), 20u) << server.out;
  for (const char* expected : {"--http-port", "--tls-cert-file", "--config", "--db-file",
                               "--sqlite-synchronous", "--metrics-port"}) {
    EXPECT_EQ(server_flags.count(expected), 1u) << expected << "\n" << server.out;
  }
  EXPECT_EQ(FlagNames(dev.out), server_flags) << dev.out;
}

}  // namespace
}  // namespace tock::testing
