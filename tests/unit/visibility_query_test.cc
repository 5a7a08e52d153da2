// The visibility query language compiled to parameterised SQL.
#include "server-core/visibility/query.h"

#include <gtest/gtest.h>

namespace tock::server::visibility {
namespace {

using Param = std::variant<int64_t, std::string>;

TEST(VisibilityQueryTest, EmptyQueryListsNewestFirst) {
  auto f = CompileQuery("");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->where, "");
  EXPECT_EQ(f->order_by, "start_ms DESC, run_id DESC");
}

TEST(VisibilityQueryTest, ComparisonsAndPrecedence) {
  auto f = CompileQuery(
      "WorkflowType = 'order' and (ExecutionStatus = 'Running' OR StartTime > "
      "'2026-11-01T00:00:00Z') ORDER BY StartTime asc, WorkflowId DESC");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->where, "workflow_type = ? AND (status = ? OR start_ms > ?)");
  ASSERT_EQ(f->params.size(), 3u);
  EXPECT_EQ(f->params[0], Param(std::string("order")));
  EXPECT_EQ(f->params[1], Param(int64_t{1}));
  EXPECT_EQ(f->params[2], Param(int64_t{1793491200000}));
  EXPECT_EQ(f->order_by, "start_ms ASC, workflow_id DESC");
}

TEST(VisibilityQueryTest, InBetweenStartsWithAndNotEqual) {
  auto f = CompileQuery(
      "ExecutionStatus IN ('Failed', \"TimedOut\") AND CloseTime BETWEEN '2026-11-01' AND "
      "'2026-11-02' AND WorkflowId STARTS_WITH 'ord' AND TaskQueue != 'q'");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->where,
            "status IN (?, ?) AND close_ms BETWEEN ? AND ? AND substr(workflow_id, 1, ?) = ? AND "
            "task_queue != ?");
  EXPECT_EQ(f->params[0], Param(int64_t{3}));
  EXPECT_EQ(f->params[1], Param(int64_t{7}));
  EXPECT_EQ(f->params[4], Param(int64_t{3}));
  EXPECT_EQ(f->params[5], Param(std::string("ord")));
}

TEST(VisibilityQueryTest, ValuesNeverBecomeSql) {
  auto f = CompileQuery("WorkflowId = 'x'' OR 1=1 --'");
  // The quote closes the string; what follows is not valid query syntax.
  EXPECT_FALSE(f.ok());
  auto g = CompileQuery("WorkflowId = \"a' OR '1'='1\"");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->where, "workflow_id = ?");
  EXPECT_EQ(g->params[0], Param(std::string("a' OR '1'='1")));
}

TEST(VisibilityQueryTest, MalformedQueriesNameTheToken) {
  struct Case {
    const char* query;
    const char* fragment;
  };
  for (const Case& c : std::vector<Case>{
           {"Bogus = 'x'", "unknown field 'Bogus' at position 1"},
           {"WorkflowId 'x'", "unexpected token 'x' at position 12"},
           {"WorkflowId = 'x' AND", "ends where"},
           {"WorkflowId = 'x' ORDER StartTime", "unexpected token 'StartTime'"},
           {"ExecutionStatus = 'Sleeping'", "unknown ExecutionStatus 'Sleeping'"},
           {"StartTime > 'yesterday'", "'yesterday' at position 13 is not a time"},
           {"WorkflowId = 'x' )", "unexpected token ')' at position 18"},
           {"WorkflowId = 'open", "not closed"},
           {"WorkflowId ~ 'x'", "unexpected character '~'"},
           {"StartTime STARTS_WITH '2026'", "needs a text field"},
       }) {
    auto f = CompileQuery(c.query);
    ASSERT_FALSE(f.ok()) << c.query;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(f.status().message().find(c.fragment), std::string::npos)
        << c.query << " -> " << f.status().message();
  }
}

}  // namespace
}  // namespace tock::server::visibility
