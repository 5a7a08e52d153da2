// The worker registry (matching/worker_registry.h) and its query language
// (matching/worker_query.h): the last heartbeat per worker, forgotten after its TTL on a fake
// clock, bounded in entries; queries over every field, their errors and limits.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "lib/common/clock.h"
#include "server-core/matching/worker_registry.h"

namespace tock::server::matching {
namespace {

namespace wk = temporal::api::worker::v1;

wk::WorkerHeartbeat Worker(const std::string& key, const std::string& queue, int64_t start_seconds = 0) {
  wk::WorkerHeartbeat h;
  h.set_worker_instance_key(key);
  h.set_worker_identity("id-" + key);
  h.set_task_queue(queue);
  h.set_sdk_name("temporal-typescript");
  h.set_sdk_version("1.24.0");
  h.mutable_host_info()->set_host_name("host-" + key);
  h.mutable_deployment_version()->set_deployment_name(key == "a" ? "billing" : "");
  h.mutable_deployment_version()->set_build_id(key == "a" ? "v7" : "");
  h.set_status(temporal::api::enums::v1::WORKER_STATUS_RUNNING);
  h.mutable_start_time()->set_seconds(start_seconds);
  h.mutable_heartbeat_time()->set_seconds(start_seconds + 60);
  return h;
}

bool Match(const std::string& query, const wk::WorkerHeartbeat& w) {
  auto q = WorkerQuery::Compile(query);
  EXPECT_TRUE(q.ok()) << query << ": " << q.status();
  return q.ok() && q->Matches(w);
}

TEST(WorkerQueryTest, EveryFieldAndOperator) {
  const wk::WorkerHeartbeat a = Worker("a", "orders", 1'800'000'000);
  EXPECT_TRUE(Match("", a));
  EXPECT_TRUE(Match("WorkerInstanceKey = 'a'", a));
  EXPECT_TRUE(Match("WorkerIdentity != 'id-b'", a));
  EXPECT_TRUE(Match("HostName STARTS_WITH 'host-'", a));
  EXPECT_FALSE(Match("HostName NOT STARTS_WITH 'host-'", a));
  EXPECT_TRUE(Match("TaskQueue = \"orders\"", a));
  EXPECT_TRUE(Match("DeploymentName = 'billing' AND BuildId = 'v7'", a));
  EXPECT_TRUE(Match("SdkName = 'temporal-typescript' and SdkVersion = '1.24.0'", a));
  EXPECT_TRUE(Match("WorkerStatus = 'Running'", a));
  EXPECT_TRUE(Match("Status = 'WORKER_STATUS_RUNNING'", a));
  EXPECT_FALSE(Match("Status = 'ShuttingDown'", a));
  EXPECT_TRUE(Match("StartTime = '2027-01-15T08:00:00Z'", a));
  EXPECT_TRUE(Match("StartTime BETWEEN '2027-01-15T07:00:00Z' AND '2027-01-15T09:00:00Z'", a));
  EXPECT_TRUE(Match("HeartbeatTime > '2027-01-15T08:00:00Z' AND HeartbeatTime <= '2027-01-15T08:01:00Z'", a));
  EXPECT_FALSE(Match("HeartbeatTime < '2027-01-15T08:00:00Z'", a));
  const wk::WorkerHeartbeat b = Worker("b", "payments");
  EXPECT_TRUE(Match("BuildId IS NULL", b));
  EXPECT_FALSE(Match("BuildId IS NOT NULL", b));
  // AND binds tighter than OR; parentheses group.
  EXPECT_TRUE(Match("TaskQueue = 'x' AND TaskQueue = 'y' OR TaskQueue = 'payments'", b));
  EXPECT_FALSE(Match("TaskQueue = 'x' AND (TaskQueue = 'y' OR TaskQueue = 'payments')", b));
}

TEST(WorkerQueryTest, ErrorsNameTheTokenAndItsPlaceAndLimitsHold) {
  auto error = [](const std::string& query) {
    auto q = WorkerQuery::Compile(query);
    EXPECT_FALSE(q.ok()) << query;
    EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument) << query;
    return std::string(q.status().message());
  };
  EXPECT_EQ(error("Colour = 'red'"),
            "invalid worker query: unknown field (WorkerInstanceKey, WorkerIdentity, HostName, "
            "TaskQueue, DeploymentName, BuildId, SdkName, SdkVersion, WorkerStatus, StartTime, "
            "HeartbeatTime) at \"Colour\" (byte 1)");
  EXPECT_EQ(error("TaskQueue > 'a'"),
            "invalid worker query: expected = != STARTS_WITH, NOT STARTS_WITH or IS [NOT] NULL for "
            "a string at \">\" (byte 11)");
  EXPECT_EQ(error("StartTime > 'yesterday'"),
            "invalid worker query: expected an RFC 3339 time such as '2026-11-29T08:00:00Z' at "
            "\"yesterday\" (byte 13)");
  EXPECT_EQ(error("Status = 'asleep'"),
            "invalid worker query: a worker's status is Running, ShuttingDown or Shutdown at "
            "\"asleep\" (byte 10)");
  EXPECT_EQ(error("TaskQueue = 'a"), "invalid worker query: a quoted value is not closed at \"a\" (byte 13)");
  EXPECT_EQ(error("(TaskQueue = 'a'"), "invalid worker query: expected ')' at the end (byte 17)");
  EXPECT_EQ(error("TaskQueue = 'a' XOR"), "invalid worker query: expected AND, OR or the end at \"XOR\" (byte 17)");
  // A long token is quoted in part only.
  const std::string message = error(std::string(5000, 'x') + " = 'a'");
  EXPECT_LT(message.size(), 300u) << message;
  // Depth and size are bounded.
  EXPECT_NE(error(std::string(40, '(') + "TaskQueue = 'a'" + std::string(40, ')')).find("nested parentheses"),
            std::string::npos);
  EXPECT_TRUE(WorkerQuery::Compile(std::string(32, '(') + "TaskQueue = 'a'" + std::string(32, ')')).ok());
  EXPECT_NE(error(std::string(kMaxWorkerQueryBytes + 1, ' ')).find("over the limit"), std::string::npos);
}

TEST(WorkerRegistryTest, KeepsTheLastHeartbeatForgetsAfterTheTtlAndStaysBounded) {
  ManualClock clock;
  WorkerRegistry registry(clock, /*max_entries=*/3);
  const WorkerQuery all = *WorkerQuery::Compile("");
  registry.Record("ns", Worker("a", "orders"));
  clock.Advance(absl::Seconds(1));
  registry.Record("ns", Worker("b", "temporal-sys-per-ns-tq"));
  clock.Advance(absl::Seconds(1));
  registry.Record("other", Worker("a", "orders"));
  clock.Advance(absl::Seconds(1));
  wk::WorkerHeartbeat again = Worker("a", "orders");
  again.set_sdk_version("1.25.0");
  registry.Record("ns", again);  // ns/a is now the newest; ns/b the oldest
  EXPECT_EQ(registry.size(), 3u);
  auto listed = registry.List("ns", all, /*include_system=*/false);
  ASSERT_EQ(listed.size(), 1u);  // the system worker left out
  EXPECT_EQ(listed[0].sdk_version(), "1.25.0");
  EXPECT_EQ(registry.List("ns", all, true).size(), 2u);
  // Paging by key.
  EXPECT_EQ(registry.List("ns", all, true, "a").at(0).worker_instance_key(), "b");
  EXPECT_EQ(registry.List("ns", all, true, "", 1).size(), 1u);
  // Over the bound: the oldest entry goes.
  clock.Advance(absl::Seconds(1));
  registry.Record("ns", Worker("c", "orders"));
  EXPECT_EQ(registry.size(), 3u);
  EXPECT_FALSE(registry.Describe("ns", "b").has_value());
  // After the TTL without a heartbeat, a worker is gone; one that kept heartbeating stays.
  clock.Advance(WorkerRegistry::kEntryTtl - absl::Seconds(30));
  registry.Record("ns", Worker("c", "orders"));
  clock.Advance(absl::Seconds(31));
  EXPECT_FALSE(registry.Describe("ns", "a").has_value());
  EXPECT_TRUE(registry.Describe("ns", "c").has_value());
  EXPECT_EQ(registry.List("other", all, false).size(), 0u);
  EXPECT_EQ(registry.List("ns", all, false).size(), 1u);
  EXPECT_EQ(registry.size(), 1u);
}

}  // namespace
}  // namespace tock::server::matching
