// Cluster metadata validation (SPEC §2.1) and failover versions from seed 002's example.
#include "lib/admin/cluster_metadata.h"

#include <gtest/gtest.h>

#include "tests/support/fixtures.h"

namespace tock::admin {
namespace {

TEST(FailoverVersionTest, SeedExample) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  ASSERT_TRUE(m.Validate().ok());
  // alpha registered on A -> 1, fails over to B -> 2.
  int64_t alpha = m.NextFailoverVersion("a", 0);
  EXPECT_EQ(alpha, 1);
  EXPECT_EQ(m.NextFailoverVersion("b", alpha), 2);
  // beta registered on B -> 2, fails over to A -> 11, then to B -> 12.
  int64_t beta = m.NextFailoverVersion("b", 0);
  EXPECT_EQ(beta, 2);
  int64_t to_a = m.NextFailoverVersion("a", beta);
  EXPECT_EQ(to_a, 11);
  EXPECT_EQ(m.NextFailoverVersion("b", to_a), 12);
  // Failing over to the cluster that already owns the version keeps it.
  EXPECT_EQ(m.NextFailoverVersion("a", 11), 11);
}

TEST(FailoverVersionTest, OwnerOfAVersion) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  EXPECT_EQ(m.ClusterForFailoverVersion(0), "a");
  EXPECT_EQ(m.ClusterForFailoverVersion(1), "a");
  EXPECT_EQ(m.ClusterForFailoverVersion(12), "b");
  EXPECT_EQ(m.ClusterForFailoverVersion(25), "unknown-cluster-5");
  EXPECT_TRUE(m.IsActiveFor(11));
  EXPECT_FALSE(m.IsActiveFor(12));
}

void ExpectFieldError(const ClusterMetadata& m, const std::string& field) {
  absl::Status s = m.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << field;
  EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
}

TEST(ClusterMetadataTest, EveryRuleNamesItsField) {
  ClusterMetadata m = testing::SeedClusterMetadata();
  m.clusters["b"].initial_failover_version = 10;
  ExpectFieldError(m, "cluster_metadata.clusters.b.initial_failover_version");
  m.clusters["b"].initial_failover_version = 0;
  ExpectFieldError(m, "cluster_metadata.clusters.b.initial_failover_version");
  m.clusters["b"].initial_failover_version = 1;
  ExpectFieldError(m, "initial_failover_version");  // duplicate of a's

  m = testing::SeedClusterMetadata();
  m.current_cluster_name = "c";
  ExpectFieldError(m, "cluster_metadata.current_cluster_name");
  m = testing::SeedClusterMetadata();
  m.master_cluster_name = "c";
  ExpectFieldError(m, "cluster_metadata.master_cluster_name");
  m = testing::SeedClusterMetadata();
  m.master_cluster_name = "";
  ExpectFieldError(m, "cluster_metadata.master_cluster_name");
  m = testing::SeedClusterMetadata();
  m.failover_version_increment = 0;
  ExpectFieldError(m, "cluster_metadata.failover_version_increment");
  m = testing::SeedClusterMetadata();
  m.clusters["b"].rpc_address = "";
  ExpectFieldError(m, "cluster_metadata.clusters.b.rpc_address");
  m.clusters["b"].enabled = false;
  EXPECT_TRUE(m.Validate().ok()) << "a disabled cluster needs no address";
  m = testing::SeedClusterMetadata();
  m.clusters.clear();
  ExpectFieldError(m, "cluster_metadata.clusters");
}

TEST(ClusterMetadataTest, SingleClusterDefaultIsValid) {
  ClusterMetadata m = ClusterMetadata::SingleCluster("active", "127.0.0.1:7233");
  EXPECT_TRUE(m.Validate().ok());
  EXPECT_TRUE(m.IsMasterCluster());
  EXPECT_FALSE(m.enable_global_namespace);
}

}  // namespace
}  // namespace tock::admin
