// The visibility query language parsed into the typed filter, its limits, and its messages.
#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server-core/visibility/query.h"

namespace tock::server::visibility {
namespace {

using persistence::VisibilityField;
using persistence::VisibilityOp;
using persistence::VisibilityPredicate;
using persistence::VisibilityValue;
using Kind = VisibilityPredicate::Kind;

// A predicate as compact text, to compare shapes: AND(a, OR(b, c)); conditions as
// "field op [values]" with field and op numbers.
std::string Shape(const VisibilityPredicate& p) {
  if (p.kind == Kind::kCondition) {
    std::string out = absl::StrCat(static_cast<int>(p.condition.field), "/",
                                   static_cast<int>(p.condition.op), "[");
    for (const VisibilityValue& v : p.condition.values) {
      if (std::holds_alternative<int64_t>(v)) {
        absl::StrAppend(&out, std::get<int64_t>(v), ";");
      } else {
        absl::StrAppend(&out, "'", std::get<std::string>(v), "';");
      }
    }
    return out + "]";
  }
  std::string out = p.kind == Kind::kAnd ? "AND(" : "OR(";
  for (size_t i = 0; i < p.children.size(); ++i) {
    absl::StrAppend(&out, i ? ", " : "", Shape(p.children[i]));
  }
  return out + ")";
}

// `count` copies of `term` joined by `op`.
std::string Repeat(const std::string& term, const std::string& op, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) absl::StrAppend(&out, i ? op : "", term);
  return out;
}

// A query nested `depth` parentheses deep around one condition.
std::string Nested(int depth, const std::string& inner = "WorkflowId = 'x'") {
  return std::string(depth, '(') + inner + std::string(depth, ')');
}

// AND and OR alternating `levels` deep: a = 9 AND (a = 8 OR (... (a = 0 OR a = 'last'))).
std::string Alternating(int levels) {
  std::string query = "WorkflowId = 'last'";
  for (int i = 0; i < levels; ++i) {
    query = absl::StrCat("WorkflowId = '", i, "' ", i % 2 ? "AND" : "OR", " (", query, ")");
  }
  return query;
}

double SecondsToCompile(const std::string& query, absl::Status& status) {
  auto start = std::chrono::steady_clock::now();
  status = CompileQuery(query).status();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(VisibilityQueryTest, EmptyQueryListsEverythingInTheDefaultOrder) {
  auto f = CompileQuery("");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->predicate.MatchesAll());
  EXPECT_TRUE(f->order_by.empty());
}

TEST(VisibilityQueryTest, ComparisonsAndPrecedence) {
  auto f = CompileQuery(
      "WorkflowType = 'order' and (ExecutionStatus = 'Running' OR StartTime > "
      "'2026-11-01T00:00:00Z') ORDER BY StartTime asc, WorkflowId DESC, StartTime DESC");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(Shape(f->predicate), "AND(1/0['order';], OR(4/0[1;], 5/4[1793491200000;]))");
  ASSERT_EQ(f->order_by.size(), 2u) << "a field ordered twice: the first one counts";
  EXPECT_EQ(f->order_by[0].field, VisibilityField::kStartTime);
  EXPECT_FALSE(f->order_by[0].descending);
  EXPECT_EQ(f->order_by[1].field, VisibilityField::kWorkflowId);
  EXPECT_TRUE(f->order_by[1].descending);
}

TEST(VisibilityQueryTest, InBetweenStartsWithNotEqualAndNanoseconds) {
  auto f = CompileQuery(
      "ExecutionStatus IN ('Failed', \"TimedOut\") AND CloseTime BETWEEN '2026-11-01' AND "
      "'2026-11-02' AND WorkflowId STARTS_WITH 'ord' AND TaskQueue != 'q' AND "
      "ExecutionTime <= 1793491200000000000 AND RunId = 42");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(Shape(f->predicate),
            "AND(4/6[3;7;], 6/7[1793491200000;1793577600000;], 0/8['ord';], 3/1['q';], "
            "7/3[1793491200000;], 2/0['42';])");
}

TEST(VisibilityQueryTest, RedundantParenthesesAndRepeatedOperatorsAreFlattened) {
  auto f = CompileQuery(
      "((WorkflowId = 'a' AND (WorkflowId = 'b' AND WorkflowId = 'c')) AND ((WorkflowId = "
      "'d'))) OR (WorkflowId = 'e' OR (WorkflowId = 'f'))");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(Shape(f->predicate),
            "OR(AND(0/0['a';], 0/0['b';], 0/0['c';], 0/0['d';]), 0/0['e';], 0/0['f';])");
}

TEST(VisibilityQueryTest, ValuesStayValues) {
  auto paren = CompileQuery("WorkflowId IN (')', '(')");
  ASSERT_TRUE(paren.ok()) << paren.status();
  EXPECT_EQ(Shape(paren->predicate), "0/6[')';'(';]") << "a string is never a symbol";
  auto f = CompileQuery("WorkflowId = 'x'' OR 1=1 --'");
  // The quote closes the string; what follows is not valid query syntax.
  EXPECT_FALSE(f.ok());
  auto g = CompileQuery("WorkflowId = \"a' OR '1'='1\"");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(Shape(g->predicate), "0/0['a' OR '1'='1';]");
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
           {"StartTime > -", "'-' at position 13 is not a time"},
           {"StartTime > 99999999999999999999999", "at position 13 is not a time"},
           {"WorkflowId = 'x' )", "unexpected token ')' at position 18"},
           {"WorkflowId = 'open", "not closed"},
           {"WorkflowId ~ 'x'", "unexpected character '~' at position 12"},
           {"WorkflowId = 'x' AND \x01", "unexpected character '\\x01' at position 22"},
           {"StartTime STARTS_WITH '2026'", "needs a text field"},
           {"WorkflowId IN ('a' 'b')", "unexpected token 'b' at position 20; expected ',' or ')'"},
           {"(WorkflowId = 'x'", "it ends where ')' was expected"},
       }) {
    auto f = CompileQuery(c.query);
    ASSERT_FALSE(f.ok()) << c.query;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(f.status().message().find(c.fragment), std::string::npos)
        << c.query << " -> " << f.status().message();
  }
}

