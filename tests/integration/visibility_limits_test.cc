// List and count queries through the whole server over real gRPC: large valid queries work
// and give the right rows, hostile ones are refused by a stated limit with a small message,
// and the server keeps answering (issue 10, §2.1, §2.3, §2.4).
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/client/connection.h"
#include "server-core/server.h"

namespace tock::server {
namespace {

namespace wf = temporal::api::workflowservice::v1;

class VisibilityLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerConfig config;
    config.port = 0;
    auto server = TockServer::Start(config, RealClock());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    client::ConnectionOptions options;
    options.address = server_->address();
    auto connection = client::Connection::Open(options);
    ASSERT_TRUE(connection.ok()) << connection.status();
    c_ = std::move(*connection);
    // order-0 .. order-9 of type "order", then ship-0 .. ship-4 of type "ship".
    for (int i = 0; i < 15; ++i) {
      wf::StartWorkflowExecutionRequest start;
      start.set_namespace_("default");
      start.set_workflow_id(i < 10 ? absl::StrCat("order-", i) : absl::StrCat("ship-", i - 10));
      start.mutable_workflow_type()->set_name(i < 10 ? "order" : "ship");
      start.mutable_task_queue()->set_name("nobody");
      start.set_request_id(start.workflow_id());
      auto started =
          c_->Call(&wf::WorkflowService::Stub::StartWorkflowExecution, c_->workflow(), start);
      ASSERT_TRUE(started.ok()) << started.status();
    }
  }

  absl::StatusOr<std::set<std::string>> List(const std::string& query) {
    wf::ListWorkflowExecutionsRequest req;
    req.set_namespace_("default");
    req.set_query(query);
    auto out = c_->Call(&wf::WorkflowService::Stub::ListWorkflowExecutions, c_->workflow(), req);
    if (!out.ok()) return out.status();
    std::set<std::string> ids;
    for (const auto& e : out->executions()) ids.insert(e.execution().workflow_id());
    return ids;
  }

  absl::StatusOr<int64_t> Count(const std::string& query) {
    wf::CountWorkflowExecutionsRequest req;
    req.set_namespace_("default");
    req.set_query(query);
    auto out = c_->Call(&wf::WorkflowService::Stub::CountWorkflowExecutions, c_->workflow(), req);
    if (!out.ok()) return out.status();
    return out->count();
  }

  // Both calls refuse `query` with INVALID_ARGUMENT naming `limit`, quickly, in a message
  // that is small and shows no SQL.
  void ExpectRefused(const std::string& query, const std::string& limit) {
    auto begin = std::chrono::steady_clock::now();
    absl::Status listed = List(query).status();
    absl::Status counted = Count(query).status();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    EXPECT_LT(seconds, 2.0);
    for (const absl::Status& s : {listed, counted}) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_NE(s.message().find(limit), std::string::npos) << s.message().substr(0, 500);
      EXPECT_LT(s.message().size(), 400u);
      for (const char* sql : {"SELECT", "WHERE", "sqlite", "?"}) {
        EXPECT_EQ(s.message().find(sql), std::string::npos) << s.message().substr(0, 500);
      }
    }
  }

  std::unique_ptr<TockServer> server_;
  std::unique_ptr<client::Connection> c_;
};

TEST_F(VisibilityLimitsTest, HundredNestedParenthesesListAndCount) {
  const std::string query = std::string(100, '(') +
                            "WorkflowId = 'order-3' OR WorkflowId = 'ship-1'" +
                            std::string(100, ')');
  auto ids = List(query);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::set<std::string>{"order-3", "ship-1"}));
  auto count = Count(query);
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 2);
  // AND and OR alternating 32 levels deep (the stated limit), 32 parentheses.
  std::string alternating = "WorkflowId = 'ship-4'";
  for (int i = 0; i < 32; ++i) {
    alternating = absl::StrCat(i % 2 ? "WorkflowType = 'ship' AND (" : "RunId = 'none' OR (",
                               alternating, ")");
  }
  ids = List(alternating);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::set<std::string>{"ship-4"}));
}

