// The BatchStore contract (batch_store.h) on every backend: create once per job id, update,
// get, list newest first with offsets, the running ones across namespaces, and records that
// outlive a reopen.
#include <gtest/gtest.h>

#include <functional>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"
#include "server-core/persistence/batch_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

namespace enums = temporal::api::enums::v1;

BatchOperationRecord Record(const std::string& ns, const std::string& job, int64_t start_s,
                            bool running = true) {
  BatchOperationRecord r;
  r.set_namespace_id(ns);
  r.mutable_request()->set_job_id(job);
  r.mutable_request()->set_reason("because");
  r.mutable_request()->set_visibility_query("WorkflowType = 'x'");
  r.mutable_request()->mutable_termination_operation();
  r.set_state(running ? enums::BATCH_OPERATION_STATE_RUNNING : enums::BATCH_OPERATION_STATE_COMPLETED);
  r.mutable_start_time()->set_seconds(start_s);
  r.set_total_operation_count(10);
  return r;
}

// call(i) for every i below n, each on a thread of its own, all released at once (on
// PostgreSQL each on a connection of its own); what each returned.
std::vector<absl::Status> AllAtOnce(int n, const std::function<absl::Status(int)>& call) {
  std::vector<absl::Status> out(n);
  std::latch ready(n);
  std::vector<std::jthread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      ready.arrive_and_wait();
      out[i] = call(i);
    });
  }
  threads.clear();  // joins them
  return out;
}

class BatchStoreTest : public BackendTest {};

TEST_P(BatchStoreTest, CreateOnceUpdateGetAndList) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  BatchStore& store = p->batches();
  ASSERT_TRUE(store.Create(Record("ns", "job-1", 100)).ok());
  ASSERT_TRUE(store.Create(Record("ns", "job-2", 200, false)).ok());
  ASSERT_TRUE(store.Create(Record("other", "job-1", 150)).ok()) << "job ids are per namespace";
  EXPECT_EQ(store.Create(Record("ns", "job-1", 300)).code(), absl::StatusCode::kAlreadyExists);

  BatchOperationRecord progressed = Record("ns", "job-1", 100);
  progressed.set_complete_operation_count(7);
  progressed.set_cursor_set(true);
  progressed.set_cursor_run_id("run-9");
  ASSERT_TRUE(store.Update(progressed).ok());
  auto got = store.Get("ns", "job-1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->complete_operation_count(), 7);
  EXPECT_EQ(got->cursor_run_id(), "run-9");
  EXPECT_EQ(got->request().reason(), "because");
  EXPECT_EQ(store.Get("ns", "nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Update(Record("ns", "nope", 1)).code(), absl::StatusCode::kNotFound);

  auto listed = store.List("ns", 10, 0);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].request().job_id(), "job-2") << "newest start first";
  auto second_page = store.List("ns", 1, 1);
  ASSERT_TRUE(second_page.ok());
  ASSERT_EQ(second_page->size(), 1u);
  EXPECT_EQ((*second_page)[0].request().job_id(), "job-1");

  auto running = store.ListRunning();
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_EQ(running->size(), 2u) << "job-1 of both namespaces; job-2 is finished";
  progressed.set_state(enums::BATCH_OPERATION_STATE_COMPLETED);
  progressed.set_revision(1);  // as written by the update above
  ASSERT_TRUE(store.Update(progressed).ok());
  running = store.ListRunning();
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].namespace_id(), "other");
}

TEST_P(BatchStoreTest, ANamespaceHasOneRunningBatchEvenUnderConcurrentCreates) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  BatchStore& store = p->batches();
  constexpr int kCallers = 8;
  std::vector<absl::Status> created = AllAtOnce(
      kCallers, [&](int i) { return store.Create(Record("ns", absl::StrCat("job-", i), 100 + i)); });
  int ok = 0;
  std::string winner;
  for (int i = 0; i < kCallers; ++i) {
    if (created[i].ok()) {
      ++ok;
      winner = absl::StrCat("job-", i);
      continue;
    }
    EXPECT_EQ(created[i].code(), absl::StatusCode::kResourceExhausted) << created[i];
  }
  EXPECT_EQ(ok, 1) << "one running batch per namespace";
  auto running = store.ListRunning();
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].request().job_id(), winner);

  EXPECT_TRUE(store.Create(Record("other", "job-1", 100)).ok()) << "another namespace";
  EXPECT_TRUE(store.Create(Record("ns", "finished", 100, false)).ok()) << "not running";
  EXPECT_EQ(store.Create(Record("ns", winner, 100)).code(), absl::StatusCode::kAlreadyExists);
  // Once it has ended, the namespace may start another.
  BatchOperationRecord ended = Record("ns", winner, 100, false);
  ASSERT_TRUE(store.Update(ended).ok());
  EXPECT_TRUE(store.Create(Record("ns", "next", 300)).ok());
}

TEST_P(BatchStoreTest, AnUpdateIsACompareAndSwapOnTheRevision) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  BatchStore& store = p->batches();
  BatchOperationRecord created = Record("ns", "job", 100);
  created.set_revision(5);  // whatever the caller had: a new record starts at 0
  ASSERT_TRUE(store.Create(created).ok());
  auto read = store.Get("ns", "job");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->revision(), 0);

  // Two writers of the same revision (a runner's progress and a stop): one wins.
  BatchOperationRecord progress = *read, stop = *read;
  progress.set_complete_operation_count(3);
  stop.set_state(enums::BATCH_OPERATION_STATE_FAILED);
  ASSERT_TRUE(store.Update(stop).ok());
  EXPECT_EQ(store.Update(progress).code(), absl::StatusCode::kAborted)
      << "the progress read before the stop must not overwrite it";
  read = store.Get("ns", "job");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->revision(), 1);
  EXPECT_EQ(read->state(), enums::BATCH_OPERATION_STATE_FAILED);
  EXPECT_EQ(read->complete_operation_count(), 0);

  // Concurrent writers of one revision: exactly one is written.
  constexpr int kWriters = 6;
  std::vector<BatchOperationRecord> mine(kWriters, *read);
  for (int i = 0; i < kWriters; ++i) mine[i].set_complete_operation_count(10 + i);
  std::vector<absl::Status> written =
      AllAtOnce(kWriters, [&](int i) { return store.Update(mine[i]); });
  int ok = 0, winner = -1;
  for (int i = 0; i < kWriters; ++i) {
    if (written[i].ok()) {
      ++ok;
      winner = i;
    } else {
      EXPECT_EQ(written[i].code(), absl::StatusCode::kAborted) << written[i];
    }
  }
  ASSERT_EQ(ok, 1);
  read = store.Get("ns", "job");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->revision(), 2);
  EXPECT_EQ(read->complete_operation_count(), 10 + winner);
}

TEST_P(BatchStoreTest, RecordsOutliveAReopen) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database does not outlive its connection";
  {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(p->batches().Create(Record("ns", "kept", 5)).ok());
  }
  auto p = Open();
  ASSERT_NE(p, nullptr);
  auto got = p->batches().Get("ns", "kept");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->state(), enums::BATCH_OPERATION_STATE_RUNNING);
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(BatchStoreTest);

}  // namespace
}  // namespace tock::persistence
