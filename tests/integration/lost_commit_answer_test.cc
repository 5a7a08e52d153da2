// A commit that lands but whose answer is lost (the database answers DEADLINE_EXCEEDED after
// committing), and whose read-back fails too: the engine cannot tell whether it happened, so
// it publishes nothing at once. Its user timer and its child start must still happen without
// a restart: the engine reads the run back later, backing off on the timer queue, and then
// reloads the shard (its timers and stored transfer tasks). On a ManualClock: each step of
// the backoff happens when the test moves the clock, never by real time passing.
#include <gtest/gtest.h>

#include <atomic>

#include "server-core/history/history_engine.h"
#include "tests/integration/engine_fixture.h"
#include "tests/support/eventually.h"
#include "tests/support/forwarding_stores.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::command::v1::Command;

const absl::Time kStart = absl::FromUnixMicros(1'800'000'000'000'000);
constexpr absl::Duration kWait = absl::Seconds(10);  // bound on every wait in these tests

// Forwards to a store, except that it loses the answers of the next `lost_answers` writes
// (each is made, then answered DEADLINE_EXCEEDED) and fails the next `failed_reads` reads of
// a run (UNAVAILABLE, nothing read).
class LosingStore : public tock::testing::ForwardingExecutionStore {
 public:
  using ForwardingExecutionStore::ForwardingExecutionStore;
  std::atomic<int> lost_answers{0};
  std::atomic<int> failed_reads{0};

  absl::Status Write(persistence::Commit& commit) override {
    absl::Status s = inner_.Write(commit);
    if (s.ok() && TakeOne(lost_answers)) {
      return absl::DeadlineExceededError("the answer of the commit was lost");
    }
    return s;
  }
  absl::StatusOr<persistence::MutableStateRecord> GetRun(const std::string& namespace_id,
                                                         const std::string& workflow_id,
                                                         const std::string& run_id) override {
    if (TakeOne(failed_reads)) return absl::UnavailableError("the database is unreachable");
    return inner_.GetRun(namespace_id, workflow_id, run_id);
  }

 private:
  static bool TakeOne(std::atomic<int>& count) {
    int n = count.load();
    while (n > 0 && !count.compare_exchange_weak(n, n - 1)) {
    }
    return n > 0;
  }
};

// `failed_reads`: how many read-backs fail after the commit, the first one (at once, by the
// caller) included. 2: a later read-back finds the commit stored. 1 +
// kReadBacksBeforeReload: it is never found, and the shard is reloaded anyway.
class LostCommitAnswerTest : public HistoryEngineTest, public ::testing::WithParamInterface<int> {
 protected:
  LostCommitAnswerTest() : HistoryEngineTest(kStart, "worker") {}
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenStore());
    store_ = std::make_unique<LosingStore>(persistence_->executions());
    ASSERT_NO_FATAL_FAILURE(StartEngine(*store_));
  }

  static Command StartChild(const std::string& workflow_id) {
    Command c;
    c.set_command_type(enums::COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION);
    auto* a = c.mutable_start_child_workflow_execution_command_attributes();
    a->set_workflow_id(workflow_id);
    a->mutable_workflow_type()->set_name("child");
    a->mutable_task_queue()->set_name("child-q");
    a->set_parent_close_policy(enums::PARENT_CLOSE_POLICY_ABANDON);
    return c;
  }

  std::unique_ptr<LosingStore> store_;
};

TEST_P(LostCommitAnswerTest, ItsTimerFiresAndItsChildStartsWithoutARestart) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("parent"));
  ASSERT_TRUE(started.ok()) << started.status();
  auto task = PollWorkflowTask();
  ASSERT_TRUE(task.ok()) << task.status();

  // The completion that starts a 1 s timer and a child lands; its answer is lost, and so
  // are the read-backs.
  store_->lost_answers = 1;
  store_->failed_reads = GetParam();
  absl::Status answered =
      CompleteWorkflowTask(task->task_token(), {StartTimer(absl::Seconds(1)), StartChild("child")});
  EXPECT_EQ(answered.code(), absl::StatusCode::kDeadlineExceeded) << answered;
  ASSERT_EQ(store_->lost_answers.load(), 0);
  ASSERT_EQ(Count(started->run_id(), enums::EVENT_TYPE_TIMER_STARTED), 1) << "the commit landed";
  ASSERT_EQ(
      Count(started->run_id(), enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED), 1);

  // Only the clock moves the read-backs on (1 s, then backing off): a second at a time,
  // until the timer fired and the child started. Within a minute of clock time; without the
  // read-back the timer was behind the loaded window for good and the child never started.
  auto child_started = [&] {
    return persistence_->executions().GetCurrentRun(ns_.id, "child").ok();
  };
  bool both = false;
  for (int second = 0; second < 60 && !both; ++second) {
    clock_.Advance(absl::Seconds(1));
    engine_->WakeTimers();
    both = tock::testing::Eventually(
        [&] {
          return Count(started->run_id(), enums::EVENT_TYPE_TIMER_FIRED) == 1 && child_started();
        },
        absl::Milliseconds(200));
  }
  EXPECT_EQ(store_->failed_reads.load(), 0) << "every failing read-back was tried";
  EXPECT_EQ(Count(started->run_id(), enums::EVENT_TYPE_TIMER_FIRED), 1);
  EXPECT_TRUE(child_started()) << "the child's transfer task was never processed";
  EXPECT_TRUE(tock::testing::Eventually([&] {
    return Count(started->run_id(), enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED) == 1;
  }, kWait));
}

INSTANTIATE_TEST_SUITE_P(ReadBacks, LostCommitAnswerTest,
                         ::testing::Values(2, 1 + HistoryEngine::kReadBacksBeforeReload),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 2 ? std::string("FoundLater")
                                                  : std::string("NeverFound");
                         });

}  // namespace
}  // namespace tock::server::history
