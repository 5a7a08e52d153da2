// Cluster metadata validation (SPEC §2.1) and failover versions (SPEC §2.2, seed 002's
// example: cluster a initial version 1, cluster b initial version 2, increment 10).
#include "lib/admin/cluster_metadata.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "tests/support/fixtures.h"

namespace tock::admin {
namespace {

TEST(FailoverVersionTest, SeedFixtureIsTheSeedExample) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  EXPECT_EQ(m.failover_version_increment, 10);
  EXPECT_EQ(m.clusters.at("a").initial_failover_version, 1);
  EXPECT_EQ(m.clusters.at("b").initial_failover_version, 2);
  EXPECT_TRUE(m.Validate().ok()) << m.Validate();
}

TEST(FailoverVersionTest, AlphaRegisteredOnAFailsOverToB) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  int64_t alpha = m.NextFailoverVersion("a", 0);
  EXPECT_EQ(alpha, 1);
  EXPECT_EQ(m.NextFailoverVersion("b", alpha), 2);
}

TEST(FailoverVersionTest, BetaRegisteredOnBFailsOverToAThenBackToB) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  int64_t beta = m.NextFailoverVersion("b", 0);
  EXPECT_EQ(beta, 2);
  int64_t on_a = m.NextFailoverVersion("a", beta);
  EXPECT_EQ(on_a, 11);
  int64_t back_on_b = m.NextFailoverVersion("b", on_a);
  EXPECT_EQ(back_on_b, 12);
  EXPECT_EQ(m.NextFailoverVersion("a", back_on_b), 21);
}

TEST(FailoverVersionTest, VersionsNeverGoBackwards) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  // Failing over to the cluster that already owns the version keeps it.
  EXPECT_EQ(m.NextFailoverVersion("a", 11), 11);
  EXPECT_EQ(m.NextFailoverVersion("b", 12), 12);
  // A version from a third cluster's slot (5) still moves forward, into a's or b's slot.
  EXPECT_EQ(m.NextFailoverVersion("a", 15), 21);
  EXPECT_EQ(m.NextFailoverVersion("b", 15), 22);
  EXPECT_EQ(m.NextFailoverVersion("b", 1001), 1002);
  EXPECT_EQ(m.NextFailoverVersion("a", 1002), 1011);
}

TEST(FailoverVersionTest, ClusterForFailoverVersion) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  EXPECT_EQ(m.ClusterForFailoverVersion(0), "a") << "a local namespace is the current cluster's";
  EXPECT_EQ(m.ClusterForFailoverVersion(1), "a");
  EXPECT_EQ(m.ClusterForFailoverVersion(2), "b");
  EXPECT_EQ(m.ClusterForFailoverVersion(11), "a");
  EXPECT_EQ(m.ClusterForFailoverVersion(12), "b");
  EXPECT_EQ(m.ClusterForFailoverVersion(1002), "b");
  EXPECT_EQ(m.ClusterForFailoverVersion(25), "unknown-cluster-5");
  EXPECT_EQ(m.ClusterForFailoverVersion(30), "unknown-cluster-0");
  EXPECT_EQ(testing::SeedClusterMetadata("b").ClusterForFailoverVersion(0), "b");
}

TEST(FailoverVersionTest, IsActiveForFromEachClustersSide) {
  ClusterMetadata on_a = testing::SeedClusterMetadata("a");
  ClusterMetadata on_b = testing::SeedClusterMetadata("b");
  for (int64_t v : {1, 11, 21}) {
    EXPECT_TRUE(on_a.IsActiveFor(v)) << v;
    EXPECT_FALSE(on_b.IsActiveFor(v)) << v;
  }
  for (int64_t v : {2, 12, 1002}) {
    EXPECT_FALSE(on_a.IsActiveFor(v)) << v;
    EXPECT_TRUE(on_b.IsActiveFor(v)) << v;
  }
  // Version 0 is a local namespace: active wherever it lives.
  EXPECT_TRUE(on_a.IsActiveFor(0));
  EXPECT_TRUE(on_b.IsActiveFor(0));
  // A version no cluster owns is active nowhere.
  EXPECT_FALSE(on_a.IsActiveFor(15));
  EXPECT_FALSE(on_b.IsActiveFor(15));
}

// The message names the field first: "cluster_metadata.<field>: <problem>".
void ExpectFieldError(const ClusterMetadata& m, const std::string& field) {
  absl::Status s = m.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << field << ": " << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), "cluster_metadata." + field + ": "))
      << "want field " << field << ", got: " << s.message();
}

TEST(ClusterMetadataValidationTest, InitialVersionMustBePositive) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  m.clusters["b"].initial_failover_version = 0;
  ExpectFieldError(m, "clusters.b.initial_failover_version");
  EXPECT_EQ(m.Validate().message(),
            "cluster_metadata.clusters.b.initial_failover_version: must be greater than 0 and "
            "less than failover_version_increment (10); got 0");
  m.clusters["b"].initial_failover_version = -2;
  ExpectFieldError(m, "clusters.b.initial_failover_version");
}

