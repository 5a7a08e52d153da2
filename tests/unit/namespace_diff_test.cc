// Differences between namespace versions (lib/admin/namespace_diff.h), as `tock namespace
// history` shows them.
#include "lib/admin/namespace_diff.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace tock::admin {

// Readable failure messages (found by gtest through ADL, so outside the anonymous namespace).
void PrintTo(const FieldChange& c, std::ostream* os) {
  *os << "{" << c.field << ": \"" << c.before << "\" -> \"" << c.after << "\"}";
}

namespace {

using tock::persistence::v1::NamespaceRecord;

NamespaceRecord Record() {
  NamespaceRecord r;
  r.mutable_info()->set_name("orders");
  r.mutable_info()->set_id("9a1b1a3e-6f2f-4c36-9d8a-0f2c4f1d7e21");
  r.mutable_info()->set_state(temporal::api::enums::v1::NAMESPACE_STATE_REGISTERED);
  r.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(2 * 86400);
  r.mutable_replication_config()->set_active_cluster_name("a");
  r.mutable_replication_config()->add_clusters()->set_cluster_name("a");
  r.set_failover_version(1);
  r.set_config_version(1);
  return r;
}

TEST(NamespaceDiffTest, IdenticalRecordsHaveNoChange) {
  EXPECT_EQ(DiffNamespaceRecords(Record(), Record()), std::vector<FieldChange>{});
  EXPECT_EQ(SummarizeChanges({}), "no change");
}

TEST(NamespaceDiffTest, RetentionAndDescription) {
  NamespaceRecord before = Record();
  NamespaceRecord after = Record();
  after.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(3 * 86400);
  after.mutable_info()->set_description("orders");
  std::vector<FieldChange> changes = DiffNamespaceRecords(before, after);
  EXPECT_EQ(changes, (std::vector<FieldChange>{
                         {"config.workflowExecutionRetentionTtl", "2d", "3d"},
                         {"info.description", "", "orders"},
                     }));
  EXPECT_EQ(SummarizeChanges(changes),
            "config.workflowExecutionRetentionTtl: 2d -> 3d; info.description: \"\" -> \"orders\"");
}

TEST(NamespaceDiffTest, DurationsReadAsOperatorsWriteThem) {
  NamespaceRecord before = Record();
  NamespaceRecord after = Record();
  after.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(36 * 3600);
  EXPECT_EQ(DiffNamespaceRecords(before, after),
            (std::vector<FieldChange>{{"config.workflowExecutionRetentionTtl", "2d", "1d12h"}}));
  // Fractions are exact (259200.5s is 3 days and half a second, not a rounded double).
  after.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(259200);
  after.mutable_config()->mutable_workflow_execution_retention_ttl()->set_nanos(500'000'000);
  EXPECT_EQ(DiffNamespaceRecords(before, after),
            (std::vector<FieldChange>{{"config.workflowExecutionRetentionTtl", "2d", "3d500ms"}}));
  after.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(0);
  after.mutable_config()->mutable_workflow_execution_retention_ttl()->set_nanos(100'000'000);
  EXPECT_EQ(DiffNamespaceRecords(before, after),
            (std::vector<FieldChange>{{"config.workflowExecutionRetentionTtl", "2d", "100ms"}}));
}

TEST(NamespaceDiffTest, OnlyDurationFieldsAreHumanized) {
  // A data value or description that happens to look like a duration stays verbatim.
  NamespaceRecord before = Record();
  NamespaceRecord after = Record();
  (*after.mutable_info()->mutable_data())["timeout"] = "86400s";
  after.mutable_info()->set_description("60s");
  std::vector<FieldChange> changes = DiffNamespaceRecords(before, after);
  EXPECT_EQ(changes, (std::vector<FieldChange>{{"info.data.timeout", "", "86400s"},
                                               {"info.description", "", "60s"}}));
  EXPECT_EQ(SummarizeChanges(changes),
            "info.data.timeout: \"\" -> \"86400s\"; info.description: \"\" -> \"60s\"");
}

TEST(NamespaceDiffTest, EnumNumbersAndBooleansAreShownBare) {
  NamespaceRecord before = Record();
  NamespaceRecord after = Record();
  after.mutable_info()->set_state(temporal::api::enums::v1::NAMESPACE_STATE_DEPRECATED);
  after.set_is_global_namespace(true);
  after.set_failover_version(2);
  std::vector<FieldChange> changes = DiffNamespaceRecords(before, after);
  EXPECT_EQ(changes, (std::vector<FieldChange>{
                         {"failoverVersion", "1", "2"},
                         {"info.state", "NAMESPACE_STATE_REGISTERED", "NAMESPACE_STATE_DEPRECATED"},
                         {"isGlobalNamespace", "false", "true"},
                     }));
  EXPECT_EQ(SummarizeChanges(changes),
            "failoverVersion: 1 -> 2; info.state: NAMESPACE_STATE_REGISTERED -> "
            "NAMESPACE_STATE_DEPRECATED; isGlobalNamespace: false -> true");
}

TEST(NamespaceDiffTest, FailoverComparesTheVersionNotTheHistory) {
  NamespaceRecord before = Record();
  before.add_failover_history()->set_failover_version(1);
  NamespaceRecord after = before;
  after.mutable_replication_config()->set_active_cluster_name("b");
  after.set_failover_version(2);
  after.set_config_version(2);  // bookkeeping, not shown
  auto* entry = after.add_failover_history();
  entry->set_failover_version(2);
  entry->mutable_failover_time()->set_seconds(1'763'800'000);
  std::vector<FieldChange> changes = DiffNamespaceRecords(before, after);
  EXPECT_EQ(changes, (std::vector<FieldChange>{
                         {"failoverVersion", "1", "2"},
                         {"replicationConfig.activeClusterName", "a", "b"},
                     }));
  EXPECT_EQ(SummarizeChanges(changes),
            "failoverVersion: 1 -> 2; replicationConfig.activeClusterName: \"a\" -> \"b\"");

  // History entries and the config version alone are no change at all.
  NamespaceRecord only_history = before;
  only_history.add_failover_history()->set_failover_version(99);
  only_history.set_config_version(42);
  EXPECT_EQ(DiffNamespaceRecords(before, only_history), std::vector<FieldChange>{});
}

TEST(NamespaceDiffTest, AddedAndRemovedListEntriesAndMapKeys) {
  NamespaceRecord before = Record();
  (*before.mutable_info()->mutable_data())["team"] = "payments";
  NamespaceRecord after = Record();
  after.mutable_replication_config()->add_clusters()->set_cluster_name("b");
  after.mutable_info()->set_owner_email("ops@example.com");
  std::vector<FieldChange> changes = DiffNamespaceRecords(before, after);
  EXPECT_EQ(changes, (std::vector<FieldChange>{
                         {"info.data.team", "payments", ""},
                         {"info.ownerEmail", "", "ops@example.com"},
                         {"replicationConfig.clusters[1].clusterName", "", "b"},
                     }));
  EXPECT_EQ(SummarizeChanges(changes),
            "info.data.team: \"payments\" -> \"\"; info.ownerEmail: \"\" -> \"ops@example.com\"; "
            "replicationConfig.clusters[1].clusterName: \"\" -> \"b\"");
  // And back: the removal mirrors the addition.
  EXPECT_EQ(DiffNamespaceRecords(after, before),
            (std::vector<FieldChange>{
                {"info.data.team", "", "payments"},
                {"info.ownerEmail", "ops@example.com", ""},
                {"replicationConfig.clusters[1].clusterName", "b", ""},
            }));
}

TEST(NamespaceDiffTest, ListIndexesSortNumerically) {
  NamespaceRecord before = Record();
  NamespaceRecord after = Record();
  for (int i = 1; i <= 11; ++i) {
    after.mutable_replication_config()->add_clusters()->set_cluster_name("c" + std::to_string(i));
  }
  std::vector<FieldChange> changes = DiffNamespaceRecords(before, after);
  ASSERT_EQ(changes.size(), 11u);
  EXPECT_EQ(changes[0].field, "replicationConfig.clusters[1].clusterName");
  EXPECT_EQ(changes[1].field, "replicationConfig.clusters[2].clusterName");
  EXPECT_EQ(changes[8].field, "replicationConfig.clusters[9].clusterName");
  EXPECT_EQ(changes[9].field, "replicationConfig.clusters[10].clusterName");
  EXPECT_EQ(changes[10], (FieldChange{"replicationConfig.clusters[11].clusterName", "", "c11"}));
}

TEST(NamespaceDiffTest, FirstVersionAgainstAnEmptyRecordListsTheWholeRecord) {
  // Absent and empty read the same (""), so the empty strings protobuf prints for the
  // description, owner and URIs are no change; everything else is.
  std::vector<FieldChange> changes = DiffNamespaceRecords(NamespaceRecord(), Record());
  EXPECT_EQ(changes, (std::vector<FieldChange>{
                         {"config.historyArchivalState", "", "ARCHIVAL_STATE_UNSPECIFIED"},
                         {"config.visibilityArchivalState", "", "ARCHIVAL_STATE_UNSPECIFIED"},
                         {"config.workflowExecutionRetentionTtl", "", "2d"},
                         {"failoverVersion", "0", "1"},
                         {"info.id", "", "9a1b1a3e-6f2f-4c36-9d8a-0f2c4f1d7e21"},
                         {"info.name", "", "orders"},
                         {"info.state", "", "NAMESPACE_STATE_REGISTERED"},
                         {"info.supportsSchedules", "", "false"},
                         {"replicationConfig.activeClusterName", "", "a"},
                         {"replicationConfig.clusters[0].clusterName", "", "a"},
                         {"replicationConfig.state", "", "REPLICATION_STATE_UNSPECIFIED"},
                     }));
}

TEST(NamespaceDiffTest, SummaryEscapesQuotesAndBackslashes) {
  NamespaceRecord before = Record();
  NamespaceRecord after = Record();
  after.mutable_info()->set_description("say \"hi\" \\ bye; ok");
  EXPECT_EQ(SummarizeChanges(DiffNamespaceRecords(before, after)),
            "info.description: \"\" -> \"say \\\"hi\\\" \\\\ bye; ok\"");
}

TEST(NamespaceDiffTest, DottedMapKeysStillResolveTheirType) {
  NamespaceRecord before = Record();
  NamespaceRecord after = Record();
  (*after.mutable_info()->mutable_data())["team.name"] = "42";
  std::vector<FieldChange> changes = DiffNamespaceRecords(before, after);
  EXPECT_EQ(changes, (std::vector<FieldChange>{{"info.data.team.name", "", "42"}}));
  // A map<string, string> value is a string: quoted even though it looks like a number.
  EXPECT_EQ(SummarizeChanges(changes), "info.data.team.name: \"\" -> \"42\"");
}

TEST(NamespaceDiffTest, SummaryOfHandMadeChanges) {
  // Paths the record does not have are shown bare unless the text would be ambiguous.
  EXPECT_EQ(SummarizeChanges({{"x.y", "1", "2"}, {"x.z", "a b", "c"}}),
            "x.y: 1 -> 2; x.z: \"a b\" -> c");
}

}  // namespace
}  // namespace tock::admin
