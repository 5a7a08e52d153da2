// Clusters and failover versions (SPEC §2) through `tock`: the seed's two-cluster
// configuration (a: initial version 1, b: 2, increment 10, current and master a).
#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

std::vector<std::string> Versions(const json& history) {
  std::vector<std::string> out;
  for (const json& v : history) {
    json fv = At(v, "/record/failoverVersion");
    out.push_back(fv.is_string() ? fv.get<std::string>() : fv.dump());
  }
  return out;
}

TEST_F(CliTest, TwoClusterFailoverGivesVersionsOneTwoEleven) {
  ASSERT_NO_FATAL_FAILURE(StartTwoClusterServer());
  json ns = TockJson({"namespace", "register", "pay", "--global", "--clusters", "a,b",
                      "--active-cluster", "a"});
  EXPECT_EQ(At(ns, "/failoverVersion"), "1");
  EXPECT_EQ(At(ns, "/isGlobalNamespace"), true);
  EXPECT_EQ(At(ns, "/replicationConfig/activeClusterName"), "a");
  EXPECT_EQ(At(ns, "/replicationConfig/clusters"),
            (json::array({{{"clusterName", "a"}}, {{"clusterName", "b"}}})));

  json to_b = TockJson({"namespace", "failover", "pay", "--to", "b"});
  EXPECT_EQ(At(to_b, "/failoverVersion"), "2");
  EXPECT_EQ(At(to_b, "/replicationConfig/activeClusterName"), "b");
  EXPECT_EQ(At(to_b, "/isGlobalNamespace"), true);
  json to_a = TockJson({"namespace", "failover", "pay", "--to", "a"});
  EXPECT_EQ(At(to_a, "/failoverVersion"), "11");
  EXPECT_EQ(At(to_a, "/replicationConfig/activeClusterName"), "a");

  json described = TockJson({"namespace", "describe", "pay"});
  EXPECT_EQ(At(described, "/failoverVersion"), "11");
  EXPECT_EQ(At(described, "/replicationConfig/activeClusterName"), "a");
  EXPECT_EQ(At(described, "/namespaceInfo/id"), At(ns, "/namespaceInfo/id"));

  json history = TockJson({"namespace", "history", "pay"});
  EXPECT_EQ(Versions(history), (std::vector<std::string>{"1", "2", "11"})) << history.dump();
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(At(history[0], "/operation"), "register");
  EXPECT_EQ(At(history[1], "/operation"), "failover");
  EXPECT_EQ(At(history[2], "/operation"), "failover");
  EXPECT_EQ(At(history[0], "/record/replicationConfig/activeClusterName"), "a");
  EXPECT_EQ(At(history[1], "/record/replicationConfig/activeClusterName"), "b");
  EXPECT_EQ(At(history[2], "/record/replicationConfig/activeClusterName"), "a");

  // What changed, field by field.
  json expected_changes = json::array(
      {{{"field", "failoverVersion"}, {"before", "1"}, {"after", "2"}},
       {{"field", "replicationConfig.activeClusterName"}, {"before", "a"}, {"after", "b"}}});
  EXPECT_EQ(At(history[1], "/changes"), expected_changes) << history[1].dump();
  ProcessResult table = Tock({"namespace", "history", "pay", "-o", "table"});
  EXPECT_NE(table.out.find("1 -> 2"), std::string::npos) << table.out;

  // The describe of the past sees the version of the time.
  json at_b = TockJson({"namespace", "describe", "pay", "--as-of",
                        At(history[1], "/validFrom").get<std::string>()});
  EXPECT_EQ(At(at_b, "/failoverVersion"), "2");
  EXPECT_EQ(At(at_b, "/replicationConfig/activeClusterName"), "b");

  // 11 -> b: 10 / 10 * 10 + 2 = 12.
  EXPECT_EQ(At(TockJson({"namespace", "failover", "pay", "--to", "b"}), "/failoverVersion"), "12");
  EXPECT_EQ(Versions(TockJson({"namespace", "history", "pay"})),
            (std::vector<std::string>{"1", "2", "11", "12"}));
}

