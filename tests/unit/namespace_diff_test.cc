#include "lib/admin/namespace_diff.h"

#include <gtest/gtest.h>

namespace tock::admin {
namespace {

tock::persistence::v1::NamespaceRecord Record() {
  tock::persistence::v1::NamespaceRecord r;
  r.mutable_info()->set_name("orders");
  r.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(2 * 86400);
  r.set_failover_version(1);
  return r;
}

TEST(NamespaceDiffTest, ChangedAddedAndHumanDurations) {
  auto before = Record();
  auto after = Record();
  after.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(3 * 86400);
  after.mutable_info()->set_description("Order processing");
  after.set_failover_version(2);
  after.set_config_version(7);  // bookkeeping, not shown
  after.add_failover_history()->set_failover_version(2);  // noise, not shown
  std::vector<FieldChange> changes = DiffNamespaceRecords(before, after);
  std::vector<FieldChange> expected = {
      {"config.workflowExecutionRetentionTtl", "2d", "3d"},
      {"failoverVersion", "1", "2"},
      {"info.description", "", "Order processing"},
  };
  EXPECT_EQ(changes, expected);
  EXPECT_EQ(SummarizeChanges(changes),
            "config.workflowExecutionRetentionTtl: 2d -> 3d; failoverVersion: 1 -> 2; "
            "info.description: \"\" -> \"Order processing\"");
}

TEST(NamespaceDiffTest, NoChange) {
  EXPECT_TRUE(DiffNamespaceRecords(Record(), Record()).empty());
  EXPECT_EQ(SummarizeChanges({}), "no change");
}

TEST(NamespaceDiffTest, RemovedDataKey) {
  auto before = Record();
  (*before.mutable_info()->mutable_data())["team"] = "payments";
  std::vector<FieldChange> changes = DiffNamespaceRecords(before, Record());
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0], (FieldChange{"info.data.team", "payments", ""}));
}

}  // namespace
}  // namespace tock::admin