TEST(ClusterMetadataValidationTest, InitialVersionMustBeBelowTheIncrement) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  m.clusters["b"].initial_failover_version = 10;
  ExpectFieldError(m, "clusters.b.initial_failover_version");
  m.clusters["b"].initial_failover_version = 11;
  ExpectFieldError(m, "clusters.b.initial_failover_version");
  m.clusters["b"].initial_failover_version = 9;
  EXPECT_TRUE(m.Validate().ok()) << m.Validate();
}

TEST(ClusterMetadataValidationTest, InitialVersionsMustBeUnique) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  m.clusters["b"].initial_failover_version = 1;  // a's
  ExpectFieldError(m, "clusters.b.initial_failover_version");
  EXPECT_EQ(m.Validate().message(),
            "cluster_metadata.clusters.b.initial_failover_version: 1 is already used by another "
            "cluster; each cluster needs its own initial failover version");
}

TEST(ClusterMetadataValidationTest, CurrentClusterMustBeSetAndListed) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  m.current_cluster_name = "";
  ExpectFieldError(m, "current_cluster_name");
  m.current_cluster_name = "c";
  ExpectFieldError(m, "current_cluster_name");
  EXPECT_EQ(m.Validate().message(),
            "cluster_metadata.current_cluster_name: \"c\" is not listed in clusters");
}

TEST(ClusterMetadataValidationTest, CurrentClusterMustBeEnabled) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  m.clusters["a"].enabled = false;
  ExpectFieldError(m, "current_cluster_name");
}

TEST(ClusterMetadataValidationTest, MasterClusterMustBeSetAndListed) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  m.master_cluster_name = "";
  ExpectFieldError(m, "master_cluster_name");
  m.master_cluster_name = "c";
  ExpectFieldError(m, "master_cluster_name");
  EXPECT_EQ(m.Validate().message(),
            "cluster_metadata.master_cluster_name: \"c\" is not listed in clusters");
  m.master_cluster_name = "b";
  EXPECT_TRUE(m.Validate().ok()) << m.Validate();
}

TEST(ClusterMetadataValidationTest, IncrementMustBeInRange) {
  for (int64_t bad : {int64_t{0}, int64_t{-10}, int64_t{2147483648}}) {
    ClusterMetadata m = testing::SeedClusterMetadata();
    m.failover_version_increment = bad;
    ExpectFieldError(m, "failover_version_increment");
  }
  ClusterMetadata m = testing::SeedClusterMetadata();
  m.failover_version_increment = 0;
  EXPECT_EQ(m.Validate().message(),
            "cluster_metadata.failover_version_increment: must be between 1 and 2147483647; "
            "got 0");
  m.failover_version_increment = 2147483647;
  EXPECT_TRUE(m.Validate().ok()) << m.Validate();
  // An increment of 2 leaves room only for initial version 1.
  m.failover_version_increment = 2;
  ExpectFieldError(m, "clusters.b.initial_failover_version");
}

TEST(ClusterMetadataValidationTest, EnabledClustersNeedAnRpcAddress) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  m.clusters["b"].rpc_address = "";
  ExpectFieldError(m, "clusters.b.rpc_address");
  EXPECT_EQ(m.Validate().message(),
            "cluster_metadata.clusters.b.rpc_address: is required for an enabled cluster");
  m.clusters["b"].enabled = false;
  EXPECT_TRUE(m.Validate().ok()) << "a disabled cluster needs no address: " << m.Validate();
}

TEST(ClusterMetadataValidationTest, AtLeastOneNamedCluster) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  m.clusters.clear();
  ExpectFieldError(m, "clusters");
  m = testing::SeedClusterMetadata();
  m.clusters[""] = {true, 3, "127.0.0.1:7235"};
  ExpectFieldError(m, "clusters");
}

TEST(ClusterMetadataValidationTest, SingleClusterDefaultIsValid) {
  ClusterMetadata m = ClusterMetadata::SingleCluster("active", "127.0.0.1:7233");
  EXPECT_TRUE(m.Validate().ok()) << m.Validate();
  EXPECT_TRUE(m.IsMasterCluster());
  EXPECT_FALSE(m.enable_global_namespace);
  EXPECT_EQ(m.failover_version_increment, 10);
  EXPECT_EQ(m.clusters.at("active").initial_failover_version, 1);
  EXPECT_EQ(m.clusters.at("active").rpc_address, "127.0.0.1:7233");
  EXPECT_FALSE(testing::SeedClusterMetadata("b").IsMasterCluster());
}

}  // namespace
}  // namespace tock::admin
