// Custom search attribute columns (visibility_store.h) on every backend: each type written
// through CustomValuesJson and selected by each operator it takes, checked against a
// reference evaluator written here; absent attributes; order by a custom column; counts
// grouped by status; a record rewritten without an attribute leaves its column.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "server-core/persistence/visibility_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

using F = VisibilityField;
using Op = VisibilityOp;
using P = VisibilityPredicate;
using T = CustomType;

constexpr int64_t kBaseMs = 1'800'000'000'000;

const CustomColumn kKeyword{T::kKeyword, 1};
const CustomColumn kKeyword10{T::kKeyword, 10};
const CustomColumn kText{T::kText, 1};
const CustomColumn kInt{T::kInt, 2};
const CustomColumn kDouble{T::kDouble, 3};
const CustomColumn kBool{T::kBool, 1};
const CustomColumn kDatetime{T::kDatetime, 1};
const CustomColumn kList{T::kKeywordList, 1};

struct Record {
  std::string run_id;
  int status = 1;
  int64_t start_ms = 0;
  std::map<std::string, VisibilityValue> custom;  // by column name; the list as JSON text
};

// 30 runs; every third lacks most attributes, so absent values are everywhere.
std::vector<Record> SeedRuns() {
  std::vector<Record> runs;
  const char* notes[] = {"Order shipped late", "order CANCELLED by customer",
                         "payment ok; shipped", "café déjà vu"};
  for (int i = 0; i < 30; ++i) {
    Record r;
    r.run_id = absl::StrCat("run-", 100 + (i * 7) % 30);
    r.status = 1 + i % 3;
    r.start_ms = kBaseMs + i * 1000;
    r.custom[CustomColumnName(kKeyword10)] = absl::StrCat("tenant-", i % 2);
    if (i % 3 != 0) {
      r.custom[CustomColumnName(kKeyword)] = absl::StrCat("c-", i % 5);
      r.custom[CustomColumnName(kText)] = NormalizeText(notes[i % 4]);
      r.custom[CustomColumnName(kInt)] = int64_t{i * 10 - 100};
      r.custom[CustomColumnName(kDouble)] = i * 0.5;
      r.custom[CustomColumnName(kBool)] = int64_t{i % 2};
      r.custom[CustomColumnName(kDatetime)] = (kBaseMs + i * 60'000) * 1'000'000;
      nlohmann::json list = nlohmann::json::array({absl::StrCat("tag", i % 4)});
      if (i % 2 == 0) list.push_back("even");
      r.custom[CustomColumnName(kList)] = list.dump();
    }
    runs.push_back(r);
  }
  return runs;
}

bool Matches(const Record& r, const P& p) {
  if (p.kind == P::Kind::kAnd) {
    return std::all_of(p.children.begin(), p.children.end(),
                       [&](const P& c) { return Matches(r, c); });
  }
  if (p.kind == P::Kind::kOr) {
    return std::any_of(p.children.begin(), p.children.end(),
                       [&](const P& c) { return Matches(r, c); });
  }
  const VisibilityCondition& c = p.condition;
  if (c.field == F::kExecutionStatus && c.op == Op::kEqual) {  // the one system field used here
    return VisibilityValue(int64_t{r.status}) == c.values[0];
  }
  auto it = r.custom.find(CustomColumnName(c.custom));
  if (c.op == Op::kIsNull) return it == r.custom.end();
  if (c.op == Op::kIsNotNull) return it != r.custom.end();
  if (it == r.custom.end()) return false;
  const VisibilityValue& v = it->second;
  const auto& values = c.values;
  if (c.custom.type == T::kText) {
    const std::string& text = std::get<std::string>(v);
    bool all = true;
    for (absl::string_view word :
         absl::StrSplit(NormalizeText(std::get<std::string>(values[0])), ' ', absl::SkipEmpty())) {
      all = all && text.find(absl::StrCat(" ", word, " ")) != std::string::npos;
    }
    return c.op == Op::kEqual ? all : !all;
  }
  if (c.custom.type == T::kKeywordList) {
    const nlohmann::json list = nlohmann::json::parse(std::get<std::string>(v));
    bool holds = false;
    for (const VisibilityValue& want : values) {
      for (const auto& item : list) holds = holds || item.get<std::string>() == std::get<std::string>(want);
    }
    return c.op == Op::kNotEqual ? !holds : holds;
  }
  switch (c.op) {
    case Op::kEqual:
      return v == values[0];
    case Op::kNotEqual:
      return v != values[0];
    case Op::kLess:
      return v < values[0];
    case Op::kLessOrEqual:
      return v <= values[0];
    case Op::kGreater:
      return v > values[0];
    case Op::kGreaterOrEqual:
      return v >= values[0];
    case Op::kIn:
      return std::find(values.begin(), values.end(), v) != values.end();
    case Op::kBetween:
      return values[0] <= v && v <= values[1];
    case Op::kStartsWith:
      return std::get<std::string>(v).rfind(std::get<std::string>(values[0]), 0) == 0;
    default:
      return false;
  }
}

P Custom(CustomColumn column, Op op, std::vector<VisibilityValue> values) {
  return P::Of(F::kCustom, op, std::move(values), column);
}

class VisibilityCustomTest : public BackendTest {
 protected:
  void SetUp() override {
    p_ = Open();
    ASSERT_NE(p_, nullptr);
    auto range = p_->executions().AcquireShard(1, "test");
    ASSERT_TRUE(range.ok()) << range.status();
    range_id_ = *range;
    runs_ = SeedRuns();
    for (const Record& r : runs_) ASSERT_NO_FATAL_FAILURE(Write(r));
  }

  void Write(const Record& r) {
    Commit commit;
    commit.shard_id = 1;
    commit.range_id = range_id_;
    RunWrite& w = commit.runs.emplace_back();
    w.state.set_db_version(versions_[r.run_id]++ + 1);
    w.expected_db_version = w.state.db_version() - 1;
    w.state.mutable_execution()->set_namespace_id("ns");
    w.state.mutable_execution()->set_workflow_id(r.run_id);
    w.state.mutable_execution()->set_run_id(r.run_id);
    VisibilityRecord v{"ns", r.run_id, r.run_id, "t", "q", r.status,
                       absl::FromUnixMillis(r.start_ms), absl::FromUnixMillis(r.start_ms)};
    if (r.status != 1) v.close_time = absl::FromUnixMillis(r.start_ms + 5000);
    temporal::api::workflow::v1::WorkflowExecutionInfo info;
    info.mutable_execution()->set_run_id(r.run_id);
    v.info = info.SerializeAsString();
    std::vector<CustomValue> custom;
    for (const CustomColumn& column : AllCustomColumns()) {
      auto it = r.custom.find(CustomColumnName(column));
      if (it != r.custom.end()) custom.push_back({column, it->second});
    }
    v.custom_json = CustomValuesJson(custom);
    w.visibility = v;
    ASSERT_TRUE(p_->executions().Write(commit).ok()) << r.run_id;
  }

  std::vector<std::string> ListAll(const VisibilityFilter& filter) {
    auto page = p_->visibility().List("ns", filter, 1000, "");
    EXPECT_TRUE(page.ok()) << page.status();
    std::vector<std::string> ids;
    if (page.ok()) {
      for (const auto& e : page->executions) ids.push_back(RunIdOfRecord(e));
    }
    return ids;
  }

  void ExpectSelects(const P& predicate, const std::string& what, size_t at_least = 1) {
    SCOPED_TRACE(what);
    std::set<std::string> want;
    for (const Record& r : runs_) {
      if (Matches(r, predicate)) want.insert(r.run_id);
    }
    EXPECT_GE(want.size(), at_least) << "the case selects something";
    EXPECT_LT(want.size(), runs_.size()) << "the case leaves something out";
    VisibilityFilter filter;
    filter.predicate = predicate;
    std::vector<std::string> listed = ListAll(filter);
    EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), want);
    auto count = p_->visibility().Count("ns", predicate);
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(*count, static_cast<int64_t>(want.size()));
  }

  std::unique_ptr<Persistence> p_;
  int64_t range_id_ = 0;
  std::vector<Record> runs_;
  std::map<std::string, int64_t> versions_;
};

