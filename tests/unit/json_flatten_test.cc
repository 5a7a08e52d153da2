// JSON flattening (lib/common/json_flatten.h) and canonical proto JSON
// (lib/common/proto_json.h), which the CLI's card output and namespace diffs are built on.
#include "lib/common/json_flatten.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "lib/common/proto_json.h"
#include "temporal/api/namespace/v1/message.pb.h"
#include "tock/persistence/v1/namespace.pb.h"

namespace tock {
namespace {

using Rows = std::vector<std::pair<std::string, std::string>>;

TEST(JsonFlattenTest, TheNamespaceExample) {
  Rows rows = FlattenJson(
      nlohmann::json::parse(R"({"config":{"workflowExecutionRetentionTtl":"259200s"},)"
                            R"("replicationConfig":{"clusters":[{"clusterName":"a"}]}})"));
  EXPECT_EQ(rows, (Rows{{"config.workflowExecutionRetentionTtl", "259200s"},
                        {"replicationConfig.clusters[0].clusterName", "a"}}));
}

TEST(JsonFlattenTest, ScalarsAreTextAndStringsUnquoted) {
  Rows rows = FlattenJson(nlohmann::json::parse(
      R"({"s":"two words","q":"say \"hi\"","i":3,"neg":-7,"f":1.5,"t":true,"b":false,"z":0,)"
      R"("big":"9223372036854775807","empty":""})"));
  EXPECT_EQ(rows, (Rows{{"b", "false"},
                        {"big", "9223372036854775807"},
                        {"empty", ""},
                        {"f", "1.5"},
                        {"i", "3"},
                        {"neg", "-7"},
                        {"q", "say \"hi\""},
                        {"s", "two words"},
                        {"t", "true"},
                        {"z", "0"}}));
}

TEST(JsonFlattenTest, EmptyContainersAndNullsProduceNothing) {
  EXPECT_EQ(FlattenJson(nlohmann::json::parse(R"({"o":{},"a":[],"n":null,"d":{"e":{}}})")), Rows{});
  EXPECT_EQ(FlattenJson(nlohmann::json::object()), Rows{});
  EXPECT_EQ(FlattenJson(nlohmann::json::parse(R"({"a":[{},{"x":1}]})")), (Rows{{"a[1].x", "1"}}));
}

TEST(JsonFlattenTest, NestedArraysAndDocumentOrder) {
  Rows rows = FlattenJson(nlohmann::json::parse(
      R"({"z":1,"m":[[1,2],["x"]],"a":{"c":[{"k":"v0"},{"k":"v1"}],"b":true}})"));
  // Keys in nlohmann's (alphabetical) order, array elements by index.
  EXPECT_EQ(rows, (Rows{{"a.b", "true"},
                        {"a.c[0].k", "v0"},
                        {"a.c[1].k", "v1"},
                        {"m[0][0]", "1"},
                        {"m[0][1]", "2"},
                        {"m[1][0]", "x"},
                        {"z", "1"}}));
}

TEST(JsonFlattenTest, ArraysPastNineKeepNumericOrder) {
  nlohmann::json json = {{"l", nlohmann::json::array()}};
  for (int i = 0; i < 12; ++i) json["l"].push_back(i);
  Rows rows = FlattenJson(json);
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(rows[2], (std::pair<std::string, std::string>{"l[2]", "2"}));
  EXPECT_EQ(rows[10], (std::pair<std::string, std::string>{"l[10]", "10"}));
}

TEST(ProtoJsonTest, CanonicalCamelCaseWithDefaultsPrinted) {
  temporal::api::namespace_::v1::NamespaceConfig config;
  config.mutable_workflow_execution_retention_ttl()->set_seconds(259200);
  config.set_history_archival_uri("file:///tmp/a");
  // Compared as parsed JSON: the key order of protobuf's printer is not part of the contract.
  nlohmann::json expected =
      nlohmann::json::parse(R"({"workflowExecutionRetentionTtl":"259200s",)"
                            R"("historyArchivalState":"ARCHIVAL_STATE_UNSPECIFIED",)"
                            R"("historyArchivalUri":"file:///tmp/a",)"
                            R"("visibilityArchivalState":"ARCHIVAL_STATE_UNSPECIFIED",)"
                            R"("visibilityArchivalUri":"","customSearchAttributeAliases":{}})");
  EXPECT_EQ(nlohmann::json::parse(ProtoToJsonString(config)), expected);
  EXPECT_EQ(ProtoToJson(config), expected);
  // Compact: no whitespace between tokens.
  EXPECT_EQ(ProtoToJsonString(config).find_first_of(" \n"), std::string::npos);
}

TEST(ProtoJsonTest, Int64AsStringsAndFlattenedRecord) {
  tock::persistence::v1::NamespaceRecord record;
  record.mutable_info()->set_name("orders");
  record.mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(172800);
  record.mutable_replication_config()->set_active_cluster_name("a");
  record.mutable_replication_config()->add_clusters()->set_cluster_name("a");
  record.mutable_replication_config()->add_clusters()->set_cluster_name("b");
  record.set_failover_version(11);
  nlohmann::json json = ProtoToJson(record);
  EXPECT_EQ(json["failoverVersion"], "11");
  EXPECT_EQ(json["isGlobalNamespace"], false);
  EXPECT_EQ(json["info"]["name"], "orders");

  Rows rows = FlattenJson(json);
  auto value = [&rows](const std::string& path) -> std::string {
    for (const auto& [p, v] : rows) {
      if (p == path) return v;
    }
    return "<absent>";
  };
  EXPECT_EQ(value("config.workflowExecutionRetentionTtl"), "172800s");
  EXPECT_EQ(value("replicationConfig.clusters[0].clusterName"), "a");
  EXPECT_EQ(value("replicationConfig.clusters[1].clusterName"), "b");
  EXPECT_EQ(value("replicationConfig.activeClusterName"), "a");
  EXPECT_EQ(value("failoverVersion"), "11");
  EXPECT_EQ(value("isGlobalNamespace"), "false");
  EXPECT_EQ(value("info.name"), "orders");
  EXPECT_EQ(value("info.state"), "NAMESPACE_STATE_UNSPECIFIED");
  EXPECT_EQ(value("info.data"), "<absent>") << "an empty map is not a row";
  EXPECT_EQ(value("failoverHistory"), "<absent>");
}

TEST(ProtoJsonTest, UnprintableMessageGivesAnEmptyObject) {
  temporal::api::namespace_::v1::NamespaceConfig config;
  // Beyond google.protobuf.Duration's range (+-10,000 years): protobuf refuses to print it.
  config.mutable_workflow_execution_retention_ttl()->set_seconds(315'576'000'001);
  EXPECT_EQ(ProtoToJsonString(config), "{}");
  EXPECT_EQ(ProtoToJson(config), nlohmann::json::object());
}

}  // namespace
}  // namespace tock
