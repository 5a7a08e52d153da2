// The ArchivalQueueStore contract (archival_queue_store.h) on every backend: rows queued by
// the commit that closes a run (and only by it), Put/Get round trips, the due listings with
// their filters, order and limits, counts, and failing rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/archival_queue_store.h"
#include "tests/conformance/execution_fixture.h"

namespace tock::persistence::conformance {
namespace {

const absl::Time kNow = absl::FromUnixMillis(kBaseMs + 3'600'000);

ArchivalQueueRow Row(const std::string& ns, const std::string& run_id, int64_t close_offset_ms) {
  ArchivalQueueRow r;
  r.namespace_id = ns;
  r.run_id = run_id;
  r.workflow_id = absl::StrCat("wf-", run_id);
  r.close_time = absl::FromUnixMillis(kBaseMs + close_offset_ms);
  return r;
}

std::string Dump(const ArchivalQueueRow& r) {
  return absl::StrCat(r.namespace_id, "|", r.run_id, "|", r.workflow_id, "|",
                      absl::ToUnixMillis(r.close_time), "|", static_cast<int>(r.visibility), "|",
                      static_cast<int>(r.history), "|", r.run_deleted, "|", r.attempts, "|",
                      r.last_error, "|", absl::ToUnixMillis(r.next_attempt));
}

std::vector<std::string> RunIds(const absl::StatusOr<std::vector<ArchivalQueueRow>>& rows) {
  EXPECT_TRUE(rows.ok()) << rows.status();
  std::vector<std::string> ids;
  if (rows.ok()) {
    for (const ArchivalQueueRow& r : *rows) ids.push_back(r.run_id);
  }
  return ids;
}

class ArchivalQueueTest : public ExecutionStoreFixture {
 protected:
  ArchivalQueueStore& queue() { return p_->archival_queue(); }
  void Put(const ArchivalQueueRow& row) {
    absl::Status s = queue().Put(row);
    ASSERT_TRUE(s.ok()) << s;
  }
};

TEST_P(ArchivalQueueTest, TheCommitThatClosesARunQueuesIt) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run"));
  // An open run's visibility update does not queue it, even when asked to.
  RunWrite open = RunChange("wf", "run", 2);
  open.visibility = Visibility("ns", "wf", "run", kRunning);
  open.archive_on_close = true;
  ASSERT_TRUE(WriteRuns({open}).ok());
  auto row = queue().Get("ns", "run");
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_FALSE(row->has_value());

  RunWrite close = RunChange("wf", "run", 3, kCompleted);
  close.visibility = Visibility("ns", "wf", "run", kCompleted);
  close.archive_on_close = true;
  ASSERT_TRUE(WriteRuns({close}).ok());
  row = queue().Get("ns", "run");
  ASSERT_TRUE(row.ok() && row->has_value()) << row.status();
  EXPECT_EQ((*row)->workflow_id, "wf");
  EXPECT_EQ((*row)->close_time, *close.visibility->close_time);
  EXPECT_EQ((*row)->visibility, ArchivalStep::kPending);
  EXPECT_EQ((*row)->history, ArchivalStep::kPending);
  EXPECT_FALSE((*row)->run_deleted);
  EXPECT_EQ((*row)->attempts, 0);
  EXPECT_EQ((*row)->last_error, "");

  // The archiver's progress is not reset by another write of the closed run.
  (*row)->visibility = ArchivalStep::kArchived;
  ASSERT_NO_FATAL_FAILURE(Put(**row));
  RunWrite again = RunChange("wf", "run", 4, kCompleted);
  again.visibility = Visibility("ns", "wf", "run", kCompleted);
  again.archive_on_close = true;
  ASSERT_TRUE(WriteRuns({again}).ok());
  EXPECT_EQ(queue().Get("ns", "run").value()->visibility, ArchivalStep::kArchived);