TEST_P(VisibilityCustomTest, EveryTypeByEveryOperatorItTakes) {
  const int64_t minute_ns = 60'000'000'000;
  const int64_t base_ns = kBaseMs * 1'000'000;
  const std::vector<std::pair<std::string, P>> cases = {
      {"keyword =", Custom(kKeyword, Op::kEqual, {std::string("c-2")})},
      {"keyword !=", Custom(kKeyword, Op::kNotEqual, {std::string("c-2")})},
      {"keyword IN", Custom(kKeyword, Op::kIn, {std::string("c-1"), std::string("c-4")})},
      {"keyword STARTS_WITH", Custom(kKeyword10, Op::kStartsWith, {std::string("tenant-1")})},
      {"keyword <", Custom(kKeyword, Op::kLess, {std::string("c-2")})},
      {"keyword IS NULL", Custom(kKeyword, Op::kIsNull, {})},
      {"keyword IS NOT NULL", Custom(kKeyword, Op::kIsNotNull, {})},
      {"text one word", Custom(kText, Op::kEqual, {std::string("SHIPPED")})},
      {"text two words", Custom(kText, Op::kEqual, {std::string("order shipped")})},
      {"text accented", Custom(kText, Op::kEqual, {std::string("déjà")})},
      {"text not", Custom(kText, Op::kNotEqual, {std::string("shipped")})},
      {"text part of a word is no match", Custom(kText, Op::kEqual, {std::string("ship late")})},
      {"int >=", Custom(kInt, Op::kGreaterOrEqual, {int64_t{0}})},
      {"int < negative", Custom(kInt, Op::kLess, {int64_t{-50}})},
      {"int BETWEEN", Custom(kInt, Op::kBetween, {int64_t{-20}, int64_t{60}})},
      {"int IN", Custom(kInt, Op::kIn, {int64_t{-90}, int64_t{100}, int64_t{7}})},
      {"double >", Custom(kDouble, Op::kGreater, {7.25})},
      {"double =", Custom(kDouble, Op::kEqual, {2.5})},
      {"bool =", Custom(kBool, Op::kEqual, {int64_t{1}})},
      {"bool !=", Custom(kBool, Op::kNotEqual, {int64_t{1}})},
      {"datetime <", Custom(kDatetime, Op::kLess, {base_ns + 10 * minute_ns})},
      {"datetime BETWEEN", Custom(kDatetime, Op::kBetween, {base_ns + 5 * minute_ns, base_ns + 20 * minute_ns})},
      {"list holds", Custom(kList, Op::kEqual, {std::string("even")})},
      {"list holds one of", Custom(kList, Op::kIn, {std::string("tag1"), std::string("tag3")})},
      {"list lacks", Custom(kList, Op::kNotEqual, {std::string("even")})},
      {"list IS NULL", Custom(kList, Op::kIsNull, {})},
      {"mixed", P::Or({P::And({Custom(kKeyword, Op::kEqual, {std::string("c-1")}),
                                Custom(kList, Op::kEqual, {std::string("even")})}),
                        Custom(kText, Op::kEqual, {std::string("cancelled customer")}),
                        P::Of(F::kExecutionStatus, Op::kEqual, {int64_t{3}})})},
  };
  for (const auto& [what, predicate] : cases) {
    ExpectSelects(predicate, what, what == "text part of a word is no match" ? 0 : 1);
  }
}

