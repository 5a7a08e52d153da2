// A commit that lands but whose answer is lost (the database answers DEADLINE_EXCEEDED after
// committing), and whose read-back fails too: the engine cannot tell whether it happened, so
// it publishes nothing at once. Its user timer and its child start must still happen without
// a restart: the engine reads the run back later, backing off on the timer queue, and then
// reloads the shard (its timers and stored transfer tasks). On a ManualClock: each step of
// the backoff happens when the test moves the clock, never by real time passing.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/proto_time.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/shard_controller.h"
#include "server-core/matching/matching_engine.h"
#include "server-core/persistence/persistence.h"
#include "tests/support/eventually.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::command::v1::Command;
using temporal::api::history::v1::HistoryEvent;

const absl::Time kStart = absl::FromUnixMicros(1'800'000'000'000'000);
constexpr absl::Duration kWait = absl::Seconds(10);  // bound on every wait in these tests

// Forwards to a store, except that it loses the answers of the next `lost_answers` writes
// (each is made, then answered DEADLINE_EXCEEDED) and fails the next `failed_reads` reads of
// a run (UNAVAILABLE, nothing read).
class LosingStore : public persistence::ExecutionStore {
 public:
  explicit LosingStore(persistence::ExecutionStore& inner) : inner_(inner) {}
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

  absl::StatusOr<int64_t> AcquireShard(int32_t shard_id, const std::string& owner) override {
    return inner_.AcquireShard(shard_id, owner);
  }
  absl::Status RenewShardRange(int32_t shard_id, int64_t range_id,
                               const std::string& owner) override {
    return inner_.RenewShardRange(shard_id, range_id, owner);
  }
  absl::StatusOr<persistence::CurrentRun> GetCurrentRun(const std::string& namespace_id,
                                                        const std::string& workflow_id) override {
    return inner_.GetCurrentRun(namespace_id, workflow_id);
  }
  absl::StatusOr<std::vector<persistence::HistoryEvent>> ReadEvents(const std::string& run_id,
                                                                    int64_t first_event_id,
                                                                    int64_t next_event_id,
                                                                    int32_t limit) override {
    return inner_.ReadEvents(run_id, first_event_id, next_event_id, limit);
  }
  absl::StatusOr<std::vector<persistence::HistoryEvent>> ReadBranchEvents(
      const std::string& run_id, const std::string& branch_token, int64_t first_event_id,
      int64_t next_event_id, int32_t limit) override {
    return inner_.ReadBranchEvents(run_id, branch_token, first_event_id, next_event_id, limit);
  }
  absl::Status DeleteRun(int32_t shard_id, int64_t range_id, const std::string& namespace_id,
                         const std::string& workflow_id, const std::string& run_id) override {
    return inner_.DeleteRun(shard_id, range_id, namespace_id, workflow_id, run_id);
  }
  absl::StatusOr<int64_t> VisitEventBytes(
      const std::string& run_id, int64_t first_event_id, int64_t next_event_id, int32_t limit,
      absl::FunctionRef<void(std::string_view)> visit) override {
    return inner_.VisitEventBytes(run_id, first_event_id, next_event_id, limit, visit);
  }
  absl::StatusOr<std::vector<persistence::TaskQueueTask>> LoadTaskQueueTasks() override {
    return inner_.LoadTaskQueueTasks();
  }
  absl::StatusOr<std::vector<persistence::TaskQueueTask>> LoadQueueTasks(
      const std::string& namespace_id, const std::string& task_queue, persistence::TaskKind kind,
      int32_t limit) override {
    return inner_.LoadQueueTasks(namespace_id, task_queue, kind, limit);
  }
  absl::StatusOr<std::vector<persistence::TaskQueueTask>> LoadTransferTasks(
      int32_t shard_id, int64_t after_task_id, int32_t limit) override {
    return inner_.LoadTransferTasks(shard_id, after_task_id, limit);
  }
  absl::StatusOr<std::vector<persistence::TimerTaskRow>> LoadTimers(
      int32_t shard_id, const persistence::TimerCursor& after, absl::Time until,
      int32_t limit) override {
    return inner_.LoadTimers(shard_id, after, until, limit);
  }

 private:
  static bool TakeOne(std::atomic<int>& count) {
    int n = count.load();
    while (n > 0 && !count.compare_exchange_weak(n, n - 1)) {
    }
    return n > 0;
  }
  persistence::ExecutionStore& inner_;
};

// `failed_reads`: how many read-backs fail after the commit, the first one (at once, by the
// caller) included. 2: a later read-back finds the commit stored. 1 +
// kReadBacksBeforeReload: it is never found, and the shard is reloaded anyway.
class LostCommitAnswerTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    clock_.Set(kStart);
    auto p = persistence::OpenPersistence({});
    ASSERT_TRUE(p.ok()) << p.status();
    persistence_ = std::move(*p);
    store_ = std::make_unique<LosingStore>(persistence_->executions());
    shards_ = std::make_unique<ShardController>(*store_, 4, "test");
    ASSERT_TRUE(shards_->AcquireAll().ok());
    timer_thread_ = std::make_unique<TimerThread>(clock_);
    matching_ = std::make_unique<matching::MatchingEngine>(clock_, *timer_thread_);
    engine_ = std::make_unique<HistoryEngine>(*store_, *shards_, *matching_, clock_,
                                              *timer_thread_, NullLogger());
    ASSERT_TRUE(engine_->Recover().ok());
  }
  void TearDown() override {
    engine_->StopBackground();
    timer_thread_.reset();
    engine_.reset();
  }

  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> PollWorkflowTask() {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<persistence::TaskQueueTask> got;
    bool done = false;
    matching_->Poll(ns_.id, "q", persistence::TaskKind::kWorkflow, clock_.Now() + absl::Hours(1),
                    "worker", [&](std::optional<persistence::TaskQueueTask> task) {
                      std::lock_guard lock(mu);
                      got = std::move(task);
                      done = true;
                      cv.notify_all();
                    });
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, absl::ToChronoNanoseconds(kWait), [&] { return done; }) || !got) {
      return absl::DeadlineExceededError("no workflow task");
    }
    return engine_->RecordWorkflowTaskStarted(ns_, *got, "worker");
  }

  std::vector<HistoryEvent> History(const std::string& run_id) {
    auto events = persistence_->executions().ReadEvents(run_id, 1, 100000, 100000);
    EXPECT_TRUE(events.ok()) << events.status();
    return events.ok() ? *events : std::vector<HistoryEvent>{};
  }
  int Count(const std::string& run_id, enums::EventType type) {
    int n = 0;
    for (const HistoryEvent& e : History(run_id)) n += e.event_type() == type;
    return n;
  }

  static Command StartTimer(absl::Duration d) {
    Command c;
    c.set_command_type(enums::COMMAND_TYPE_START_TIMER);
    c.mutable_start_timer_command_attributes()->set_timer_id("t1");
    *c.mutable_start_timer_command_attributes()->mutable_start_to_fire_timeout() =
        ToProtoDuration(d);
    return c;
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

  ManualClock clock_;
  std::unique_ptr<persistence::Persistence> persistence_;
  std::unique_ptr<LosingStore> store_;
  std::unique_ptr<ShardController> shards_;
  std::unique_ptr<TimerThread> timer_thread_;
  std::unique_ptr<matching::MatchingEngine> matching_;
  std::unique_ptr<HistoryEngine> engine_;
  NamespaceRef ns_{"ns-id", "ns", 0};
};

TEST_P(LostCommitAnswerTest, ItsTimerFiresAndItsChildStartsWithoutARestart) {
  wf::StartWorkflowExecutionRequest start;
  start.set_workflow_id("parent");
  start.mutable_workflow_type()->set_name("flow");
  start.mutable_task_queue()->set_name("q");
  start.set_request_id("req-parent");
  auto started = engine_->StartWorkflow(ns_, start);
  ASSERT_TRUE(started.ok()) << started.status();
  auto task = PollWorkflowTask();
  ASSERT_TRUE(task.ok()) << task.status();

  // The completion that starts a 1 s timer and a child lands; its answer is lost, and so
  // are the read-backs.
  store_->lost_answers = 1;
  store_->failed_reads = GetParam();
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(task->task_token());
  done.set_identity("worker");
  *done.add_commands() = StartTimer(absl::Seconds(1));
  *done.add_commands() = StartChild("child");
  absl::Status answered = engine_->RespondWorkflowTaskCompleted(ns_, done).status();
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
