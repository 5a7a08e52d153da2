// lib/admin's options -> request mapping: what each namespace operation puts on the wire.
#include <gtest/gtest.h>

#include "lib/admin/namespace_ops.h"
#include "lib/admin/retention.h"

namespace tock::admin {
namespace {

TEST(RegisterRequest, EveryField) {
  RegisterNamespaceOptions o;
  o.name = "orders";
  o.retention = "1d12h";
  o.description = "Order processing";
  o.owner_email = "ops@example.com";
  o.data = {{"team", "payments"}, {"tier", "gold"}};
  o.global = true;
  o.clusters = {"a", "b"};
  o.active_cluster = "b";
  auto req = MakeRegisterNamespaceRequest(o);
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->namespace_(), "orders");
  EXPECT_EQ(req->workflow_execution_retention_period().seconds(), 36 * 3600);
  EXPECT_EQ(req->description(), "Order processing");
  EXPECT_EQ(req->owner_email(), "ops@example.com");
  EXPECT_EQ(req->data().at("team"), "payments");
  EXPECT_EQ(req->data().at("tier"), "gold");
  EXPECT_TRUE(req->is_global_namespace());
  ASSERT_EQ(req->clusters_size(), 2);
  EXPECT_EQ(req->clusters(0).cluster_name(), "a");
  EXPECT_EQ(req->clusters(1).cluster_name(), "b");
  EXPECT_EQ(req->active_cluster_name(), "b");
}

TEST(RegisterRequest, NoRetentionLeavesTheFieldAbsent) {
  RegisterNamespaceOptions o;
  o.name = "orders";
  auto req = MakeRegisterNamespaceRequest(o);
  ASSERT_TRUE(req.ok());
  EXPECT_FALSE(req->has_workflow_execution_retention_period())
      << "absent means the server default (2d), not zero";
  EXPECT_FALSE(req->is_global_namespace());
  EXPECT_EQ(req->clusters_size(), 0);
  EXPECT_EQ(req->active_cluster_name(), "");
}

TEST(RegisterRequest, RetentionForms) {
  const std::vector<std::pair<std::string, int64_t>> accepted = {
      {"1d", 86400}, {"24h", 86400}, {"1440m", 86400}, {"3", 3 * 86400}, {"30d", 30 * 86400},
      {"720h", 30 * 86400}};
  for (const auto& [text, seconds] : accepted) {
    RegisterNamespaceOptions o;
    o.name = "n";
    o.retention = text;
    auto req = MakeRegisterNamespaceRequest(o);
    ASSERT_TRUE(req.ok()) << text << ": " << req.status();
    EXPECT_EQ(req->workflow_execution_retention_period().seconds(), seconds) << text;
  }
  for (const char* bad : {"", "0", "0d", "23h", "23h59m", "31d", "721h", "-1d", "abc", "3x"}) {
    RegisterNamespaceOptions o;
    o.name = "n";
    o.retention = bad;
    auto req = MakeRegisterNamespaceRequest(o);
    ASSERT_FALSE(req.ok()) << bad;
    EXPECT_EQ(req.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(req.status().message().rfind(kInvalidRetentionMessage, 0), 0u)
        << bad << ": " << req.status().message();
  }
}

TEST(UpdateRequest, OnlyWhatIsGiven) {
  UpdateNamespaceOptions o;
  o.name = "orders";
  auto empty = MakeUpdateNamespaceRequest(o);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->namespace_(), "orders");
  EXPECT_FALSE(empty->has_update_info());
  EXPECT_FALSE(empty->has_config());
  EXPECT_FALSE(empty->has_replication_config());
  EXPECT_FALSE(empty->promote_namespace());

  o.retention = "7d";
  o.description = "new";
  o.data = {{"b", "2"}};
  o.promote_global = true;
  o.clusters = {"a", "b"};
  auto full = MakeUpdateNamespaceRequest(o);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->config().workflow_execution_retention_ttl().seconds(), 7 * 86400);
  EXPECT_EQ(full->update_info().description(), "new");
  EXPECT_EQ(full->update_info().owner_email(), "") << "empty: unchanged";
  EXPECT_EQ(full->update_info().data().at("b"), "2");
  EXPECT_TRUE(full->promote_namespace());
  ASSERT_EQ(full->replication_config().clusters_size(), 2);
  EXPECT_EQ(full->replication_config().active_cluster_name(), "")
      << "an update is never a failover";
}

TEST(UpdateRequest, RetentionRevalidated) {
  UpdateNamespaceOptions o;
  o.name = "orders";
  o.retention = "31d";
  auto req = MakeUpdateNamespaceRequest(o);
  ASSERT_FALSE(req.ok());
  EXPECT_EQ(req.status().message().rfind(kInvalidRetentionMessage, 0), 0u);
}

TEST(FailoverRequest, CarriesOnlyTheActiveCluster) {
  auto req = MakeFailoverNamespaceRequest("pay", "b");
  ASSERT_TRUE(req.ok());
  wf::UpdateNamespaceRequest expected;
  expected.set_namespace_("pay");
  expected.mutable_replication_config()->set_active_cluster_name("b");
  EXPECT_EQ(req->SerializeAsString(), expected.SerializeAsString()) << req->DebugString();
  EXPECT_EQ(MakeFailoverNamespaceRequest("pay", "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(KeyValues, Parsing) {
  auto kv = ParseKeyValues({"team=payments", "url=http://x?a=b", "empty=", "team=orders"});
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(*kv, (std::map<std::string, std::string>{
                     {"team", "orders"}, {"url", "http://x?a=b"}, {"empty", ""}}));
  for (const char* bad : {"novalue", "=v", ""}) {
    auto r = ParseKeyValues({bad});
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    if (!r.ok()) EXPECT_NE(r.status().message().find("KEY=VALUE"), std::string::npos);
  }
}

TEST(History, EachVersionPairedWithItsChanges) {
  tock::admin::v1::GetNamespaceHistoryResponse history;
  auto* v1 = history.add_versions();
  v1->set_version(1);
  v1->set_operation("register");
  v1->mutable_record()->mutable_info()->set_name("h");
  v1->mutable_record()->mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(
      86400);
  auto* v2 = history.add_versions();
  *v2 = *v1;
  v2->set_version(2);
  v2->set_operation("update");
  v2->mutable_record()->mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(
      5 * 86400);
  std::vector<NamespaceHistoryEntry> entries = PairVersionsWithChanges(history);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].version.version(), 1);
  EXPECT_FALSE(entries[0].changes.empty()) << "v1 shows the whole record";
  ASSERT_EQ(entries[1].changes.size(), 1u);
  EXPECT_EQ(entries[1].changes[0].field, "config.workflowExecutionRetentionTtl");
  EXPECT_EQ(entries[1].changes[0].before, "1d");
  EXPECT_EQ(entries[1].changes[0].after, "5d");
  EXPECT_TRUE(PairVersionsWithChanges({}).empty());
}

}  // namespace
}  // namespace tock::admin