TEST_F(CliTest, SeedExampleBetaRegisteredOnB) {
  ASSERT_NO_FATAL_FAILURE(StartTwoClusterServer());
  // Seed 002: beta registered active on B -> 2, fails over to A -> 11.
  json beta = TockJson({"namespace", "register", "beta", "--global", "--clusters", "a,b",
                        "--active-cluster", "b"});
  EXPECT_EQ(At(beta, "/failoverVersion"), "2");
  EXPECT_EQ(At(beta, "/replicationConfig/activeClusterName"), "b");
  EXPECT_EQ(At(TockJson({"namespace", "failover", "beta", "--to", "a"}), "/failoverVersion"), "11");
  EXPECT_EQ(Versions(TockJson({"namespace", "history", "beta"})),
            (std::vector<std::string>{"2", "11"}));
}

TEST_F(CliTest, GlobalNamespaceDefaultsToTheCurrentClusterActive) {
  ASSERT_NO_FATAL_FAILURE(StartTwoClusterServer());
  json ns = TockJson({"namespace", "register", "dflt", "--global", "--clusters", "a,b"});
  EXPECT_EQ(At(ns, "/isGlobalNamespace"), true);
  EXPECT_EQ(At(ns, "/replicationConfig/activeClusterName"), "a");
  EXPECT_EQ(At(ns, "/failoverVersion"), "1");
  json now = TockJson({"namespace", "describe", "dflt", "--as-of", "now"});
  EXPECT_EQ(now, TockJson({"namespace", "describe", "dflt"}));
}

TEST_F(CliTest, FailoverHistoryIsShownAsDescribeShowsIt) {
  ASSERT_NO_FATAL_FAILURE(StartTwoClusterServer());
  Register({"fh", "--global", "--clusters", "a,b", "--active-cluster", "a"});
  json to_b = TockJson({"namespace", "failover", "fh", "--to", "b"});
  json described = TockJson({"namespace", "describe", "fh"});
  // SPEC §2.2: the failover history keeps {time, version} entries.
  std::vector<std::string> versions;
  for (const json& entry : At(described, "/failoverHistory")) {
    versions.push_back(At(entry, "/failoverVersion").is_string()
                           ? At(entry, "/failoverVersion").get<std::string>()
                           : entry.dump());
  }
  EXPECT_EQ(versions, (std::vector<std::string>{"1", "2"})) << described.dump();
  // What failover prints is the namespace as it now is: a failover history printed there
  // must be the real one, not an empty list.
  if (to_b.contains("failoverHistory")) {
    EXPECT_EQ(to_b["failoverHistory"], described["failoverHistory"])
        << "`tock namespace failover fh --to b -o json` prints failoverHistory "
        << to_b["failoverHistory"].dump() << " while describe has "
        << described["failoverHistory"].dump();
  }
}

TEST_F(CliTest, TwoClusterErrorsCarryExactMessages) {
  ASSERT_NO_FATAL_FAILURE(StartTwoClusterServer());
  ExpectError({"namespace", "register", "x", "--global", "--clusters", "a", "--active-cluster", "b"},
              kExitUsage, "Active cluster is not contained in all clusters.");
  ExpectError({"namespace", "register", "x", "--global", "--clusters", "a,zz", "--active-cluster",
               "a"},
              kExitUsage, "Invalid cluster name: zz");
  ExpectError({"namespace", "register", "x", "--global", "--clusters", "a,b", "--active-cluster",
               "zz"},
              kExitUsage, "Invalid cluster name: zz");
  ExpectError({"namespace", "describe", "x"}, kExitNotFound, "Namespace x is not found.");

  // A local namespace: version 0, only the current cluster (SPEC §2.2).
  json local = TockJson({"namespace", "register", "loc"});
  EXPECT_EQ(At(local, "/failoverVersion"), "0");
  EXPECT_EQ(At(local, "/isGlobalNamespace"), false);
  EXPECT_EQ(At(local, "/replicationConfig/activeClusterName"), "a");
  ExpectError({"namespace", "register", "loc2", "--active-cluster", "b"}, kExitUsage,
              "Invalid local namespace active cluster");
  ExpectError({"namespace", "register", "loc3", "--clusters", "a,b"}, kExitUsage,
              "Invalid local namespace clusters");
  ExpectError({"namespace", "failover", "loc", "--to", "b"}, kExitUsage,
              "Invalid local namespace active cluster");

  Register({"pay", "--global", "--clusters", "a,b", "--active-cluster", "a"});
  ExpectError({"namespace", "failover", "pay", "--to", "zz"}, kExitUsage,
              "Invalid cluster name: zz");
  ExpectError({"namespace", "failover", "nope", "--to", "b"}, kExitNotFound,
              "Namespace nope is not found.");
  // Nothing of that changed the namespace.
  EXPECT_EQ(At(TockJson({"namespace", "describe", "pay"}), "/failoverVersion"), "1");
  EXPECT_EQ(TockJson({"namespace", "history", "pay"}).size(), 1u);
}

