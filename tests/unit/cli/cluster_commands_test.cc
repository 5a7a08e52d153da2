// `tock cluster ...` against the fake frontend, with and without Tock's AdminService.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/cli/fake_frontend.h"

namespace tock::cli::testing {
namespace {

using nlohmann::json;

class ClusterCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fake_.ok());
    for (auto [name, version] : {std::pair{"a", 1}, std::pair{"b", 2}, std::pair{"c", 3}}) {
      op::ClusterMetadata m;
      m.set_cluster_name(name);
      m.set_address(std::string(name) + ".example:7233");
      m.set_initial_failover_version(version);
      m.set_is_connection_enabled(true);
      fake_.state.clusters.push_back(m);
    }
  }

  CliResult Tock(std::vector<std::string> args) {
    args.insert(args.begin(), {"--address", fake_.address()});
    return RunTock(args);
  }

  FakeFrontend fake_;
};

TEST_F(ClusterCommandsTest, DescribeOnATemporalServerHasNoTockPart) {
  CliResult r = Tock({"cluster", "describe", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  json cluster = json::parse(r.out);
  EXPECT_EQ(cluster["clusterName"], "active");
  EXPECT_EQ(cluster["failoverVersionIncrement"], "10");
  EXPECT_FALSE(cluster.contains("tock")) << "UNIMPLEMENTED AdminService is not an error";
}

TEST_F(ClusterCommandsTest, DescribeOnTockAddsItsOwnView) {
  fake_.state.tock_admin = true;
  CliResult r = Tock({"cluster", "describe", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  json cluster = json::parse(r.out);
  EXPECT_EQ(cluster["tock"]["masterClusterName"], "active");
  EXPECT_EQ(cluster["tock"]["enableGlobalNamespace"], true);

  CliResult card = Tock({"cluster", "describe", "-o", "card"});
  EXPECT_NE(card.out.find("Cluster:                     active\n"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("Global namespaces:           enabled\n"), std::string::npos)
      << card.out;
  EXPECT_NE(card.out.find("active (initial version 1, 127.0.0.1:7233)"), std::string::npos)
      << card.out;
}

TEST_F(ClusterCommandsTest, ListFollowsEveryPage) {
  CliResult jsonl = Tock({"cluster", "list", "-o", "jsonl"});
  ASSERT_EQ(jsonl.code, 0) << jsonl.err;
  EXPECT_EQ(std::count(jsonl.out.begin(), jsonl.out.end(), '\n'), 3);
  EXPECT_EQ(fake_.state.CallCount("ListClusters"), 3) << "one cluster per page";

  json all = json::parse(Tock({"cluster", "list", "-o", "json"}).out);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1]["clusterName"], "b");
  EXPECT_EQ(all[1]["initialFailoverVersion"], "2");

  CliResult table = Tock({"cluster", "list", "-o", "table"});
  EXPECT_EQ(table.out,
            "NAME  ADDRESS         INITIAL FAILOVER VERSION  ENABLED  REPLICATION\n"
            "a     a.example:7233  1                         yes      no\n"
            "b     b.example:7233  2                         yes      no\n"
            "c     c.example:7233  3                         yes      no\n");
}

}  // namespace
}  // namespace tock::cli::testing
