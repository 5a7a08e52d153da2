// A run's history stored in batches (history_batches.h), on every backend: reads that start,
// stop or page in the middle of a batch hand over exactly the events asked for; a batch
// that does not follow the run's stored events fails its commit; a database from before
// batches (one row per event) is migrated and reads back the same.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/history_batches.h"
#include "tests/conformance/execution_fixture.h"

namespace tock::persistence::conformance {
namespace {

class HistoryBatchTest : public ExecutionStoreFixture {};

// Ids first..last.
std::vector<int64_t> Ids(int64_t first, int64_t last) {
  std::vector<int64_t> ids;
  for (int64_t id = first; id <= last; ++id) ids.push_back(id);
  return ids;
}

TEST_P(HistoryBatchTest, ReadsStartAndStopInsideBatches) {
  // Batches 1-3, 4-10 and 11-260 (three batches of at most kMaxBatchEvents: 11-110,
  // 111-210, 211-260).
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run", 3));
  RunWrite second = RunChange("wf", "run", 2);
  second.events = Events("run", 4, 10);
  ASSERT_TRUE(WriteRuns({second}).ok());
  RunWrite third = RunChange("wf", "run", 3);
  third.events = Events("run", 11, 260);
  ASSERT_TRUE(WriteRuns({third}).ok());

  EXPECT_EQ(EventIds("run", 2, 3), Ids(2, 2));
  EXPECT_EQ(EventIds("run", 5, 7), Ids(5, 6));
  EXPECT_EQ(EventIds("run", 3, 12), Ids(3, 11));
  EXPECT_EQ(EventIds("run", 9, 1000, 4), Ids(9, 12));
  EXPECT_EQ(EventIds("run", 100, 1000, 150), Ids(100, 249));
  EXPECT_EQ(EventIds("run", 1, 1000), Ids(1, 260));
  EXPECT_EQ(EventIds("run", 260, 261), Ids(260, 260));
  EXPECT_TRUE(EventIds("run", 261, 1000).empty());
  EXPECT_TRUE(EventIds("run", 7, 1000, 0).empty());

  // The bytes handed over are each event's own, in order.
  std::vector<std::string> bytes;
  absl::StatusOr<int64_t> visited = store().VisitEventBytes(
      "run", 8, 113, -1, [&](std::string_view b) { bytes.emplace_back(b); });
  ASSERT_TRUE(visited.ok()) << visited.status();
  ASSERT_EQ(*visited, 105);
  for (int64_t id = 8; id < 113; ++id) {
    EXPECT_EQ(bytes[id - 8], Event("run", id).SerializeAsString()) << id;
  }
}

TEST_P(HistoryBatchTest, EventsThatDoNotFollowTheStoredOnesFailTheirCommit) {
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf", "run", 5));
  for (int64_t first : {1, 3, 5}) {
    SCOPED_TRACE(first);
    RunWrite overlapping = RunChange("wf", "run", 2);
    overlapping.events = Events("run", first, 7);
    absl::Status s = WriteRuns({overlapping});
    EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
    EXPECT_EQ(StoredVersion("wf", "run"), 1) << "nothing of the commit was written";
    EXPECT_EQ(EventIds("run"), Ids(1, 5));
  }
  // With another run in the same commit (written together, in one statement on
  // PostgreSQL): the whole commit fails.
  ASSERT_NO_FATAL_FAILURE(CreateRun("wf-2", "run-2", 2));
  RunWrite overlapping = RunChange("wf", "run", 2);
  overlapping.events = Events("run", 4, 6);
  RunWrite other = RunChange("wf-2", "run-2", 2);
  other.events = Events("run-2", 3, 4);
  absl::Status s = WriteRuns({other, overlapping});
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_EQ(EventIds("run"), Ids(1, 5));
  EXPECT_EQ(EventIds("run-2"), Ids(1, 2));
  EXPECT_EQ(StoredVersion("wf-2", "run-2"), 1);
  // Events that follow are written.
  overlapping.events = Events("run", 6, 7);
  s = WriteRuns({other, overlapping});
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(EventIds("run"), Ids(1, 7));
  EXPECT_EQ(EventIds("run-2"), Ids(1, 4));
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(HistoryBatchTest);

// A database from before batches: its one-row-per-event history is migrated (each event a
// batch of one) and reads back whole; new events go on after it.
class HistoryBatchUpgradeTest : public BackendTest {};

TEST_P(HistoryBatchUpgradeTest, AHistoryStoredOneRowPerEventIsMigrated) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database cannot be prepared beforehand";
  MigrateBefore(/*sqlite: history in batches*/ 18, /*postgres*/ 18);
  // Events of 300 bytes and more: their length prefix takes two bytes.
  std::vector<HistoryEvent> old = Events("run-old", 1, 4);
  old[2].mutable_workflow_task_scheduled_event_attributes()->mutable_task_queue()->set_name(
      std::string(300, 'q'));
  std::string rows;
  for (const HistoryEvent& e : old) {
    const std::string hex = absl::BytesToHexString(e.SerializeAsString());
    absl::StrAppend(&rows, rows.empty() ? "" : ", ", "('run-old', ", e.event_id(), ", ",
                    IsPostgres() ? absl::StrCat("'\\x", hex, "'::bytea") : absl::StrCat("X'", hex, "'"),
                    ")");
  }
  RunRaw(absl::StrCat("INSERT INTO history_events(run_id, event_id, data) VALUES ", rows));

  std::unique_ptr<Persistence> p = Open();
  ASSERT_NE(p, nullptr);
  absl::StatusOr<std::vector<HistoryEvent>> read = p->executions().ReadEvents("run-old", 1, 100, 100);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), old.size());
  for (size_t i = 0; i < old.size(); ++i) {
    EXPECT_EQ((*read)[i].SerializeAsString(), old[i].SerializeAsString()) << i;
  }
  read = p->executions().ReadEvents("run-old", 3, 4, 100);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].SerializeAsString(), old[2].SerializeAsString());
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(HistoryBatchUpgradeTest);

}  // namespace
}  // namespace tock::persistence::conformance