TEST_P(VisibilityCustomTest, WrongValueTypesAndOperatorsAreRefused) {
  for (const P& bad : {Custom(kInt, Op::kEqual, {std::string("7")}),
                       Custom(kDouble, Op::kEqual, {int64_t{7}}),
                       Custom(kText, Op::kLess, {std::string("a")}),
                       Custom(kList, Op::kStartsWith, {std::string("a")}),
                       Custom(kBool, Op::kGreater, {int64_t{0}}),
                       Custom(CustomColumn{T::kInt, 4}, Op::kEqual, {int64_t{1}})}) {
    auto count = p_->visibility().Count("ns", bad);
    EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument) << count.status();
    EXPECT_EQ(std::string(count.status().message()).find("SELECT"), std::string::npos);
  }
}

TEST_P(VisibilityCustomTest, OrderByACustomColumnWithAbsentValuesFirstAscending) {
  VisibilityFilter filter;
  filter.order_by = {{F::kCustom, false, kInt}, {F::kRunId, false}};
  std::vector<std::string> listed = ListAll(filter);
  std::vector<Record> want = runs_;
  auto key = [&](const Record& r) {
    auto it = r.custom.find(CustomColumnName(kInt));
    return it == r.custom.end() ? INT64_MIN : std::get<int64_t>(it->second);
  };
  std::sort(want.begin(), want.end(), [&](const Record& a, const Record& b) {
    return key(a) != key(b) ? key(a) < key(b) : a.run_id < b.run_id;
  });
  ASSERT_EQ(listed.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(listed[i], want[i].run_id) << i;
}

TEST_P(VisibilityCustomTest, CountsGroupedByStatus) {
  auto groups = p_->visibility().CountByStatus(
      "ns", Custom(kKeyword, Op::kIsNotNull, {}));
  ASSERT_TRUE(groups.ok()) << groups.status();
  std::map<int, int64_t> want;
  for (const Record& r : runs_) {
    if (r.custom.contains(CustomColumnName(kKeyword))) ++want[r.status];
  }
  const std::map<int, int64_t> got(groups->begin(), groups->end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(groups->size(), 2u) << "runs with the attribute are Completed or Failed only";
}

TEST_P(VisibilityCustomTest, ARecordRewrittenWithoutAnAttributeLeavesItsColumn) {
  Record r = runs_[1];
  ASSERT_TRUE(r.custom.contains(CustomColumnName(kKeyword)));
  r.custom.erase(CustomColumnName(kKeyword));
  r.custom[CustomColumnName(kInt)] = int64_t{424242};
  ASSERT_NO_FATAL_FAILURE(Write(r));
  runs_[1] = r;
  ExpectSelects(Custom(kInt, Op::kEqual, {int64_t{424242}}), "the new value");
  ExpectSelects(Custom(kKeyword, Op::kIsNull, {}), "the removed one");
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(VisibilityCustomTest);

}  // namespace
}  // namespace tock::persistence
