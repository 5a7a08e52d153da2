// Where an absent close time sorts (visibility_store.h: "an absent close time sorts before
// every time"): first in ascending close-time order, last in descending order, on every
// backend. PostgreSQL's own default is the opposite, so this pins the backends together.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/visibility_store.h"
#include "tests/conformance/execution_fixture.h"

namespace tock::persistence::conformance {
namespace {

class VisibilityOrderTest : public ExecutionStoreFixture {
 protected:
  // A run closed `close_offset_ms` after kBaseMs, or open when negative.
  void Put(const std::string& run_id, int64_t close_offset_ms) {
    RunWrite w = RunChange(absl::StrCat("wf-", run_id), run_id, 1);
    VisibilityRecord v = Visibility("ns", w.state.execution().workflow_id(), run_id,
                                    close_offset_ms < 0 ? kRunning : kCompleted);
    if (close_offset_ms >= 0) v.close_time = absl::FromUnixMillis(kBaseMs + close_offset_ms);
    w.visibility = v;
    absl::Status s = WriteRuns({w});
    ASSERT_TRUE(s.ok()) << s;
  }

  std::vector<std::string> Listed(std::vector<VisibilityOrderKey> order, int32_t page_size) {
    VisibilityFilter filter;
    filter.order_by = std::move(order);
    std::vector<std::string> ids;
    std::string token;
    for (int pages = 0; pages < 50; ++pages) {
      auto page = p_->visibility().List("ns", filter, page_size, token);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      for (const auto& e : page->executions) ids.push_back(RunIdOfRecord(e));
      token = page->next_page_token;
      if (token.empty()) break;
    }
    return ids;
  }
};

TEST_P(VisibilityOrderTest, AnAbsentCloseTimeSortsBeforeEveryTime) {
  ASSERT_NO_FATAL_FAILURE(Put("open-b", -1));
  ASSERT_NO_FATAL_FAILURE(Put("closed-2", 2000));
  ASSERT_NO_FATAL_FAILURE(Put("open-a", -1));
  ASSERT_NO_FATAL_FAILURE(Put("closed-1", 1000));
  ASSERT_NO_FATAL_FAILURE(Put("closed-3", 3000));
  ASSERT_NO_FATAL_FAILURE(Put("open-c", -1));
  using F = VisibilityField;
  for (int32_t page_size : {0, 2}) {
    SCOPED_TRACE(page_size);
    EXPECT_EQ(Listed({{F::kCloseTime, false}, {F::kRunId, false}}, page_size),
              (std::vector<std::string>{"open-a", "open-b", "open-c", "closed-1", "closed-2",
                                        "closed-3"}));
    EXPECT_EQ(Listed({{F::kCloseTime, true}, {F::kRunId, false}}, page_size),
              (std::vector<std::string>{"closed-3", "closed-2", "closed-1", "open-a", "open-b",
                                        "open-c"}));
  }
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(VisibilityOrderTest);

}  // namespace
}  // namespace tock::persistence::conformance