TEST(VisibilityQueryTest, HundredNestedParenthesesWork) {
  auto f = CompileQuery(Nested(kMaxParenthesisDepth));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(Shape(f->predicate), "0/0['x';]") << "the parentheses group nothing";
  auto g = CompileQuery(Nested(kMaxParenthesisDepth - 1, "WorkflowId = 'x' OR (RunId = 'r')"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Shape(g->predicate), "OR(0/0['x';], 2/0['r';])");
}

// AddressSanitizer gives every frame redzones (and keeps locals of escaping frames elsewhere),
// so the same recursion needs a few times the stack: a sanitizer build measures the bound
// with a proportionally larger thread stack.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kSmallStack = 1024 * 1024;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kSmallStack = 1024 * 1024;
#else
constexpr size_t kSmallStack = 256 * 1024;
#endif
#else
constexpr size_t kSmallStack = 256 * 1024;
#endif

// The deepest query accepted, parsed on a thread with a small stack: the recursion is bounded
// by the parenthesis limit, so a handler thread's stack is never at risk.
TEST(VisibilityQueryTest, TheDeepestQueryNeedsLittleStack) {
  const std::string query = Nested(kMaxParenthesisDepth - persistence::kMaxVisibilityNesting,
                                   Alternating(persistence::kMaxVisibilityNesting - 1));
  absl::Status status = absl::UnknownError("not run");
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kSmallStack);
  struct Job {
    const std::string* query;
    absl::Status* status;
  } job{&query, &status};
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* arg) -> void* {
                  auto* job = static_cast<Job*>(arg);
                  *job->status = CompileQuery(*job->query).status();
                  return nullptr;
                },
                &job),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(VisibilityQueryTest, DeeperNestingIsRefusedQuicklyByTheDepthLimit) {
  for (int depth : {kMaxParenthesisDepth + 1, 7'000, 100'000}) {
    absl::Status status;
    double seconds = SecondsToCompile(Nested(depth), status);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << depth;
    EXPECT_EQ(status.message(),
              "invalid query: '(' at position 101 nests deeper than the limit of 100 "
              "parentheses")
        << depth;
    EXPECT_LT(seconds, 0.1) << depth;
  }
  // Unclosed: still refused at the same place, without reading the rest.
  absl::Status status;
  EXPECT_LT(SecondsToCompile(std::string(kMaxQueryBytes, '('), status), 0.1);
  EXPECT_NE(status.message().find("position 101"), std::string::npos) << status.message();
}