TEST_F(CliTest, ClusterCommandsOnTwoClusters) {
  ASSERT_NO_FATAL_FAILURE(StartTwoClusterServer());
  json clusters = TockJson({"cluster", "list"});
  ASSERT_TRUE(clusters.is_array()) << clusters.dump();
  ASSERT_EQ(clusters.size(), 2u) << clusters.dump();
  EXPECT_EQ(At(clusters[0], "/clusterName"), "a");
  EXPECT_EQ(At(clusters[0], "/initialFailoverVersion"), "1");
  EXPECT_EQ(At(clusters[1], "/clusterName"), "b");
  EXPECT_EQ(At(clusters[1], "/initialFailoverVersion"), "2");
  std::vector<json> lines = TockJsonLines({"cluster", "list"});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(At(lines[1], "/clusterName"), "b");

  json cluster = TockJson({"cluster", "describe"});
  EXPECT_EQ(At(cluster, "/clusterName"), "a");
  EXPECT_EQ(At(cluster, "/failoverVersionIncrement"), "10");
  EXPECT_EQ(At(cluster, "/initialFailoverVersion"), "1");
  EXPECT_EQ(At(cluster, "/tock/masterClusterName"), "a");
  EXPECT_EQ(At(cluster, "/tock/currentClusterName"), "a");
  EXPECT_EQ(At(cluster, "/tock/enableGlobalNamespace"), true);

  ProcessResult table = Tock({"cluster", "list", "-o", "table"});
  EXPECT_EQ(table.exit_code, kExitOk) << table.err;
  EXPECT_NE(table.out.find("127.0.0.1:7234"), std::string::npos) << table.out;
  ProcessResult card = Tock({"cluster", "describe", "-o", "card"});
  EXPECT_EQ(card.exit_code, kExitOk) << card.err;
  EXPECT_NE(card.out.find("a"), std::string::npos) << card.out;
}

TEST_F(CliTest, ClusterCommandsOnASingleCluster) {
  StartServer();
  json cluster = TockJson({"cluster", "describe"});
  ASSERT_TRUE(At(cluster, "/clusterName").is_string()) << cluster.dump();
  EXPECT_FALSE(At(cluster, "/clusterName").get<std::string>().empty());
  EXPECT_EQ(At(cluster, "/tock/enableGlobalNamespace").is_null() ||
                At(cluster, "/tock/enableGlobalNamespace") == false,
            true)
      << cluster.dump();
  json clusters = TockJson({"cluster", "list"});
  ASSERT_EQ(clusters.size(), 1u) << clusters.dump();
  EXPECT_EQ(At(clusters[0], "/clusterName"), At(cluster, "/clusterName"));
  EXPECT_EQ(At(TockJson({"namespace", "describe", "default"}),
               "/replicationConfig/activeClusterName"),
            At(cluster, "/clusterName"));
}

}  // namespace
}  // namespace tock::testing

namespace tock::testing {
namespace {

// One tock-server on SQLite is the only host of its database and owns every shard.
TEST_F(CliTest, ClusterMembersAndShardsOfASingleHost) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  json members = TockJson({"cluster", "members"});
  ASSERT_EQ(members.size(), 1u) << members.dump();
  EXPECT_EQ(At(members[0], "/address"), server_->address());
  EXPECT_EQ(At(members[0], "/alive"), true);
  EXPECT_EQ(At(members[0], "/shardsOwned"), 4);
  json shards = TockJson({"cluster", "shards"});
  ASSERT_EQ(shards.size(), 4u) << shards.dump();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(At(shards[i], "/shardId"), i + 1);
    EXPECT_EQ(At(shards[i], "/owner"), server_->address());
  }
  ProcessResult table = Tock({"cluster", "shards", "-o", "table"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("RANGE ID"), std::string::npos) << table.out;
  ProcessResult members_table = Tock({"cluster", "members", "-o", "table"});
  EXPECT_NE(members_table.out.find("HEARTBEAT AGE"), std::string::npos) << members_table.out;
}

}  // namespace
}  // namespace tock::testing
