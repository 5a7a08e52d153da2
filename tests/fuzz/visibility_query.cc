// ListWorkflowExecutions / CountWorkflowExecutions queries (server-core/visibility/query.h):
// any text is refused with a bounded INVALID_ARGUMENT or compiles to a filter within the
// stated limits, which the SQLite store then runs without an error of its own.
#include <algorithm>
#include <memory>

#include "server-core/persistence/persistence.h"
#include "server-core/visibility/query.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using tock::persistence::VisibilityPredicate;

// Conditions (an IN of n values counts n) and AND/OR depth, as visibility_store.h counts them.
void Measure(const VisibilityPredicate& p, int depth, int& conditions, int& max_depth) {
  if (p.kind == VisibilityPredicate::Kind::kCondition) {
    conditions += p.condition.op == tock::persistence::VisibilityOp::kIn
                      ? static_cast<int>(p.condition.values.size())
                      : 1;
    return;
  }
  max_depth = std::max(max_depth, depth + 1);
  if (depth > tock::persistence::kMaxVisibilityNesting) return;  // checked by the caller
  for (const VisibilityPredicate& child : p.children)
    Measure(child, depth + 1, conditions, max_depth);
}

// One custom search attribute of each type, so that the typed values, the operators each type
// takes and the stores' custom SQL (KeywordList sub-selects, Text word matches) are fuzzed too.
const tock::server::visibility::SearchAttributeSchema& Schema() {
  static const auto* schema = [] {
    google::protobuf::Map<std::string, std::string> aliases;
    aliases["Keyword01"] = "CustomerId";
    aliases["Text01"] = "Notes";
    aliases["Int01"] = "Amount";
    aliases["Double01"] = "Score";
    aliases["Bool01"] = "Paid";
    aliases["Datetime01"] = "DueAt";
    aliases["KeywordList01"] = "Tags";
    return new tock::server::visibility::SearchAttributeSchema(aliases);
  }();
  return *schema;
}

tock::persistence::VisibilityStore& Store() {
  static auto* persistence = [] {
    tock::persistence::PersistenceConfig config;  // SQLite in memory
    auto opened = tock::persistence::OpenPersistence(config);
    if (!opened.ok()) tock::fuzz::Fail("OpenPersistence", opened.status().ToString());
    return opened->release();
  }();
  return persistence->visibility();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view query = tock::fuzz::AsText(data, size);
  // Plenty of stack for the 100 parentheses allowed, too little for a parser that recursed
  // per parenthesis.
  absl::StatusOr<tock::persistence::VisibilityFilter> filter;
  tock::fuzz::OnSmallStack(tock::fuzz::kParserStackBytes, [&] {
    filter = tock::server::visibility::CompileQuery(absl::string_view(query.data(), query.size()),
                                                    Schema());
  });
  if (!filter.ok()) {
    FUZZ_CHECK(filter.status().code() == absl::StatusCode::kInvalidArgument,
               filter.status().ToString());
    FUZZ_CHECK(filter.status().message().size() <= tock::fuzz::kMaxMessageBytes,
               filter.status().message());
    return 0;
  }
  int conditions = 0;
  int depth = 0;
  Measure(filter->predicate, 0, conditions, depth);
  FUZZ_CHECK(conditions <= tock::persistence::kMaxVisibilityConditions, std::string(query));
  FUZZ_CHECK(depth <= tock::persistence::kMaxVisibilityNesting, std::string(query));
  // Within the limits, the store runs every filter (its own errors, like SQLite's parser
  // stack, must not show through).
  auto page = Store().List("fuzz-namespace", *filter, 10, "");
  FUZZ_CHECK(page.ok(), page.status().ToString());
  auto count = filter->group_by_status ? Store().CountByStatus("fuzz-namespace", filter->predicate).status()
                                       : Store().Count("fuzz-namespace", filter->predicate).status();
  FUZZ_CHECK(count.ok(), count.ToString());
  return 0;
}