  // Closed without archival: no row.
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf-plain", "run-plain"));
  RunWrite plain = RunChange("wf-plain", "run-plain", 2, kCompleted);
  plain.visibility = Visibility("ns", "wf-plain", "run-plain", kCompleted);
  ASSERT_TRUE(WriteRuns({plain}).ok());
  EXPECT_FALSE(queue().Get("ns", "run-plain").value().has_value());
}

TEST_P(ArchivalQueueTest, PutInsertsOrReplacesEveryField) {
  ArchivalQueueRow r = Row("ns", "run", 10);
  ASSERT_NO_FATAL_FAILURE(Put(r));
  auto got = queue().Get("ns", "run");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(Dump(**got), Dump(r));

  r.visibility = ArchivalStep::kSkipped;
  r.history = ArchivalStep::kArchived;
  r.run_deleted = true;
  r.attempts = 3;
  r.last_error = "s3: 503 Slow Down, é";
  r.next_attempt = absl::FromUnixMillis(kBaseMs + 99'999);
  ASSERT_NO_FATAL_FAILURE(Put(r));
  got = queue().Get("ns", "run");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(Dump(**got), Dump(r));

  EXPECT_FALSE(queue().Get("ns", "other").value().has_value());
  EXPECT_FALSE(queue().Get("other", "run").value().has_value());
}

TEST_P(ArchivalQueueTest, VisibilityDueIsPendingAndDueOldestCloseFirst) {
  ArchivalQueueRow late = Row("ns", "late", 300);
  ArchivalQueueRow early = Row("other", "early", 100);
  ArchivalQueueRow middle = Row("ns", "middle", 200);
  ArchivalQueueRow done = Row("ns", "done", 50);
  done.visibility = ArchivalStep::kArchived;
  ArchivalQueueRow skipped = Row("ns", "skipped", 60);
  skipped.visibility = ArchivalStep::kSkipped;
  ArchivalQueueRow backing_off = Row("ns", "backing-off", 70);
  backing_off.next_attempt = kNow + absl::Milliseconds(1);
  ArchivalQueueRow due_now = Row("ns", "due-now", 400);
  due_now.next_attempt = kNow;
  for (const auto& r : {late, early, middle, done, skipped, backing_off, due_now}) {
    ASSERT_NO_FATAL_FAILURE(Put(r));
  }
  EXPECT_EQ(RunIds(queue().VisibilityDue(kNow, 10)),
            (std::vector<std::string>{"early", "middle", "late", "due-now"}));
  EXPECT_EQ(RunIds(queue().VisibilityDue(kNow, 2)), (std::vector<std::string>{"early", "middle"}));
  EXPECT_EQ(RunIds(queue().VisibilityDue(kNow + absl::Milliseconds(1), 10)),
            (std::vector<std::string>{"backing-off", "early", "middle", "late", "due-now"}));
}

TEST_P(ArchivalQueueTest, RetentionDueIsOneNamespacesLiveRunsClosedBeforeTheCutoff) {
  ArchivalQueueRow a = Row("ns", "a", 100);
  ArchivalQueueRow b = Row("ns", "b", 200);
  ArchivalQueueRow at_cutoff = Row("ns", "at-cutoff", 500);
  ArchivalQueueRow deleted = Row("ns", "deleted", 50);
  deleted.run_deleted = true;
  ArchivalQueueRow waiting = Row("ns", "waiting", 150);
  waiting.next_attempt = kNow + absl::Seconds(5);
  waiting.attempts = 2;
  waiting.last_error = "boom";
  ArchivalQueueRow elsewhere = Row("other", "elsewhere", 10);
  ArchivalQueueRow archived = Row("ns", "archived", 300);
  archived.visibility = ArchivalStep::kArchived;
  archived.history = ArchivalStep::kArchived;
  for (const auto& r : {b, a, at_cutoff, deleted, waiting, elsewhere, archived}) {
    ASSERT_NO_FATAL_FAILURE(Put(r));
  }
  const absl::Time cutoff = absl::FromUnixMillis(kBaseMs + 500);
  EXPECT_EQ(RunIds(queue().RetentionDue("ns", cutoff, kNow, 10)),
            (std::vector<std::string>{"a", "b", "archived"}));
  EXPECT_EQ(RunIds(queue().RetentionDue("ns", cutoff, kNow, 1)), (std::vector<std::string>{"a"}));
  EXPECT_EQ(RunIds(queue().RetentionDue("ns", cutoff, kNow + absl::Seconds(5), 10)),
            (std::vector<std::string>{"a", "waiting", "b", "archived"}));
  EXPECT_EQ(RunIds(queue().RetentionDue("nobody", cutoff, kNow, 10)), std::vector<std::string>{});

  auto live = queue().NamespacesWithLiveRuns();
  ASSERT_TRUE(live.ok()) << live.status();
  std::sort(live->begin(), live->end());
  EXPECT_EQ(*live, (std::vector<std::string>{"ns", "other"}));
  elsewhere.run_deleted = true;
  ASSERT_NO_FATAL_FAILURE(Put(elsewhere));
  live = queue().NamespacesWithLiveRuns();
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(*live, (std::vector<std::string>{"ns"}));
}

TEST_P(ArchivalQueueTest, CountsAndFailingRows) {
  std::vector<ArchivalQueueRow> rows;
  for (int i = 0; i < 9; ++i) {
    ArchivalQueueRow r = Row("ns", absl::StrCat("run-", i), i * 100);
    r.visibility = static_cast<ArchivalStep>(i % 3);
    r.history = static_cast<ArchivalStep>((i / 3) % 3);
    r.run_deleted = i >= 6;
    if (i % 4 == 1) {
      r.attempts = i;
      r.last_error = absl::StrCat("error ", i);
    }
    rows.push_back(r);
    ASSERT_NO_FATAL_FAILURE(Put(r));
  }
  ArchivalQueueRow other = Row("other", "x", 0);
  other.last_error = "elsewhere";
  ASSERT_NO_FATAL_FAILURE(Put(other));

  auto counts = queue().Counts("ns");
  ASSERT_TRUE(counts.ok()) << counts.status();
  for (int step = 0; step < 3; ++step) {
    EXPECT_EQ(counts->visibility[step], 3) << step;
    EXPECT_EQ(counts->history[step], 3) << step;
  }
  EXPECT_EQ(counts->runs_deleted, 3);
  EXPECT_EQ(counts->failing, 2);  // run-1 and run-5
  auto none = queue().Counts("nobody");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->visibility[0] + none->history[0] + none->runs_deleted + none->failing, 0);

  EXPECT_EQ(RunIds(queue().Failing("ns", 10)), (std::vector<std::string>{"run-5", "run-1"}));
  EXPECT_EQ(RunIds(queue().Failing("ns", 1)), (std::vector<std::string>{"run-5"}));
  auto failing = queue().Failing("ns", 10);
  ASSERT_TRUE(failing.ok());
  EXPECT_EQ(Dump(failing->front()), Dump(rows[5]));

  // A success clears the error: the row stops failing.
  rows[5].last_error = "";
  rows[5].attempts = 0;
  ASSERT_NO_FATAL_FAILURE(Put(rows[5]));
  EXPECT_EQ(RunIds(queue().Failing("ns", 10)), (std::vector<std::string>{"run-1"}));
  EXPECT_EQ(queue().Counts("ns")->failing, 1);
}

TEST_P(ArchivalQueueTest, RowsSurviveReopening) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database is gone once closed";
  ArchivalQueueRow r = Row("ns", "run", 10);
  r.history = ArchivalStep::kArchived;
  r.last_error = "kept";
  ASSERT_NO_FATAL_FAILURE(Put(r));
  p_.reset();
  p_ = Open();
  ASSERT_NE(p_, nullptr);
  auto got = queue().Get("ns", "run");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(Dump(**got), Dump(r));
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(ArchivalQueueTest);

}  // namespace
}  // namespace tock::persistence::conformance
