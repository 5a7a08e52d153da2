// The VisibilityStore contract (visibility_store.h) on every backend: each operator on each
// kind of field, absent close times, order and paging, predicates at the stated limits
// (checked against a reference evaluator written here), refusals beyond them, and the
// retention listing.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/visibility_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

using F = VisibilityField;
using Op = VisibilityOp;
using P = VisibilityPredicate;

constexpr int64_t kBaseMs = 1'800'000'000'000;

struct Record {
  std::string workflow_id, run_id, type, queue;
  int status = 1;
  int64_t start_ms = 0, execution_ms = 0;
  std::optional<int64_t> close_ms;
};

// The runs every test starts with, in namespace "ns" (plus one in "other"): 40 runs, a
// quarter open, types a/b/c, two queues, one workflow id with a two-byte character.
std::vector<Record> SeedRuns() {
  std::vector<Record> runs;
  for (int i = 0; i < 40; ++i) {
    Record r;
    r.workflow_id = i == 7 ? "wé-7" : absl::StrCat("wf-", i);
    r.run_id = absl::StrCat("run-", 100 + (i * 17) % 40);  // not in start order
    r.type = std::string(1, static_cast<char>('a' + i % 3));
    r.queue = absl::StrCat("q", i % 2);
    r.status = i % 4 == 0 ? 1 : 2 + i % 3;
    r.start_ms = kBaseMs + i * 1000;
    r.execution_ms = r.start_ms + 500;
    if (r.status != 1) r.close_ms = r.start_ms + 10'000 + (i % 5) * 100;
    runs.push_back(r);
  }
  return runs;
}

const VisibilityValue* Field(const Record& r, F field, VisibilityValue& scratch) {
  switch (field) {
    case F::kWorkflowId:
      scratch = r.workflow_id;
      break;
    case F::kWorkflowType:
      scratch = r.type;
      break;
    case F::kRunId:
      scratch = r.run_id;
      break;
    case F::kTaskQueue:
      scratch = r.queue;
      break;
    case F::kExecutionStatus:
      scratch = int64_t{r.status};
      break;
    case F::kStartTime:
      scratch = r.start_ms;
      break;
    case F::kExecutionTime:
      scratch = r.execution_ms;
      break;
    case F::kCloseTime:
      if (!r.close_ms.has_value()) return nullptr;
      scratch = *r.close_ms;
      break;
    case F::kCustom:
      return nullptr;  // these runs have no custom attributes
  }
  return &scratch;
}

// The reference semantics of the contract.
bool Matches(const Record& r, const P& p) {
  if (p.kind == P::Kind::kAnd) {
    return std::all_of(p.children.begin(), p.children.end(),
                       [&](const P& c) { return Matches(r, c); });
  }
  if (p.kind == P::Kind::kOr) {
    return std::any_of(p.children.begin(), p.children.end(),
                       [&](const P& c) { return Matches(r, c); });
  }
  VisibilityValue scratch;
  const VisibilityValue* v = Field(r, p.condition.field, scratch);
  if (p.condition.op == Op::kIsNull) return v == nullptr;
  if (p.condition.op == Op::kIsNotNull) return v != nullptr;
  if (v == nullptr) return false;  // an absent close time
  const auto& values = p.condition.values;
  switch (p.condition.op) {
    case Op::kEqual:
      return *v == values[0];
    case Op::kNotEqual:
      return *v != values[0];
    case Op::kLess:
      return *v < values[0];
    case Op::kLessOrEqual:
      return *v <= values[0];
    case Op::kGreater:
      return *v > values[0];
    case Op::kGreaterOrEqual:
      return *v >= values[0];
    case Op::kIn:
      return std::find(values.begin(), values.end(), *v) != values.end();
    case Op::kBetween:
      return values[0] <= *v && *v <= values[1];
    case Op::kStartsWith:
      return std::get<std::string>(*v).rfind(std::get<std::string>(values[0]), 0) == 0;
    case Op::kIsNull:
    case Op::kIsNotNull:
      break;  // answered above
  }
  return false;
}

class VisibilityStoreTest : public BackendTest {
 protected:
  void SetUp() override {
    p_ = Open();
    ASSERT_NE(p_, nullptr);
    auto range = p_->executions().AcquireShard(1, "test");
    ASSERT_TRUE(range.ok()) << range.status();
    range_id_ = *range;
    runs_ = SeedRuns();
    for (const Record& r : runs_) ASSERT_NO_FATAL_FAILURE(Write("ns", r, false));
    Record elsewhere = runs_[1];
    elsewhere.run_id = "run-other";
    ASSERT_NO_FATAL_FAILURE(Write("other", elsewhere, false));
  }

