// `tock` as an operator runs it: real processes, real server, exact messages and exit codes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/fixtures.h"
#include "tests/support/process.h"

namespace tock::testing {
namespace {

using nlohmann::json;

constexpr char kRetentionPrefix[] = "error: A valid retention period is not set on request.";

class CliTest : public ::testing::Test {
 protected:
  void StartServer(std::vector<std::string> args = {}) {
    args.push_back("--db-file");
    args.push_back(dir_.File("tock.db"));
    server_ = std::make_unique<ServerProcess>(TOCK_SERVER_BIN);
    ASSERT_TRUE(server_->Start(args)) << server_->error();
  }

  ProcessResult Tock(std::vector<std::string> args, const std::string& input = "") {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", server_->address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, {}, input);
  }

  json TockJson(std::vector<std::string> args) {
    args.push_back("-o");
    args.push_back("json");
    ProcessResult r = Tock(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json parsed = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << r.out;
    return parsed;
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(CliTest, RegisterDescribeWithEveryField) {
  StartServer();
  json ns = TockJson({"namespace", "register", "orders", "--retention", "3d", "--description",
                      "Order processing", "--owner-email", "ops@example.com", "--data",
                      "team=payments", "--data", "tier=gold"});
  EXPECT_EQ(ns["namespaceInfo"]["name"], "orders");
  EXPECT_EQ(ns["namespaceInfo"]["state"], "NAMESPACE_STATE_REGISTERED");
  EXPECT_EQ(ns["namespaceInfo"]["description"], "Order processing");
  EXPECT_EQ(ns["namespaceInfo"]["ownerEmail"], "ops@example.com");
  EXPECT_EQ(ns["namespaceInfo"]["data"]["team"], "payments");
  EXPECT_EQ(ns["namespaceInfo"]["data"]["tier"], "gold");
  EXPECT_EQ(ns["config"]["workflowExecutionRetentionTtl"], "259200s");
  EXPECT_EQ(ns["isGlobalNamespace"], false);
  EXPECT_EQ(ns["failoverVersion"], "0");

  json described = TockJson({"namespace", "describe", "orders"});
  EXPECT_EQ(described["namespaceInfo"]["id"], ns["namespaceInfo"]["id"]);

  ProcessResult card = Tock({"namespace", "describe", "orders", "-o", "card"});
  EXPECT_EQ(card.exit_code, 0);
  EXPECT_NE(card.out.find("Retention:"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("3d"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("team=payments"), std::string::npos) << card.out;
}

TEST_F(CliTest, RetentionRulesBeforeAnythingIsSent) {
  StartServer();
  json ns = TockJson({"namespace", "register", "twodays"});
  EXPECT_EQ(ns["config"]["workflowExecutionRetentionTtl"], "172800s");
  EXPECT_EQ(TockJson({"namespace", "register", "hours", "--retention", "36h"})["config"]
                    ["workflowExecutionRetentionTtl"],
            "129600s");
  EXPECT_EQ(TockJson({"namespace", "register", "bare", "--retention", "30"})["config"]
                    ["workflowExecutionRetentionTtl"],
            "2592000s");
  for (const char* bad : {"0", "23h", "23h59m", "31d", "-1d", "abc"}) {
    ProcessResult r = Tock({"namespace", "register", "rejected", "--retention", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err.rfind(kRetentionPrefix, 0), 0u) << bad << ": " << r.err;
    EXPECT_EQ(r.out, "") << bad;
  }
  EXPECT_EQ(Tock({"namespace", "describe", "rejected"}).exit_code, 3);

  ProcessResult update = Tock({"namespace", "update", "twodays", "--retention", "31d"});
  EXPECT_EQ(update.exit_code, 2);
  EXPECT_EQ(update.err.rfind(kRetentionPrefix, 0), 0u) << update.err;
}

TEST_F(CliTest, ErrorsCarryExactMessagesAndExitCodes) {
  StartServer();
  ASSERT_EQ(Tock({"namespace", "register", "dup"}).exit_code, 0);
  ProcessResult dup = Tock({"namespace", "register", "dup"});
  EXPECT_EQ(dup.exit_code, 5);
  EXPECT_EQ(dup.err, "error: Namespace already exists.\n");

  ProcessResult missing = Tock({"namespace", "describe", "nope"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_EQ(missing.err, "error: Namespace nope is not found.\n");

  ProcessResult global = Tock({"namespace", "register", "g", "--global"});
  EXPECT_EQ(global.exit_code, 2);
  EXPECT_EQ(global.err, "error: Cannot register global namespace when not enabled\n");

  ProcessResult unknown_cluster = Tock({"namespace", "register", "u", "--active-cluster", "zz"});
  EXPECT_EQ(unknown_cluster.exit_code, 2);
  EXPECT_EQ(unknown_cluster.err, "error: Invalid cluster name: zz\n");

  ProcessResult usage = Tock({"namespace", "register"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("name is required"), std::string::npos) << usage.err;

  ProcessResult bad_output = Tock({"namespace", "list", "-o", "yaml"});
  EXPECT_EQ(bad_output.exit_code, 2);

  ProcessResult bad_data = Tock({"namespace", "register", "d", "--data", "novalue"});
  EXPECT_EQ(bad_data.exit_code, 2);
  EXPECT_NE(bad_data.err.find("KEY=VALUE"), std::string::npos);
}

TEST_F(CliTest, UnreachableServerIsExitFour) {
  ProcessResult r = RunProcess({TOCK_CLI_BIN, "--address", "127.0.0.1:1", "--timeout", "2s",
                                "namespace", "list", "-o", "json"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, AddressAndNamespaceFromTheEnvironment) {
  StartServer();
  ASSERT_EQ(Tock({"namespace", "register", "envns", "--description", "from env"}).exit_code, 0);
  ProcessResult r = RunProcess({TOCK_CLI_BIN, "namespace", "describe", "-o", "json"},
                               {{"TOCK_ADDRESS", server_->address()}, {"TOCK_NAMESPACE", "envns"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["namespaceInfo"]["description"], "from env");
  ProcessResult temporal =
      RunProcess({TOCK_CLI_BIN, "namespace", "describe", "-o", "json"},
                 {{"TEMPORAL_ADDRESS", server_->address()}, {"TEMPORAL_NAMESPACE", "envns"}});
  ASSERT_EQ(temporal.exit_code, 0) << temporal.err;
}

TEST_F(CliTest, ListStreamsAndFiltersDeleted) {
  StartServer();
  for (const char* name : {"alpha", "beta", "gamma"}) {
    ASSERT_EQ(Tock({"namespace", "register", name}).exit_code, 0);
  }
  ASSERT_EQ(Tock({"namespace", "delete", "beta", "--yes"}).exit_code, 0);

  ProcessResult lines = Tock({"namespace", "list", "-o", "jsonl"});
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  std::vector<std::string> names;
  std::istringstream in(lines.out);
  for (std::string line; std::getline(in, line);) {
    names.push_back(json::parse(line)["namespaceInfo"]["name"]);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "default", "gamma"}));

  json all = TockJson({"namespace", "list", "--include-deleted"});
  ASSERT_TRUE(all.is_array());
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[1]["namespaceInfo"]["name"], "beta");
  EXPECT_EQ(all[1]["namespaceInfo"]["state"], "NAMESPACE_STATE_DELETED");

  ProcessResult table = Tock({"namespace", "list", "-o", "table"});
  EXPECT_EQ(table.out.rfind("NAME", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("RETENTION"), std::string::npos);
  EXPECT_NE(table.out.find("gamma"), std::string::npos);
}

TEST_F(CliTest, UpdateDeprecateDeleteAndStateRules) {
  StartServer();
  ASSERT_EQ(Tock({"namespace", "register", "life", "--description", "first", "--data", "a=1"})
                .exit_code,
            0);
  json updated = TockJson({"namespace", "update", "life", "--retention", "7d", "--data", "b=2"});
  EXPECT_EQ(updated["config"]["workflowExecutionRetentionTtl"], "604800s");
  EXPECT_EQ(updated["namespaceInfo"]["description"], "first");
  EXPECT_EQ(updated["namespaceInfo"]["data"]["a"], "1");
  EXPECT_EQ(updated["namespaceInfo"]["data"]["b"], "2");

  json deprecated = TockJson({"namespace", "deprecate", "life"});
  EXPECT_EQ(deprecated["namespaceInfo"]["state"], "NAMESPACE_STATE_DEPRECATED");
  ProcessResult again = Tock({"namespace", "deprecate", "life"});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_EQ(again.err, "error: Invalid namespace state update.\n");

  ProcessResult no_confirm = Tock({"namespace", "delete", "life"});
  EXPECT_EQ(no_confirm.exit_code, 2);
  EXPECT_NE(no_confirm.err.find("--yes"), std::string::npos);
  EXPECT_EQ(TockJson({"namespace", "describe", "life"})["namespaceInfo"]["state"],
            "NAMESPACE_STATE_DEPRECATED");

  json deleted = TockJson({"namespace", "delete", "life", "--yes"});
  EXPECT_EQ(deleted["namespaceInfo"]["state"], "NAMESPACE_STATE_DELETED");
  EXPECT_EQ(Tock({"namespace", "delete", "life", "--yes"}).err,
            "error: Invalid namespace state update.\n");
}

TEST_F(CliTest, HistoryAndAsOfReadThePast) {
  StartServer();
  ASSERT_EQ(Tock({"namespace", "register", "h", "--retention", "1d"}).exit_code, 0);
  json v1 = TockJson({"namespace", "history", "h"});
  ASSERT_EQ(v1.size(), 1u);
  std::string registered_at = v1[0]["validFrom"];
  ASSERT_EQ(Tock({"namespace", "update", "h", "--retention", "5d"}).exit_code, 0);
  ASSERT_EQ(Tock({"namespace", "update", "h", "--description", "later"}).exit_code, 0);

  json history = TockJson({"namespace", "history", "h"});
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0]["operation"], "register");
  EXPECT_EQ(history[1]["operation"], "update");
  EXPECT_EQ(history[0]["validTo"], history[1]["validFrom"]);
  EXPECT_FALSE(history[2].contains("validTo"));
  ASSERT_EQ(history[1]["changes"].size(), 1u);
  EXPECT_EQ(history[1]["changes"][0]["field"], "config.workflowExecutionRetentionTtl");
  EXPECT_EQ(history[1]["changes"][0]["before"], "1d");
  EXPECT_EQ(history[1]["changes"][0]["after"], "5d");

  json past = TockJson({"namespace", "describe", "h", "--as-of", registered_at});
  EXPECT_EQ(past["config"]["workflowExecutionRetentionTtl"], "86400s");
  ProcessResult table = Tock({"namespace", "history", "h", "-o", "table"});
  EXPECT_NE(table.out.find("1d -> 5d"), std::string::npos) << table.out;

  ProcessResult before = Tock({"namespace", "describe", "h", "--as-of", "2000-01-01"});
  EXPECT_EQ(before.exit_code, 3) << before.err;
  ProcessResult garbage = Tock({"namespace", "describe", "h", "--as-of", "yesterday-ish"});
  EXPECT_EQ(garbage.exit_code, 2);
}

TEST_F(CliTest, TwoClusterFailoverGivesVersionsOneTwoEleven) {
  StartServer({"--config", dir_.Write("two.yaml", kTwoClusterConfigYaml)});
  json ns = TockJson({"namespace", "register", "pay", "--global", "--clusters", "a,b",
                      "--active-cluster", "a"});
  EXPECT_EQ(ns["failoverVersion"], "1");
  EXPECT_EQ(ns["isGlobalNamespace"], true);
  json to_b = TockJson({"namespace", "failover", "pay", "--to", "b"});
  EXPECT_EQ(to_b["failoverVersion"], "2");
  EXPECT_EQ(to_b["replicationConfig"]["activeClusterName"], "b");
  json to_a = TockJson({"namespace", "failover", "pay", "--to", "a"});
  EXPECT_EQ(to_a["failoverVersion"], "11");

  json history = TockJson({"namespace", "history", "pay"});
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0]["record"]["failoverVersion"], "1");
  EXPECT_EQ(history[1]["record"]["failoverVersion"], "2");
  EXPECT_EQ(history[2]["record"]["failoverVersion"], "11");
  EXPECT_EQ(history[1]["operation"], "failover");

  ProcessResult not_member = Tock({"namespace", "register", "x", "--global", "--clusters", "a",
                                   "--active-cluster", "b"});
  EXPECT_EQ(not_member.exit_code, 2);
  EXPECT_EQ(not_member.err, "error: Active cluster is not contained in all clusters.\n");
  ProcessResult unknown = Tock({"namespace", "failover", "pay", "--to", "zz"});
  EXPECT_EQ(unknown.err, "error: Invalid cluster name: zz\n");

  json clusters = TockJson({"cluster", "list"});
  ASSERT_EQ(clusters.size(), 2u);
  EXPECT_EQ(clusters[1]["clusterName"], "b");
  EXPECT_EQ(clusters[1]["initialFailoverVersion"], "2");
  json cluster = TockJson({"cluster", "describe"});
  EXPECT_EQ(cluster["clusterName"], "a");
  EXPECT_EQ(cluster["failoverVersionIncrement"], "10");
  EXPECT_EQ(cluster["tock"]["masterClusterName"], "a");
}

TEST_F(CliTest, DataSurvivesARestartOnTheSameFile) {
  StartServer();
  ASSERT_EQ(Tock({"namespace", "register", "kept", "--retention", "4d"}).exit_code, 0);
  ASSERT_EQ(Tock({"namespace", "update", "kept", "--description", "v2"}).exit_code, 0);
  EXPECT_EQ(server_->Stop(), 0) << "SIGTERM shuts down cleanly";
  StartServer();
  json ns = TockJson({"namespace", "describe", "kept"});
  EXPECT_EQ(ns["config"]["workflowExecutionRetentionTtl"], "345600s");
  EXPECT_EQ(ns["namespaceInfo"]["description"], "v2");
  EXPECT_EQ(TockJson({"namespace", "history", "kept"}).size(), 2u);
}

TEST_F(CliTest, ServerRefusesAnotherShardCountAndBadConfig) {
  StartServer();
  server_->Stop();
  ServerProcess other(TOCK_SERVER_BIN);
  EXPECT_FALSE(other.Start({"--db-file", dir_.File("tock.db"), "--config",
                            dir_.Write("eight.yaml", "history: {shards: 8}\n")}));
  EXPECT_NE(other.error().find("8"), std::string::npos) << other.error();
  EXPECT_NE(other.error().find("4"), std::string::npos) << other.error();
  EXPECT_NE(other.error().find("fixed when the database is created"), std::string::npos)
      << other.error();

  ServerProcess bad(TOCK_SERVER_BIN);
  std::string config = kTwoClusterConfigYaml;
  config.replace(config.find("initial_failover_version: 2"), 27, "initial_failover_version: 10");
  EXPECT_FALSE(bad.Start({"--config", dir_.Write("bad.yaml", config)}));
  EXPECT_NE(bad.error().find("initial_failover_version"), std::string::npos) << bad.error();

  ProcessResult direct = RunProcess({TOCK_SERVER_BIN, "--port", "0", "--config",
                                     dir_.Write("typo.yaml", "listen: {prot: 1}\n")});
  EXPECT_EQ(direct.exit_code, 2);
  EXPECT_NE(direct.err.find("listen.prot"), std::string::npos) << direct.err;
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
      {"server", "start-dev"},
  };
  for (auto args : commands) {
    args.insert(args.begin(), TOCK_CLI_BIN);
    args.push_back("--help");
    ProcessResult r = RunProcess(args);
    EXPECT_EQ(r.exit_code, 0) << args.size();
    EXPECT_NE(r.out.find("Example"), std::string::npos) << r.out;
  }
}

TEST_F(CliTest, StartDevServesTheSameApi) {
  ServerProcess dev(TOCK_CLI_BIN);
  ASSERT_TRUE(dev.Start({"server", "start-dev", "--namespace", "orders", "--db-file",
                         dir_.File("dev.db")}))
      << dev.error();
  ProcessResult r = RunProcess(
      {TOCK_CLI_BIN, "--address", dev.address(), "namespace", "describe", "orders", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["namespaceInfo"]["name"], "orders");
  EXPECT_NE(dev.banner().find("database:"), std::string::npos);
}

}  // namespace
}  // namespace tock::testing