TEST_F(VisibilityLimitsTest, ThousandAndTermsListAndCount) {
  std::string query = "WorkflowType = 'order'";
  for (int i = 0; i < 999; ++i) absl::StrAppend(&query, " AND WorkflowId != 'order-", i + 5, "'");
  auto ids = List(query);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(*ids, (std::set<std::string>{"order-0", "order-1", "order-2", "order-3", "order-4"}));
  auto count = Count(query);
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 5);
  // 1,000 OR terms, and the same as one IN list.
  std::string any = "WorkflowId = 'ship-0'";
  std::string in = "WorkflowId IN ('ship-0'";
  for (int i = 0; i < 999; ++i) {
    absl::StrAppend(&any, " OR WorkflowId = 'order-", i * 3, "'");
    absl::StrAppend(&in, ", 'order-", i * 3, "'");
  }
  in += ")";
  for (const std::string& q : {any, in}) {
    auto matched = Count(q);
    ASSERT_TRUE(matched.ok()) << matched.status();
    EXPECT_EQ(*matched, 5) << "ship-0, order-0, -3, -6, -9";
  }
}

TEST_F(VisibilityLimitsTest, HostileQueriesAreRefusedAndTheServerKeepsAnswering) {
  ExpectRefused(std::string(7'000, '(') + "WorkflowId = 'x'" + std::string(7'000, ')'),
                "nests deeper than the limit of 100 parentheses");
  ExpectRefused(std::string(100'000, '(') + "WorkflowId = 'x'" + std::string(100'000, ')'),
                "nests deeper than the limit of 100 parentheses");
  std::string terms = "RunId = 1";
  for (int i = 0; i < 19'999; ++i) terms += " OR RunId=1";
  ExpectRefused(terms, "the limit is 2000 conditions");
  std::string alternating = "WorkflowId = 'x'";
  for (int i = 0; i < 99; ++i) {
    alternating = absl::StrCat("WorkflowId = 'y' ", i % 2 ? "AND" : "OR", " (", alternating, ")");
  }
  ExpectRefused(alternating, "nests AND and OR deeper than the limit of 32 levels");
  ExpectRefused(std::string(1 << 20, 'W') + " = 'x'", "longer than the limit of 262144 bytes");
  ExpectRefused(std::string(200'000, 'W') + " = 'x'", "unknown field 'WWWW");
  auto count = Count("WorkflowType = 'ship'");
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 5);
}

// The older calls build their filter from request fields instead of a query.
TEST_F(VisibilityLimitsTest, ListOpenAndListClosedFilterByTheirFields) {
  wf::TerminateWorkflowExecutionRequest terminate;
  terminate.set_namespace_("default");
  terminate.mutable_workflow_execution()->set_workflow_id("ship-2");
  ASSERT_TRUE(
      c_->Call(&wf::WorkflowService::Stub::TerminateWorkflowExecution, c_->workflow(), terminate)
          .ok());
  wf::ListOpenWorkflowExecutionsRequest open;
  open.set_namespace_("default");
  open.mutable_type_filter()->set_name("ship");
  auto opened =
      c_->Call(&wf::WorkflowService::Stub::ListOpenWorkflowExecutions, c_->workflow(), open);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::set<std::string> ids;
  for (const auto& e : opened->executions()) ids.insert(e.execution().workflow_id());
  EXPECT_EQ(ids, (std::set<std::string>{"ship-0", "ship-1", "ship-3", "ship-4"}));

  wf::ListClosedWorkflowExecutionsRequest closed;
  closed.set_namespace_("default");
  closed.mutable_status_filter()->set_status(
      temporal::api::enums::v1::WORKFLOW_EXECUTION_STATUS_TERMINATED);
  auto listed =
      c_->Call(&wf::WorkflowService::Stub::ListClosedWorkflowExecutions, c_->workflow(), closed);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->executions_size(), 1);
  EXPECT_EQ(listed->executions(0).execution().workflow_id(), "ship-2");
  closed.mutable_status_filter()->set_status(
      temporal::api::enums::v1::WORKFLOW_EXECUTION_STATUS_COMPLETED);
  listed =
      c_->Call(&wf::WorkflowService::Stub::ListClosedWorkflowExecutions, c_->workflow(), closed);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->executions_size(), 0);
  closed.clear_status_filter();
  closed.mutable_execution_filter()->set_workflow_id("ship-2");
  listed =
      c_->Call(&wf::WorkflowService::Stub::ListClosedWorkflowExecutions, c_->workflow(), closed);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->executions_size(), 1);
}

}  // namespace
}  // namespace tock::server