  void Write(const std::string& ns, const Record& r, bool archive_on_close) {
    Commit commit;
    commit.shard_id = 1;
    commit.range_id = range_id_;
    RunWrite& w = commit.runs.emplace_back();
    w.state.set_db_version(1);
    w.state.mutable_execution()->set_namespace_id(ns);
    w.state.mutable_execution()->set_workflow_id(r.workflow_id);
    w.state.mutable_execution()->set_run_id(r.run_id);
    VisibilityRecord v{ns,
                       r.workflow_id,
                       r.run_id,
                       r.type,
                       r.queue,
                       r.status,
                       absl::FromUnixMillis(r.start_ms),
                       absl::FromUnixMillis(r.execution_ms)};
    if (r.close_ms.has_value()) v.close_time = absl::FromUnixMillis(*r.close_ms);
    temporal::api::workflow::v1::WorkflowExecutionInfo info;
    info.mutable_execution()->set_workflow_id(r.workflow_id);
    info.mutable_execution()->set_run_id(r.run_id);
    v.info = info.SerializeAsString();
    w.visibility = v;
    w.archive_on_close = archive_on_close;
    ASSERT_TRUE(p_->executions().Write(commit).ok()) << r.run_id;
  }

  std::set<std::string> Expected(const P& predicate) const {
    std::set<std::string> out;
    for (const Record& r : runs_) {
      if (Matches(r, predicate)) out.insert(r.run_id);
    }
    return out;
  }

  // Every page of List, in order.
  std::vector<std::string> ListAll(const VisibilityFilter& filter, int32_t page_size = 0) {
    std::vector<std::string> ids;
    std::string token;
    for (int pages = 0; pages < 100; ++pages) {
      auto page = p_->visibility().List("ns", filter, page_size, token);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      for (const auto& e : page->executions) ids.push_back(RunIdOfRecord(e));
      token = page->next_page_token;
      if (token.empty()) break;
    }
    return ids;
  }

  // List and Count both give exactly the runs the reference evaluator picks.
  void ExpectSelects(const P& predicate, const std::string& what) {
    SCOPED_TRACE(what);
    std::set<std::string> want = Expected(predicate);
    VisibilityFilter filter;
    filter.predicate = predicate;
    std::vector<std::string> listed = ListAll(filter);
    EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), want);
    EXPECT_EQ(listed.size(), want.size()) << "no run listed twice";
    auto count = p_->visibility().Count("ns", predicate);
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(*count, static_cast<int64_t>(want.size()));
  }

  std::unique_ptr<Persistence> p_;
  int64_t range_id_ = 0;
  std::vector<Record> runs_;
};

