// Clusters and failover versions (SPEC §2) through `tock`: the seed's two-cluster
// configuration (a: initial version 1, b: 2, increment 10, current and master a).
#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "absl/strings/str_split.h"
#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

// The header of `tock cluster list -o table`.
const std::vector<std::string> kClusterListHeader = {
    "NAME", "CLUSTER ID", "ADDRESS", "HISTORY SHARDS", "INITIAL FAILOVER VERSION", "CONNECTION",
    "REPLICATION"};

// The lines of a table, each cut into its cells (columns are two or more spaces apart; an
// empty cell in the middle of a row merges with the gap around it).
std::vector<std::vector<std::string>> TableCells(const std::string& table) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    size_t at = 0;
    while (at < line.size()) {
      size_t gap = line.find("  ", at);
      if (gap == std::string::npos) gap = line.size();
      cells.push_back(line.substr(at, gap - at));
      at = line.find_first_not_of(' ', gap);
      if (at == std::string::npos) break;
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

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
  // The Temporal CLI's columns, in its order, and REPLICATION.
  std::vector<std::vector<std::string>> rows = TableCells(table.out);
  ASSERT_EQ(rows.size(), 3u) << table.out;
  EXPECT_EQ(rows[0], kClusterListHeader) << table.out;
  EXPECT_EQ(rows[1].front(), "a") << table.out;
  EXPECT_EQ(rows[2].front(), "b") << table.out;
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

// `tock cluster upsert` and `tock cluster remove` (OperatorService.AddOrUpdateRemoteCluster,
// RemoveRemoteCluster): what is refused before anything is sent, Temporal's errors from the
// server, and a remote cluster added, changed and removed between two real servers.
namespace tock::testing {
namespace {

// `tock --address <a port nothing listens on> args...`: whatever gets as far as a call fails
// with exit 4, so an exit 2 with the check's message shows that nothing was sent.
ProcessResult TockWithoutServer(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {TOCK_CLI_BIN, "--address",
                                   "127.0.0.1:" + std::to_string(ClosedLocalPort())};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv);
}

void ExpectRefusedBeforeSending(const std::vector<std::string>& args, const std::string& message) {
  ProcessResult r = TockWithoutServer(args);
  EXPECT_EQ(r.exit_code, kExitUsage) << Describe(args, r);
  EXPECT_EQ(r.err, "error: " + message + "\n") << Describe(args, r);
  EXPECT_EQ(r.out, "") << Describe(args, r);
}

// Got as far as calling the server (there is none): the input passed every check.
void ExpectSent(const std::vector<std::string>& args) {
  ProcessResult r = TockWithoutServer(args);
  EXPECT_EQ(r.exit_code, kExitUnavailable) << Describe(args, r);
  EXPECT_EQ(r.err.rfind("error: cannot reach the server at 127.0.0.1:", 0), 0u)
      << Describe(args, r);
}

std::vector<std::string> Upsert(const std::string& address) {
  return {"cluster", "upsert", "--frontend-address", address};
}

TEST(ClusterUpsertRemoveInput, UpsertChecksTheAddressBeforeSending) {
  const std::string want = ": want HOST:PORT, e.g. 10.0.0.5:7233";
  ExpectRefusedBeforeSending(
      Upsert(""), "--frontend-address is empty: give the remote cluster's frontend as HOST:PORT");
  ExpectRefusedBeforeSending(Upsert("frontend"), "invalid --frontend-address \"frontend\"" + want);
  ExpectRefusedBeforeSending(Upsert(":7233"), "invalid --frontend-address \":7233\"" + want);
  ExpectRefusedBeforeSending(Upsert("http://b.internal:7233"),
                             "invalid --frontend-address \"http://b.internal:7233\"" + want);
  ExpectRefusedBeforeSending(Upsert("::1:7233"), "invalid --frontend-address \"::1:7233\"" + want);
  ExpectRefusedBeforeSending(Upsert("b internal:7233"),
                             "invalid --frontend-address \"b internal:7233\"" + want);
  for (const std::string port : {"", "0", "65536", "http", "-1", "123456"}) {
    ExpectRefusedBeforeSending(Upsert("b.internal:" + port),
                               "invalid --frontend-address \"b.internal:" + port +
                                   "\": the port must be a number from 1 to 65535");
  }
  ExpectRefusedBeforeSending(Upsert("b\tinternal:7233"),
                             "--frontend-address contains a control character (byte 2); want "
                             "HOST:PORT, e.g. 10.0.0.5:7233");
  // Echoed up to 64 bytes.
  ExpectRefusedBeforeSending(Upsert(std::string(100, 'x')),
                             "invalid --frontend-address \"" + std::string(64, 'x') +
                                 "...\" (100 bytes)" + want);
  // At most 255 bytes.
  const std::string longest = std::string(250, 'h') + ":7233";
  ASSERT_EQ(longest.size(), 255u);
  ExpectSent(Upsert(longest));
  ExpectRefusedBeforeSending(Upsert("h" + longest),
                             "--frontend-address is 256 bytes long; at most 255");

  // What passes: host names, IPv4, bracketed IPv6, ports 1 and 65535.
  for (const std::string address :
       {"b.internal:7233", "10.0.1.5:1", "[::1]:65535", "[fe80::1%eth0]:7233", "b_2-x:7233"}) {
    ExpectSent(Upsert(address));
  }
}

TEST(ClusterUpsertRemoveInput, UpsertBoolFlags) {
  // --enable-connection and --enable-replication: bare (true), =VALUE or VALUE, true or false.
  for (const std::vector<std::string> flags :
       {std::vector<std::string>{"--enable-connection=false"},
        {"--enable-connection", "false"},
        {"--enable-connection"},
        {"--enable-replication=FALSE", "--enable-connection=true"},
        {"--enable-replication", "false", "--enable-connection", "true"}}) {
    std::vector<std::string> args = Upsert("b.internal:7233");
    args.insert(args.end(), flags.begin(), flags.end());
    ExpectSent(args);
  }
  std::vector<std::string> args = Upsert("b.internal:7233");
  args.push_back("--enable-connection=maybe");
  ProcessResult r = TockWithoutServer(args);
  EXPECT_EQ(r.exit_code, kExitUsage) << Describe(args, r);
  EXPECT_EQ(r.err.rfind("error: --enable-connection: maybe not in {true,false}\n", 0), 0u)
      << Describe(args, r);
  EXPECT_EQ(r.out, "") << Describe(args, r);

  r = TockWithoutServer({"cluster", "upsert"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_EQ(r.err.rfind("error: --frontend-address is required\n", 0), 0u) << r.err;
}

TEST(ClusterUpsertRemoveInput, RemoveChecksTheNameBeforeSending) {
  ExpectRefusedBeforeSending({"cluster", "remove", "--name", ""},
                             "--name is empty: give the name of the remote cluster to remove");
  ExpectRefusedBeforeSending({"cluster", "remove", "--name", "b\nc"},
                             "--name contains a control character (byte 2)");
  ExpectRefusedBeforeSending({"cluster", "remove", "--name", std::string(256, 'n')},
                             "--name is 256 bytes long; at most 255");
  ExpectSent({"cluster", "remove", "--name", std::string(255, 'n')});
  ExpectSent({"cluster", "remove", "--name", "b"});
  ProcessResult r = TockWithoutServer({"cluster", "remove"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_EQ(r.err.rfind("error: --name is required\n", 0), 0u) << r.err;
}

// Clusters made of one tock-server each: global namespaces on, failover version increment 10.
class RemoteClusterTest : public CliTest {
 protected:
  // A server that is cluster `name` (its only cluster) with `initial_version`, listening on a
  // port chosen first so that its configured rpc_address is its real address.
  // `extra`: more flags; `shards`: its history shard count.
  std::unique_ptr<ServerProcess> StartCluster(const std::string& name, int initial_version,
                                              const std::vector<std::string>& extra = {},
                                              int shards = 4) {
    const std::string port = std::to_string(ClosedLocalPort());
    const std::string yaml = ConfigYaml(name, initial_version, "127.0.0.1:" + port) +
                             "history:\n  shards: " + std::to_string(shards) + "\n";
    auto server = std::make_unique<ServerProcess>(TOCK_SERVER_BIN, "listening on (\\S+)");
    std::vector<std::string> args = {"--config", dir_.Write(name + ".yaml", yaml), "--db-file",
                                     dir_.File(name + ".db"), "--port", port};
    args.insert(args.end(), extra.begin(), extra.end());
    const bool started = server->Start(args);
    EXPECT_TRUE(started) << server->error();
    if (!started) return nullptr;
    EXPECT_EQ(server->address(), "127.0.0.1:" + port);
    return server;
  }

  static std::string ConfigYaml(const std::string& name, int initial_version,
                                const std::string& address) {
    std::ostringstream yaml;
    yaml << "cluster_metadata:\n"
         << "  enable_global_namespace: true\n"
         << "  failover_version_increment: 10\n"
         << "  master_cluster_name: " << name << "\n"
         << "  current_cluster_name: " << name << "\n"
         << "  clusters:\n"
         << "    " << name << ": {enabled: true, initial_failover_version: " << initial_version
         << ", rpc_address: \"" << address << "\"}\n";
    return yaml.str();
  }

  // Cluster a as server_ (what Tock() talks to) and cluster b as b_.
  void StartAAndB() {
    server_ = StartCluster("a", 1);
    ASSERT_NE(server_, nullptr);
    b_ = StartCluster("b", 2);
    ASSERT_NE(b_, nullptr);
  }

  // `tock cluster list -o json` on a: the clusters by name.
  std::map<std::string, json> ClustersOfA() {
    std::map<std::string, json> out;
    for (const json& c : TockJson({"cluster", "list"})) {
      out[At(c, "/clusterName").get<std::string>()] = c;
    }
    return out;
  }

  std::unique_ptr<ServerProcess> b_;
};

TEST_F(RemoteClusterTest, RemoveOfAnUnknownClusterIsNotFound) {
  StartServer();
  ExpectError({"cluster", "remove", "--name", "nosuch"}, kExitNotFound,
              "The cluster to be deleted cannot be found in clusters cache.");
}

TEST_F(RemoteClusterTest, UpsertOfTheServersOwnAddressIsRefused) {
  server_ = StartCluster("a", 1);
  ASSERT_NE(server_, nullptr);
  ExpectError(Upsert(server_->address()), kExitUsage,
              "Unable connect to remote cluster with invalid config: Cannot update current "
              "cluster metadata from rpc calls.");
  EXPECT_EQ(TockJson({"cluster", "list"}).size(), 1u);
}

TEST_F(RemoteClusterTest, UpsertOfAnUnreachableFrontendIsUnavailable) {
  server_ = StartCluster("a", 1);
  ASSERT_NE(server_, nullptr);
  const std::string nobody = "127.0.0.1:" + std::to_string(ClosedLocalPort());
  // The server's words, not "cannot reach the server at": the server was reached.
  ExpectErrorStartingWith(Upsert(nobody), kExitUnavailable,
                          "error: Unable connect to remote cluster " + nobody + " with error: ");
  EXPECT_EQ(TockJson({"cluster", "list"}).size(), 1u);
}

// Tock replicates only between clusters with equal shard counts: a remote with another
// count is refused at upsert, with Temporal's words when the counts are not multiples and
// Tock's (both counts, the key) when they are; nothing is stored.
TEST_F(RemoteClusterTest, UpsertOfARemoteWithAnotherShardCountIsRefused) {
  server_ = StartCluster("a", 1, {}, /*shards=*/8);
  ASSERT_NE(server_, nullptr);
  const std::string prefix = "Unable connect to remote cluster with invalid config: ";
  for (const int shards : {4, 16}) {
    SCOPED_TRACE(shards);
    std::unique_ptr<ServerProcess> other =
        StartCluster("b" + std::to_string(shards), 2, {}, shards);
    ASSERT_NE(other, nullptr);
    ExpectError(Upsert(other->address()), kExitUsage,
                prefix + "the remote cluster has " + std::to_string(shards) +
                    " history shards and this cluster has 8; Tock replicates only between "
                    "clusters with the same number of history shards (history.shards, fixed "
                    "when a cluster's database is created).");
  }
  std::unique_ptr<ServerProcess> six = StartCluster("c", 3, {}, 6);
  ASSERT_NE(six, nullptr);
  // Temporal's inner message ends in a period, and so does its wrapper.
  ExpectError(Upsert(six->address()), kExitUsage,
              prefix + "Remote cluster shard number and local cluster shard number are not "
                       "multiples..");
  EXPECT_EQ(TockJson({"cluster", "list"}).size(), 1u) << "a refused remote was stored";
}

TEST_F(RemoteClusterTest, UpsertListAndRemoveBetweenTwoServers) {
  ASSERT_NO_FATAL_FAILURE(StartAAndB());
  const std::string b_address = b_->address();
  json b_info = json::parse(
      RunProcess({TOCK_CLI_BIN, "--address", b_address, "cluster", "describe", "-o", "json"}).out,
      nullptr, false);
  ASSERT_TRUE(At(b_info, "/clusterId").is_string()) << b_info.dump();

  ProcessResult r = Tock({"cluster", "upsert", "--frontend-address", b_address, "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "Upserted cluster " + b_address + "\n");
  EXPECT_EQ(r.err, "");

  std::map<std::string, json> clusters = ClustersOfA();
  ASSERT_EQ(clusters.size(), 2u);
  ASSERT_TRUE(clusters.count("a") && clusters.count("b"));
  const json& b = clusters["b"];
  EXPECT_EQ(At(b, "/address"), b_address) << b.dump();
  EXPECT_EQ(At(b, "/initialFailoverVersion"), "2") << b.dump();
  EXPECT_FALSE(At(b, "/clusterId").get<std::string>().empty()) << b.dump();
  EXPECT_EQ(At(b, "/clusterId"), At(b_info, "/clusterId")) << b.dump();
  EXPECT_EQ(At(b, "/historyShardCount"), At(b_info, "/historyShardCount")) << b.dump();
  EXPECT_EQ(At(b, "/isConnectionEnabled"), true) << b.dump();
  EXPECT_EQ(At(b, "/isReplicationEnabled"), true) << b.dump();
  EXPECT_EQ(At(clusters["a"], "/initialFailoverVersion"), "1");

  // The table: b's row in the Temporal CLI's columns.
  r = Tock({"cluster", "list", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  std::vector<std::vector<std::string>> rows = TableCells(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  EXPECT_EQ(rows[0], kClusterListHeader) << r.out;
  EXPECT_EQ(rows[2],
            (std::vector<std::string>{"b", At(b_info, "/clusterId").get<std::string>(), b_address,
                                      std::to_string(At(b_info, "/historyShardCount").get<int>()),
                                      "2", "enabled", "enabled"}))
      << r.out;

  // Upserted again with the connection off: the same cluster, disconnected.
  json upserted =
      TockJson({"cluster", "upsert", "--frontend-address", b_address, "--enable-connection=false"});
  EXPECT_EQ(At(upserted, "/frontendAddress"), b_address) << upserted.dump();
  EXPECT_EQ(At(upserted, "/enableRemoteClusterConnection"), false) << upserted.dump();
  EXPECT_EQ(At(upserted, "/enableReplication"), true) << upserted.dump();
  clusters = ClustersOfA();
  ASSERT_EQ(clusters.size(), 2u);
  EXPECT_EQ(At(clusters["b"], "/isConnectionEnabled"), false) << clusters["b"].dump();
  EXPECT_EQ(At(clusters["b"], "/initialFailoverVersion"), "2");
  EXPECT_EQ(At(clusters["b"], "/clusterId"), At(b_info, "/clusterId"));
  r = Tock({"cluster", "list", "-o", "table"});
  EXPECT_NE(r.out.find("disabled"), std::string::npos) << r.out;

  // Replication status: b's rows in both directions (b is disconnected: nothing pulled).
  r = Tock({"cluster", "replication-status", "--remote", "b", "-o", "jsonl"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  int in_rows = 0, out_rows = 0;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    json row = json::parse(std::string(line));
    EXPECT_EQ(At(row, "/remote"), "b") << line;
    (At(row, "/direction") == "in" ? in_rows : out_rows) += 1;
  }
  EXPECT_GE(in_rows, 1) << r.out;  // the namespace queue at least
  EXPECT_EQ(out_rows, 1 + At(b_info, "/historyShardCount").get<int>()) << r.out;  // a has as many
  r = Tock({"cluster", "replication-status", "--remote", "nosuch"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no remote cluster is named \"nosuch\""), std::string::npos) << r.err;
  EXPECT_EQ(Tock({"__complete", "cluster", "replication-status", "--remote", "b"}).out,
            "b\t" + b_address + "\n");

  // Completion offers the names ListClusters has, with their addresses.
  r = Tock({"__complete", "cluster", "remove", "--name", ""});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("b\t" + b_address + "\n"), std::string::npos) << r.out;
  EXPECT_EQ(Tock({"__complete", "cluster", "remove", "--name", "b"}).out, "b\t" + b_address + "\n");

  r = Tock({"cluster", "remove", "--name", "b", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "Removed cluster b\n");
  clusters = ClustersOfA();
  EXPECT_EQ(clusters.size(), 1u);
  EXPECT_EQ(clusters.count("b"), 0u);
  ExpectError({"cluster", "remove", "--name", "b"}, kExitNotFound,
              "The cluster to be deleted cannot be found in clusters cache.");

  // Added once more, and removed with -o json: the request, as the Temporal CLI prints it.
  r = Tock({"cluster", "upsert", "--frontend-address", b_address, "--enable-replication", "false",
            "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(At(ClustersOfA()["b"], "/isReplicationEnabled"), false);
  EXPECT_EQ(TockJson({"cluster", "remove", "--name", "b"}), (json{{"clusterName", "b"}}));
  EXPECT_EQ(ClustersOfA().size(), 1u);
}

TEST(ClusterDlqInput, FlagsAreCheckedBeforeSending) {
  for (const std::string command : {"read", "purge", "merge"}) {
    std::vector<std::string> base = {"cluster", "dlq", command};
    if (command == "purge") base.push_back("--yes");
    auto with = [&](std::vector<std::string> flags) {
      std::vector<std::string> args = base;
      args.insert(args.end(), flags.begin(), flags.end());
      return args;
    };
    ExpectRefusedBeforeSending(with({"--shard", "-1"}),
                               "--shard must be a shard of the remote (1 or more; 0: every shard)");
    ExpectRefusedBeforeSending(with({"--last-message-id", "-3"}),
                               "--last-message-id must be a task id (1 or more; 0: no bound)");
    ExpectRefusedBeforeSending(with({"--remote", "b\nc"}),
                               "--remote contains a control character (byte 2)");
    ExpectRefusedBeforeSending(with({"--remote", std::string(256, 'r')}),
                               "--remote is 256 bytes long; at most 255");
    ExpectRefusedBeforeSending(with({"--type", "namespace", "--shard", "2"}),
                               "--shard is for the history DLQ: namespace tasks have no shard");
    ProcessResult bad_type = TockWithoutServer(with({"--type", "workflow"}));
    EXPECT_EQ(bad_type.exit_code, kExitUsage) << bad_type.err;
    EXPECT_EQ(bad_type.err.rfind("error: --type: workflow not in {history,namespace}", 0), 0u)
        << bad_type.err;
    ExpectSent(with({"--remote", "b", "--shard", "2", "--last-message-id", "7"}));
    ExpectSent(with({"--type", "namespace", "--remote", "b", "--last-message-id", "7"}));
    ExpectSent(with({"--type", "history", "--shard", "1"}));
    ExpectSent(base);
  }
  ProcessResult r = TockWithoutServer({"cluster", "dlq", "purge", "--remote", "b"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_EQ(r.err,
            "error: refusing to purge the replication DLQ without confirmation: pass --yes "
            "(standard input is not a terminal)\n");
}

// Cluster b pulls from a with every task of one workflow failing (b's test-only faults file):
// the task is in b's DLQ, where `tock cluster dlq` reads it, fails to merge it while the
// fault holds, merges it once it is gone, and purges another.
TEST_F(RemoteClusterTest, DlqReadMergeAndPurgeBetweenTwoServers) {
  const std::string faults = dir_.Write("b-faults.json", R"({"fail_workflow_ids": ["w1"]})");
  server_ = StartCluster("a", 1);
  ASSERT_NE(server_, nullptr);
  b_ = StartCluster("b", 2, {"--replication-faults-file", faults});
  ASSERT_NE(b_, nullptr);
  const std::string b_address = b_->address();
  auto on_b = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", b_address};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, {}, "", std::chrono::seconds(30));
  };
  ASSERT_EQ(Tock(Upsert(b_address)).exit_code, kExitOk);
  ASSERT_EQ(on_b(Upsert(server_->address())).exit_code, kExitOk);
  Register({"pay", "--global", "--clusters", "a,b", "--active-cluster", "a"});
  auto eventually = [](const std::function<bool()>& done) {
    for (int i = 0; i < 200 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return done();
  };
  ASSERT_TRUE(eventually([&] { return on_b({"namespace", "describe", "pay"}).exit_code == kExitOk; }));

  auto start = [&](const std::string& id) {
    ProcessResult r = Tock({"workflow", "start", "-n", "pay", "--type", "t", "--task-queue", "q",
                            "--workflow-id", id});
    ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  };
  auto dlq = [&]() {
    ProcessResult r = on_b({"cluster", "dlq", "read", "--remote", "a", "-o", "json"});
    EXPECT_EQ(r.exit_code, kExitOk) << r.err;
    json rows = json::parse(r.out, nullptr, false);
    return rows.is_array() ? rows : json::array();
  };
  ASSERT_NO_FATAL_FAILURE(start("w1"));
  ASSERT_TRUE(eventually([&] { return dlq().size() == 1; })) << dlq().dump();
  json row = dlq()[0];
  EXPECT_EQ(At(row, "/sourceCluster"), "a");
  EXPECT_EQ(At(row, "/workflowId"), "w1");
  EXPECT_EQ(At(row, "/firstEventId"), "1");
  EXPECT_EQ(At(row, "/version"), "1");
  const int shard = At(row, "/sourceShardId").get<int>();
  EXPECT_GE(shard, 1);
  EXPECT_LE(shard, 4);
  EXPECT_EQ(At(row, "/lastError"), "injected replication fault: every task of workflow w1 fails "
                                   "(fail_workflow_ids)");
  const std::string task_id = At(row, "/taskId").get<std::string>();
  EXPECT_EQ(on_b({"workflow", "describe", "-n", "pay", "--workflow-id", "w1"}).exit_code,
            kExitNotFound);

  ProcessResult r = on_b({"cluster", "dlq", "read", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out.rfind("REMOTE  SHARD  TASK ID  KIND     WORKFLOW ID  RUN ID", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("w1"), std::string::npos) << r.out;
  // The replication status counts it on its shard.
  bool counted = false;
  for (const json& line : ParseJsonLines(
           on_b({"cluster", "replication-status", "--remote", "a", "-o", "jsonl"}).out)) {
    if (line.value("direction", "") == "in" && line.value("shardId", 0) == shard) {
      counted = line.value("dlqTasks", "") == "1";
    }
  }
  EXPECT_TRUE(counted);

  // While the fault holds the merge fails again, says why, and keeps the task.
  r = on_b({"cluster", "dlq", "merge", "--remote", "a", "--shard", std::to_string(shard), "-o",
            "table"});
  EXPECT_EQ(r.exit_code, kExitError) << r.err;
  EXPECT_EQ(r.out.rfind("Merged 0 tasks; 1 remain in the replication DLQ\n", 0), 0u) << r.out;
  EXPECT_EQ(r.err, "error: 1 tasks remain in the replication DLQ (task " + task_id +
                       " of workflow w1: injected replication fault: every task of workflow w1 "
                       "fails (fail_workflow_ids))\n");
  EXPECT_EQ(dlq().size(), 1u);

  // Fault removed: merged, the run is on b.
  dir_.Write("b-faults.json", "{}");
  r = on_b({"cluster", "dlq", "merge", "--remote", "a", "--last-message-id", task_id, "-o", "table"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "Merged 1 tasks; 0 remain in the replication DLQ\n");
  EXPECT_EQ(on_b({"workflow", "describe", "-n", "pay", "--workflow-id", "w1"}).exit_code, kExitOk);
  EXPECT_EQ(dlq(), json::array());

  // Purged: gone, never applied.
  dir_.Write("b-faults.json", R"({"fail_workflow_ids": ["w2"]})");
  ASSERT_NO_FATAL_FAILURE(start("w2"));
  ASSERT_TRUE(eventually([&] { return dlq().size() == 1; })) << dlq().dump();
  r = on_b({"cluster", "dlq", "purge", "--remote", "a", "--yes", "-o", "table"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "Purged 1 tasks from the replication DLQ\n");
  EXPECT_EQ(dlq(), json::array());
  r = on_b({"cluster", "dlq", "read", "-o", "table"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "The replication DLQ is empty.\n");

  r = on_b({"cluster", "dlq", "read", "--remote", "nosuch"});
  EXPECT_EQ(r.exit_code, kExitNotFound) << r.err;
  EXPECT_EQ(r.err, "error: no remote cluster is named \"nosuch\" (tock cluster list shows them)\n");
  EXPECT_EQ(on_b({"__complete", "cluster", "dlq", "merge", "--remote", "a"}).out,
            "a\t" + server_->address() + "\n");
}

// Namespace replication to b with every task of one namespace failing (b's test-only faults
// file): after 30 failed pulls in a row (about 30 s) the task is in b's namespace DLQ and the
// namespace changes behind it reach b; `tock cluster dlq --type namespace` reads it, fails to
// merge it while the fault holds, merges it once it is gone; a task b refuses as malformed (a
// name bound to another id here) goes to the DLQ at once and is purged.
TEST_F(RemoteClusterTest, NamespaceDlqReadMergeAndPurgeBetweenTwoServers) {
  const std::string faults = dir_.Write("b-faults.json", R"({"fail_namespaces": ["ns1"]})");
  server_ = StartCluster("a", 1);
  ASSERT_NE(server_, nullptr);
  b_ = StartCluster("b", 2, {"--replication-faults-file", faults});
  ASSERT_NE(b_, nullptr);
  const std::string b_address = b_->address();
  auto on_b = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", b_address};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, {}, "", std::chrono::seconds(30));
  };
  ASSERT_EQ(Tock(Upsert(b_address)).exit_code, kExitOk);
  ASSERT_EQ(on_b(Upsert(server_->address())).exit_code, kExitOk);
  // Bounded: 600 tries 100 ms apart (the 30 attempts take about 30 s).
  auto eventually = [](const std::function<bool()>& done) {
    for (int i = 0; i < 600 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return done();
  };
  auto dlq = [&]() {
    ProcessResult r = on_b({"cluster", "dlq", "read", "--type", "namespace", "-o", "json"});
    EXPECT_EQ(r.exit_code, kExitOk) << r.err;
    json rows = json::parse(r.out, nullptr, false);
    return rows.is_array() ? rows : json::array();
  };
  Register({"ns1", "--global", "--clusters", "a,b", "--active-cluster", "a"});
  Register({"ns2", "--global", "--clusters", "a,b", "--active-cluster", "a"});
  // Not blocked for good: ns2, queued behind ns1, reaches b once ns1's task is set aside.
  ASSERT_TRUE(eventually([&] { return on_b({"namespace", "describe", "ns2"}).exit_code == kExitOk; }));
  ASSERT_EQ(dlq().size(), 1u) << dlq().dump();
  json row = dlq()[0];
  EXPECT_EQ(At(row, "/kind"), "DLQ_TASK_KIND_NAMESPACE");
  EXPECT_EQ(At(row, "/sourceCluster"), "a");
  EXPECT_EQ(At(row, "/namespaceName"), "ns1");
  EXPECT_EQ(At(row, "/operation"), "register");
  EXPECT_EQ(At(row, "/lastError"),
            "injected replication fault: every task of namespace ns1 fails (fail_namespaces)");
  const std::string task_id = At(row, "/taskId").get<std::string>();
  EXPECT_EQ(on_b({"namespace", "describe", "ns1"}).exit_code, kExitNotFound);
  EXPECT_EQ(json::parse(on_b({"cluster", "dlq", "read", "-o", "json"}).out, nullptr, false),
            json::array())
      << "the history DLQ is another queue";

  ProcessResult r = on_b({"cluster", "dlq", "read", "--type", "namespace", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out.rfind("REMOTE  TASK ID  NAMESPACE  OPERATION  CONFIG VERSION  FAILOVER VERSION", 0), 0u)
      << r.out;
  EXPECT_NE(r.out.find("ns1"), std::string::npos) << r.out;
  bool counted = false;
  for (const json& line : ParseJsonLines(
           on_b({"cluster", "replication-status", "--remote", "a", "-o", "jsonl"}).out)) {
    if (line.value("direction", "") == "in" && line.value("queue", "") == "namespaces") {
      counted = line.value("dlqTasks", 0) == 1;
    }
  }
  EXPECT_TRUE(counted);

  // While the fault holds the merge fails again and keeps the task.
  r = on_b({"cluster", "dlq", "merge", "--type", "namespace", "--remote", "a", "-o", "table"});
  EXPECT_EQ(r.exit_code, kExitError) << r.err;
  EXPECT_EQ(r.out.rfind("Merged 0 tasks; 1 remain in the replication DLQ\n", 0), 0u) << r.out;
  EXPECT_EQ(r.err, "error: 1 tasks remain in the replication DLQ (task " + task_id +
                       " of namespace ns1: injected replication fault: every task of namespace "
                       "ns1 fails (fail_namespaces))\n");
  EXPECT_EQ(dlq().size(), 1u);

  // Fault removed: merged, ns1 is on b, global, as a has it.
  dir_.Write("b-faults.json", "{}");
  r = on_b({"cluster", "dlq", "merge", "--type", "namespace", "--remote", "a", "-o", "table"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "Merged 1 tasks; 0 remain in the replication DLQ\n");
  r = on_b({"namespace", "describe", "ns1", "-o", "json"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(At(json::parse(r.out), "/isGlobalNamespace"), true);
  EXPECT_EQ(dlq(), json::array());

  // A name bound to another id on b: refused as malformed, set aside at once, then purged.
  ASSERT_EQ(on_b({"namespace", "register", "ns3"}).exit_code, kExitOk);
  Register({"ns3", "--global", "--clusters", "a,b", "--active-cluster", "a"});
  ASSERT_TRUE(eventually([&] { return dlq().size() == 1; })) << dlq().dump();
  EXPECT_EQ(At(dlq()[0], "/namespaceName"), "ns3");
  r = on_b({"cluster", "dlq", "purge", "--type", "namespace", "--remote", "a", "--yes", "-o", "table"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "Purged 1 tasks from the replication DLQ\n");
  EXPECT_EQ(dlq(), json::array());
  r = on_b({"cluster", "dlq", "read", "--type", "namespace", "--remote", "nosuch"});
  EXPECT_EQ(r.exit_code, kExitNotFound) << r.err;
}

TEST_F(RemoteClusterTest, ClusterOfANamespaceIsNotRemoved) {
  ASSERT_NO_FATAL_FAILURE(StartAAndB());
  ProcessResult r = Tock(Upsert(b_->address()));
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  Register({"ns", "--global", "--clusters", "a,b", "--active-cluster", "a"});
  ExpectError({"cluster", "remove", "--name", "b"}, kExitError,
              "cannot remove cluster \"b\": still referenced by namespace \"ns\"");
  EXPECT_EQ(ClustersOfA().count("b"), 1u);
}

// `namespace update --replication-state` and `namespace failover --graceful` (reference/
// replication.md §4.6): what is refused before anything is sent.
TEST(NamespaceHandoverInput, FlagsAreCheckedBeforeSending) {
  ProcessResult r = TockWithoutServer({"namespace", "update", "ns", "--replication-state", "paused"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_EQ(r.err.rfind("error: --replication-state: paused not in {normal,handover}\n", 0), 0u)
      << r.err;
  ExpectSent({"namespace", "update", "ns", "--replication-state", "handover"});
  ExpectSent({"namespace", "update", "ns", "--replication-state", "normal"});

  r = TockWithoutServer({"namespace", "failover", "ns", "--to", "b", "--handover-timeout", "5s"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_EQ(r.err.rfind("error: --handover-timeout requires --graceful\n", 0), 0u) << r.err;
  for (const std::string bad : {"0s", "soon", "-5s"}) {
    ExpectRefusedBeforeSending(
        {"namespace", "failover", "ns", "--to", "b", "--graceful", "--handover-timeout", bad},
        "invalid --handover-timeout \"" + bad + "\": use a positive duration such as 30s or 2m");
  }
  ExpectSent({"namespace", "failover", "ns", "--to", "b", "--graceful"});
  ExpectSent({"namespace", "failover", "ns", "--to", "b", "--graceful", "--handover-timeout", "1m"});
}

// A graceful failover between two servers: HANDOVER on a, then b active, NORMAL on both.
TEST_F(RemoteClusterTest, GracefulFailoverHandsOverToB) {
  ASSERT_NO_FATAL_FAILURE(StartAAndB());
  const std::vector<std::string> on_b = {TOCK_CLI_BIN, "--address", b_->address()};
  auto tock_b = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = on_b;
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  };
  ASSERT_EQ(Tock(Upsert(b_->address())).exit_code, kExitOk);
  ASSERT_EQ(tock_b(Upsert(server_->address())).exit_code, kExitOk);
  Register({"pay", "--global", "--clusters", "a,b", "--active-cluster", "a"});
  auto described_on_b = [&]() {
    ProcessResult r = tock_b({"namespace", "describe", "pay", "-o", "json"});
    return r.exit_code == kExitOk ? json::parse(r.out, nullptr, false) : json();
  };
  auto wait_on_b = [&](const std::function<bool(const json&)>& done) {
    for (int i = 0; i < 100; ++i) {
      if (json d = described_on_b(); !d.is_null() && done(d)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  ASSERT_TRUE(wait_on_b([](const json&) { return true; })) << "pay never reached b";

  // By hand: HANDOVER on a, and back.
  json handover = TockJson({"namespace", "update", "pay", "--replication-state", "handover"});
  EXPECT_EQ(At(handover, "/replicationConfig/state"), "REPLICATION_STATE_HANDOVER");
  json normal = TockJson({"namespace", "update", "pay", "--replication-state", "normal"});
  EXPECT_EQ(At(normal, "/replicationConfig/state"), "REPLICATION_STATE_NORMAL");

  // From b (the standby) it is refused; from a it hands over.
  ProcessResult r = tock_b({"namespace", "failover", "pay", "--to", "b", "--graceful"});
  EXPECT_EQ(r.exit_code, kExitError) << r.err;
  EXPECT_EQ(r.err,
            "error: namespace pay is active in cluster a, and this is cluster b: a graceful "
            "failover holds the writes where they are made, so run it against cluster a "
            "(--address)\n");
  ExpectError({"namespace", "failover", "pay", "--to", "c", "--graceful"}, kExitUsage,
              "cluster c is not a cluster of namespace pay (a, b)");
  json failed_over = TockJson({"namespace", "failover", "pay", "--to", "b", "--graceful"});
  EXPECT_EQ(At(failed_over, "/replicationConfig/activeClusterName"), "b");
  EXPECT_EQ(At(failed_over, "/replicationConfig/state"), "REPLICATION_STATE_NORMAL");
  EXPECT_EQ(At(failed_over, "/failoverVersion"), "2");
  EXPECT_TRUE(wait_on_b([](const json& d) {
    return At(d, "/replicationConfig/activeClusterName") == "b" &&
           At(d, "/replicationConfig/state") == "REPLICATION_STATE_NORMAL";
  })) << described_on_b().dump();
  // Already active there: nothing to do.
  json again = TockJson({"namespace", "failover", "pay", "--to", "b", "--graceful"});
  EXPECT_EQ(At(again, "/failoverVersion"), "2");
}

}  // namespace
}  // namespace tock::testing