TEST(VisibilityQueryTest, AThousandAndTermsWorkAsOneChain) {
  std::string query = Repeat("WorkflowId != 'x'", " AND ", 1'000);
  auto f = CompileQuery(query);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->predicate.kind, Kind::kAnd);
  EXPECT_EQ(f->predicate.children.size(), 1'000u);
  // Left-nested parentheses, as a query builder writes them, give the same flat chain.
  auto g = CompileQuery(std::string(99, '(') + "WorkflowId != 'x'" +
                        Repeat(" AND WorkflowId != 'x')", "", 99) +
                        Repeat(" AND WorkflowId != 'x'", "", 900));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->predicate.children.size(), 1'000u);
}

TEST(VisibilityQueryTest, ConditionsPastTheLimitAreRefusedQuickly) {
  auto at_limit = CompileQuery(Repeat("RunId=1", " OR ", persistence::kMaxVisibilityConditions));
  EXPECT_TRUE(at_limit.ok()) << at_limit.status();
  absl::Status status;
  double seconds = SecondsToCompile(Repeat("RunId=1", " OR ", 20'000), status);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  const size_t position = persistence::kMaxVisibilityConditions * 11 + 1;
  EXPECT_EQ(status.message(),
            absl::StrCat("invalid query: too many conditions at 'RunId' (position ", position,
                         "): the limit is 2000 conditions, each value of an IN counting as one"));
  EXPECT_LT(seconds, 0.1);
  // Each value of an IN counts.
  std::string in = "RunId IN (" + Repeat("1", ",", persistence::kMaxVisibilityConditions) + ")";
  EXPECT_TRUE(CompileQuery(in).ok());
  EXPECT_NE(CompileQuery(in + " OR RunId = 2").status().message().find("too many conditions"),
            std::string::npos);
}

TEST(VisibilityQueryTest, AlternatingAndOrPastTheLimitIsRefused) {
  auto at_limit = CompileQuery(Alternating(persistence::kMaxVisibilityNesting));
  EXPECT_TRUE(at_limit.ok()) << at_limit.status();
  auto too_deep = CompileQuery(Alternating(persistence::kMaxVisibilityNesting + 1));
  ASSERT_EQ(too_deep.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_deep.status().message().find("nests AND and OR deeper than the limit of 32 levels"),
            std::string::npos)
      << too_deep.status().message();
  EXPECT_NE(too_deep.status().message().find("at position "), std::string::npos);
  // 100 parentheses alternating: within the parenthesis limit, past the nesting one.
  auto hundred = CompileQuery(Alternating(100));
  EXPECT_NE(hundred.status().message().find("deeper than the limit of 32 levels"),
            std::string::npos);
}

TEST(VisibilityQueryTest, MessagesQuoteAtMostABoundedPieceOfTheInput) {
  const std::string huge(200'000, 'W');
  for (const std::string& query : {
           huge + " = 'x'",                               // unknown field
           "WorkflowId " + huge,                          // unexpected token
           "ExecutionStatus = '" + huge + "'",            // unknown status
           "StartTime > '" + huge + "'",                  // not a time
           "WorkflowId = 'x' " + huge,                    // unexpected after the expression
           "WorkflowId = 'x' ORDER BY " + huge,           // unknown order field
           "WorkflowId = '" + std::string(300'000, 'x'),  // over the length limit
           std::string(1 << 20, 'a'),                     // a 1 MB token
           "WorkflowId = '" + huge,                       // string not closed
       }) {
    auto f = CompileQuery(query);
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_LT(f.status().message().size(), 300u) << f.status().message().substr(0, 400);
  }
  auto f = CompileQuery(huge + " = 'x'");
  EXPECT_EQ(f.status().message().find("invalid query: unknown field '" + std::string(64, 'W') +
                                      "…' at position 1; fields: "),
            0u)
      << f.status().message();
  EXPECT_EQ(CompileQuery(std::string(1 << 20, 'a')).status().message(),
            "invalid query: longer than the limit of 262144 bytes (it has 1048576)");
  // Cut at a character boundary: 63 ASCII bytes then a 2-byte character straddling byte 64.
  auto utf8 = CompileQuery("ExecutionStatus = '" + std::string(63, 'W') + "\xC3\xA9'");
  EXPECT_NE(utf8.status().message().find("'" + std::string(63, 'W') + "…'"), std::string::npos)
      << utf8.status().message();
}

TEST(VisibilityQueryTest, NoMessageMentionsSql) {
  for (const char* query : {"WorkflowId = 'x' AND", "Bogus = 1", "WorkflowId ~ 1",
                            "WorkflowId = 'x' ORDER BY", "StartTime = 'x'"}) {
    auto f = CompileQuery(query);
    ASSERT_FALSE(f.ok());
    for (const char* word : {"SELECT", "visibility WHERE", "sqlite", "start_ms", "?"}) {
      EXPECT_EQ(f.status().message().find(word), std::string::npos)
          << query << " -> " << f.status().message();
    }
  }
}

}  // namespace
}  // namespace tock::server::visibility