TEST_P(VisibilityStoreTest, EveryOperatorOnEveryKindOfField) {
  const int64_t mid = kBaseMs + 20'000;
  const std::vector<std::pair<std::string, P>> cases = {
      {"all", P()},
      {"none", P::Or({})},
      {"id =", P::Of(F::kWorkflowId, Op::kEqual, {std::string("wf-3")})},
      {"type !=", P::Of(F::kWorkflowType, Op::kNotEqual, {std::string("a")})},
      {"run <", P::Of(F::kRunId, Op::kLess, {std::string("run-120")})},
      {"queue >=", P::Of(F::kTaskQueue, Op::kGreaterOrEqual, {std::string("q1")})},
      {"status IN", P::Of(F::kExecutionStatus, Op::kIn, {int64_t{1}, int64_t{3}})},
      {"start >", P::Of(F::kStartTime, Op::kGreater, {mid})},
      {"execution <=", P::Of(F::kExecutionTime, Op::kLessOrEqual, {mid + 500})},
      {"close BETWEEN", P::Of(F::kCloseTime, Op::kBetween, {mid, mid + 9'000})},
      {"close !=", P::Of(F::kCloseTime, Op::kNotEqual, {int64_t{0}})},
      {"close <", P::Of(F::kCloseTime, Op::kLess, {mid + 100'000})},
      {"close IS NULL", P::Of(F::kCloseTime, Op::kIsNull, {})},
      {"close IS NOT NULL", P::Of(F::kCloseTime, Op::kIsNotNull, {})},
      {"starts with", P::Of(F::kWorkflowId, Op::kStartsWith, {std::string("wf-1")})},
      {"starts with 2-byte", P::Of(F::kWorkflowId, Op::kStartsWith, {std::string("wé")})},
      {"nested", P::Or({P::And({P::Of(F::kWorkflowType, Op::kEqual, {std::string("b")}),
                                P::Of(F::kExecutionStatus, Op::kEqual, {int64_t{1}})}),
                        P::Of(F::kRunId, Op::kIn, {std::string("run-101"), std::string("x")}),
                        P::And({P::Or({P::Of(F::kTaskQueue, Op::kEqual, {std::string("q0")})})})})},
  };
  for (const auto& [what, predicate] : cases) ExpectSelects(predicate, what);
  EXPECT_EQ(Expected(cases[15].second).size(), 1u) << "the two-byte prefix selects wé-7 only";
  EXPECT_EQ(Expected(cases[12].second).size(), 10u) << "a quarter of the runs is open";
  EXPECT_EQ(Expected(cases[10].second).size(), 30u) << "open runs have no close time";
}

TEST_P(VisibilityStoreTest, OrderAndPaging) {
  VisibilityFilter newest;
  std::vector<std::string> all = ListAll(newest);
  ASSERT_EQ(all.size(), 40u) << "the other namespace's run is not listed";
  EXPECT_EQ(all.front(), runs_[39].run_id) << "newest start first by default";
  EXPECT_EQ(all.back(), runs_[0].run_id);
  EXPECT_EQ(ListAll(newest, 7), all) << "pages of 7 concatenate to the same list";

  VisibilityFilter by_close;
  by_close.order_by = {{F::kCloseTime, false}, {F::kRunId, true}};
  std::vector<std::string> closed = ListAll(by_close, 9);
  std::vector<Record> want = runs_;
  std::sort(want.begin(), want.end(), [](const Record& a, const Record& b) {
    int64_t ca = a.close_ms.value_or(INT64_MIN), cb = b.close_ms.value_or(INT64_MIN);
    return ca != cb ? ca < cb : a.run_id > b.run_id;
  });
  ASSERT_EQ(closed.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(closed[i], want[i].run_id) << i;

  auto bad = p_->visibility().List("ns", newest, 10, "not-a-token");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

// Predicates at the limits of visibility_store.h, of the shapes that stress a backend's
// parser: long chains, long IN lists, AND/OR alternating at the nesting limit (thin, wide,
// and with a second deep branch at every level), and random trees.
TEST_P(VisibilityStoreTest, PredicatesAtTheLimitsRun) {
  auto id = [](int i) { return P::Of(F::kWorkflowId, Op::kNotEqual, {absl::StrCat("x", i)}); };
  auto start_after = [](int i) { return P::Of(F::kStartTime, Op::kGreater, {kBaseMs + i * 1000}); };
  const int kConditions = kMaxVisibilityConditions;
  std::vector<P> terms;
  for (int i = 0; i < kConditions; ++i) terms.push_back(id(i));
  ExpectSelects(P::And(terms), "2000 AND");
  terms.back() = P::Of(F::kStartTime, Op::kLess, {kBaseMs + 5'000});
  for (P& t : terms) t.condition.op = t.condition.op == Op::kNotEqual ? Op::kEqual : t.condition.op;
  ExpectSelects(P::Or(terms), "2000 OR");
  std::vector<VisibilityValue> values;
  for (int i = 0; i < kConditions; ++i) values.push_back(absl::StrCat("run-", 100 + i));
  ExpectSelects(P::Of(F::kRunId, Op::kIn, values), "IN of 2000");

  // Alternating, `width` conditions beside the deeper branch at each level; `twin` adds a
  // second branch `twin` levels deep at each level.
  std::function<P(int, int, int)> alternate = [&](int levels, int width, int twin) -> P {
    if (levels == 0) return start_after(levels);
    std::vector<P> children = {alternate(levels - 1, width, twin)};
    for (int i = 0; i < width; ++i) children.push_back(start_after(levels * 7 + i));
    if (twin > 0) children.push_back(alternate(std::min(twin, levels - 1), 1, 0));
    return levels % 2 ? P::And(std::move(children)) : P::Or(std::move(children));
  };
  ExpectSelects(alternate(kMaxVisibilityNesting, 1, 0), "thin alternation");
  ExpectSelects(alternate(kMaxVisibilityNesting, kConditions / kMaxVisibilityNesting - 2, 0),
                "wide alternation");
  ExpectSelects(alternate(kMaxVisibilityNesting, 1, kMaxVisibilityNesting), "twin branches");
  ExpectSelects(alternate(kMaxVisibilityNesting, 20, 20), "wide twins");
  // A full binary tree alternating to the deepest it can within the condition limit.
  std::function<P(int, int)> full = [&](int levels, int seed) -> P {
    if (levels == 0) return start_after(seed % 45);
    return (levels % 2 ? P::And
                       : P::Or)({full(levels - 1, seed * 2), full(levels - 1, seed * 2 + 1)});
  };
  ExpectSelects(full(10, 1), "full binary tree");

  std::mt19937 random(42);
  for (int round = 0; round < 20; ++round) {
    int budget = kConditions;
    std::function<P(int)> grow = [&](int levels) -> P {
      if (levels == 0 || budget < 4 || random() % 5 == 0) {
        --budget;
        return random() % 2 ? start_after(random() % 45) : id(random() % 3);
      }
      std::vector<P> children;
      int n = 1 + random() % (random() % 4 == 0 ? 40 : 4);
      for (int i = 0; i < n && budget > 0; ++i) children.push_back(grow(levels - 1));
      return levels % 2 ? P::And(std::move(children)) : P::Or(std::move(children));
    };
    ExpectSelects(grow(kMaxVisibilityNesting), absl::StrCat("random tree ", round));
  }
}

TEST_P(VisibilityStoreTest, BeyondTheLimitsIsRefusedWithoutTheStoresQueryText) {
  P deep = P::Of(F::kWorkflowId, Op::kEqual, {std::string("x")});
  for (int i = 0; i <= kMaxVisibilityNesting; ++i) {
    deep = i % 2 ? P::And({deep, P::Of(F::kRunId, Op::kEqual, {std::string("s")})})
                 : P::Or({deep, P::Of(F::kRunId, Op::kEqual, {std::string("r")})});
  }
  auto count = p_->visibility().Count("ns", deep);
  EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  auto mismatched =
      p_->visibility().Count("ns", P::Of(F::kStartTime, Op::kEqual, {std::string("1")}));
  EXPECT_EQ(mismatched.status().code(), absl::StatusCode::kInvalidArgument);
  for (const absl::Status& s : {count.status(), mismatched.status()}) {
    for (const char* word : {"SELECT", "WHERE", "start_ms", "?"}) {
      EXPECT_EQ(s.message().find(word), std::string::npos) << s.message();
    }
  }
}

TEST_P(VisibilityStoreTest, ClosedBeforeLeavesOutOpenRunsAndRunsQueuedForArchival) {
  Record queued = runs_[1];
  queued.workflow_id = "queued";
  queued.run_id = "run-queued";
  ASSERT_NO_FATAL_FAILURE(Write("ns", queued, true));
  Record archived = runs_[2];
  archived.workflow_id = "archived";
  archived.run_id = "run-archived";
  ASSERT_NO_FATAL_FAILURE(Write("ns", archived, true));
  auto row = p_->archival_queue().Get("ns", "run-archived");
  ASSERT_TRUE(row.ok() && row->has_value());
  (*row)->run_deleted = true;  // the archiver is done with it: retention's again
  ASSERT_TRUE(p_->archival_queue().Put(**row).ok());

  const absl::Time cutoff = absl::FromUnixMillis(kBaseMs + 30'000);
  std::vector<Record> want;
  for (const Record& r : runs_) {
    if (r.close_ms.has_value() && *r.close_ms < kBaseMs + 30'000) want.push_back(r);
  }
  want.push_back(archived);
  std::sort(want.begin(), want.end(), [](const Record& a, const Record& b) {
    return *a.close_ms != *b.close_ms ? *a.close_ms < *b.close_ms : a.run_id < b.run_id;
  });
  auto due = p_->visibility().ListClosedBefore("ns", cutoff, {}, 1000);
  ASSERT_TRUE(due.ok()) << due.status();
  ASSERT_EQ(due->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ((*due)[i].execution().run_id(), want[i].run_id);
  auto first_three = p_->visibility().ListClosedBefore("ns", cutoff, {}, 3);
  ASSERT_TRUE(first_three.ok());
  ASSERT_EQ(first_three->size(), 3u);
  EXPECT_EQ((*first_three)[2].execution().run_id(), want[2].run_id);
  // Paged after (close, run id): the next three, then the rest.
  ClosedRunCursor after{*want[2].close_ms, want[2].run_id};
  auto next = p_->visibility().ListClosedBefore("ns", cutoff, after, 3);
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_EQ(next->size(), std::min<size_t>(3, want.size() - 3));
  for (size_t i = 0; i < next->size(); ++i)
    EXPECT_EQ((*next)[i].execution().run_id(), want[3 + i].run_id);
  after = {*want.back().close_ms, want.back().run_id};
  auto none = p_->visibility().ListClosedBefore("ns", cutoff, after, 10);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  // Strictly before: a run closed exactly at the cutoff stays.
  auto at =
      p_->visibility().ListClosedBefore("ns", absl::FromUnixMillis(*want[0].close_ms), {}, 10);
  ASSERT_TRUE(at.ok());
  EXPECT_TRUE(at->empty());
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(VisibilityStoreTest);

}  // namespace
}  // namespace tock::persistence
