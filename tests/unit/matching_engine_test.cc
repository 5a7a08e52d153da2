// MatchingEngine's paging: a window of each queue in memory, the rest read from a store
// (here a fake with the contract of ExecutionStore::LoadQueueTasks), no task lost or
// delivered out of order, loads racing tasks, and queues forgotten for another owner.
#include "server-core/matching/matching_engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/common/clock.h"
#include "lib/common/timer_thread.h"

namespace tock::server::matching {
namespace {

constexpr TaskKind kWf = TaskKind::kWorkflow;

// The task_queue_tasks table: ids drawn from a sequence, rows visible once committed, a
// start consumes its row. Loads may be held at a gate to race them.
class FakeStore {
 public:
  int64_t Draw() {
    std::lock_guard lock(mu_);
    return next_id_++;
  }
  TaskQueueTask Insert(int64_t id, const std::string& queue = "q") {
    TaskQueueTask t;
    t.task_id = id;
    t.namespace_id = "ns";
    t.task_queue = queue;
    t.kind = kWf;
    t.task.set_scheduled_event_id(id);
    std::lock_guard lock(mu_);
    rows_[id] = t;
    return t;
  }
  TaskQueueTask Commit(const std::string& queue = "q") { return Insert(Draw(), queue); }
  // A task of another host's shards: its row is not among those this host reads.
  TaskQueueTask Unread(const std::string& queue = "q") {
    TaskQueueTask t = Insert(Draw(), queue);
    Consume(t.task_id);
    return t;
  }
  // The start's commit: false when the task was consumed already (a stale duplicate).
  bool Consume(int64_t id) {
    std::lock_guard lock(mu_);
    return rows_.erase(id) > 0;
  }
  size_t Stored() {
    std::lock_guard lock(mu_);
    return rows_.size();
  }
  int Loads() {
    std::lock_guard lock(mu_);
    return loads_;
  }
  // The next load reads, then waits until Open() (the read's snapshot is taken first).
  void HoldNextLoad() {
    std::lock_guard lock(mu_);
    hold_ = true;
    held_ = false;
  }
  void WaitUntilHeld() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return held_; });
  }
  void Open() {
    std::lock_guard lock(mu_);
    hold_ = false;
    cv_.notify_all();
  }

  TaskLoader Loader() {
    return [this](const std::string& ns, const std::string& queue, TaskKind kind,
                  int32_t limit) -> absl::StatusOr<std::vector<TaskQueueTask>> {
      std::unique_lock lock(mu_);
      ++loads_;
      std::vector<TaskQueueTask> out;
      for (const auto& [id, t] : rows_) {
        if (static_cast<int32_t>(out.size()) >= limit) break;
        if (t.namespace_id == ns && t.task_queue == queue && t.kind == kind) out.push_back(t);
      }
      if (hold_) {
        held_ = true;
        cv_.notify_all();
        cv_.wait(lock, [&] { return !hold_; });
      }
      return out;
    };
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, TaskQueueTask> rows_;
  int64_t next_id_ = 1;
  int loads_ = 0;
  bool hold_ = false, held_ = false;
};

class MatchingPagingTest : public ::testing::Test {
 protected:
  void Make(size_t window) {
    engine_ = std::make_unique<MatchingEngine>(clock_, timers_, window);
    engine_->SetTaskLoader(store_.Loader());
  }
  void TearDown() override {
    if (engine_) engine_->ReleasePolls();
  }

  // One poll answered before it returns (a task held, or one its own read found); the task
  // is started (consumed) as the frontend does. Nothing when the queue is empty.
  std::optional<int64_t> PollOnce(const std::string& queue = "q") {
    std::optional<int64_t> got;
    bool answered = false;
    const MatchingEngine::PollId id =
        engine_->Poll("ns", queue, kWf, clock_.Now() + absl::Hours(1), "w",
                      [&](std::optional<TaskQueueTask> t) {
                        answered = true;
                        if (t) {
                          got = t->task_id;
                          store_.Consume(t->task_id);
                        }
                      });
    if (!answered) engine_->CancelPoll(id);
    return got;
  }

  std::vector<int64_t> Drain(const std::string& queue = "q") {
    std::vector<int64_t> ids;
    while (std::optional<int64_t> id = PollOnce(queue)) ids.push_back(*id);
    return ids;
  }

  static std::vector<int64_t> Range(int64_t first, int64_t last) {
    std::vector<int64_t> ids;
    for (int64_t i = first; i <= last; ++i) ids.push_back(i);
    return ids;
  }

  ManualClock clock_;
  TimerThread timers_{clock_};
  FakeStore store_;
  std::unique_ptr<MatchingEngine> engine_;
};

TEST_F(MatchingPagingTest, AQueueLongerThanTheWindowDeliversEveryTaskOnceInIdOrder) {
  Make(4);
  for (int i = 0; i < 10; ++i) store_.Commit();  // left by the previous process
  // Ten more arrive while nobody polls: the first touches the queue, which reads it.
  for (int i = 0; i < 10; ++i) engine_->AddTask(store_.Commit());
  EXPECT_EQ(engine_->Backlog("ns", "q", kWf), 4u) << "only the window is held";
  EXPECT_EQ(store_.Loads(), 1);

  EXPECT_EQ(Drain(), Range(1, 20));
  EXPECT_EQ(store_.Stored(), 0u);
  EXPECT_GT(store_.Loads(), 4) << "paged in";
}

TEST_F(MatchingPagingTest, WithoutALoaderEveryTaskIsHeld) {
  engine_ = std::make_unique<MatchingEngine>(clock_, timers_, 2);
  for (int i = 0; i < 5; ++i) engine_->AddTask(store_.Commit());
  EXPECT_EQ(engine_->Backlog("ns", "q", kWf), 5u);
  EXPECT_EQ(Drain(), Range(1, 5));
}

// Ids are drawn at insert, so a commit may become visible after one with higher ids (and
// its task never reach this host, when another host committed it): the next read, always
// from the oldest, finds it.
TEST_F(MatchingPagingTest, ATaskCommittedLateWithALowerIdIsNotSkipped) {
  Make(2);
  const int64_t late = store_.Draw();
  for (int i = 0; i < 4; ++i) store_.Commit();  // ids 2..5
  EXPECT_EQ(PollOnce(), 2);                      // the read held 2 and 3
  store_.Insert(late);                           // committed now, its hand-off lost
  std::vector<int64_t> rest = Drain();
  EXPECT_EQ(rest, (std::vector<int64_t>{3, 1, 4, 5}));
}

TEST_F(MatchingPagingTest, AddTaskRacingALoadIsNeitherLostNorDuplicated) {
  Make(3);
  for (int i = 0; i < 3; ++i) store_.Commit();  // 1..3
  store_.HoldNextLoad();
  std::promise<std::optional<int64_t>> first;
  std::jthread poller([&] {
    engine_->Poll("ns", "q", kWf, clock_.Now() + absl::Hours(1), "w",
                  [&](std::optional<TaskQueueTask> t) {
                    if (t) store_.Consume(t->task_id);
                    first.set_value(t ? std::optional<int64_t>(t->task_id) : std::nullopt);
                  });
  });
  store_.WaitUntilHeld();  // the read saw 1..3 and has not answered
  // Committed after the read began: 4 goes to the waiting poll, 5 and 6 are held, 7 is
  // not (the window is 3; the read's 1..3 will push out 5 and 6 too).
  for (int i = 0; i < 4; ++i) engine_->AddTask(store_.Commit());
  store_.Open();
  poller.join();
  EXPECT_EQ(first.get_future().get(), 4);
  EXPECT_LE(engine_->Backlog("ns", "q", kWf), 3u);
  EXPECT_EQ(Drain(), (std::vector<int64_t>{1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(store_.Stored(), 0u);
}

TEST_F(MatchingPagingTest, ATaskAddedDuringALoadReachesTheWaitingPoll) {
  Make(3);
  store_.HoldNextLoad();
  std::promise<std::optional<int64_t>> got;
  std::jthread poller([&] {
    engine_->Poll("ns", "q", kWf, clock_.Now() + absl::Hours(1), "w",
                  [&](std::optional<TaskQueueTask> t) {
                    got.set_value(t ? std::optional<int64_t>(t->task_id) : std::nullopt);
                  });
  });
  store_.WaitUntilHeld();  // the read found the queue empty
  const TaskQueueTask task = store_.Commit();
  engine_->AddTask(task);  // handed to the poll waiting behind the read
  EXPECT_EQ(got.get_future().get(), task.task_id);
  store_.Open();
  poller.join();
  EXPECT_EQ(engine_->Backlog("ns", "q", kWf), 0u) << "the read's copy is skipped: handed out";
}

TEST_F(MatchingPagingTest, HandedOutTasksAreNotReadBackUntilTheirMemoryPasses) {
  Make(2);
  for (int i = 0; i < 5; ++i) store_.Commit();
  std::vector<int64_t> got;
  const auto keep = [&](std::optional<TaskQueueTask> t) {  // handed out, start still running
    if (t) got.push_back(t->task_id);
  };
  for (int i = 0; i < 2; ++i) {
    engine_->Poll("ns", "q", kWf, clock_.Now() + absl::Hours(1), "w", keep);
  }
  EXPECT_EQ(got, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Drain(), Range(3, 5)) << "1 and 2 are stored but not read back";
  // Their starts never came (the pollers went away): due again once the memory passes.
  clock_.Advance(MatchingEngine::kHandedOutMemory + MatchingEngine::kReloadInterval);
  EXPECT_EQ(Drain(), Range(1, 2));
}

TEST_F(MatchingPagingTest, AnEmptyQueueIsReadAgainByAPollAfterTheReloadInterval) {
  Make(4);
  std::optional<TaskQueueTask> waiting;
  engine_->Poll("ns", "q", kWf, clock_.Now() + absl::Hours(1), "w",
                [&](std::optional<TaskQueueTask> t) { waiting = std::move(t); });
  store_.Commit();  // stored by a path that never told this host
  EXPECT_FALSE(PollOnce().has_value()) << "read a moment ago";
  EXPECT_FALSE(waiting.has_value());
  clock_.Advance(MatchingEngine::kReloadInterval);
  EXPECT_FALSE(PollOnce().has_value()) << "the read hands the task to the older poll";
  ASSERT_TRUE(waiting.has_value());
  EXPECT_EQ(waiting->task_id, 1);
}

TEST_F(MatchingPagingTest, ForgetQueuesAnswersTheirPollsAndLeavesTheirTasksStored) {
  Make(10);
  store_.Commit("a");
  store_.Commit("a");
  EXPECT_EQ(PollOnce("a"), 1);
  std::optional<std::optional<TaskQueueTask>> b_answer, c_answer;
  engine_->Poll("ns", "b", kWf, clock_.Now() + absl::Hours(1), "w",
                [&](auto t) { b_answer = std::move(t); });
  engine_->Poll("ns", "c", kWf, clock_.Now() + absl::Hours(1), "w",
                [&](auto t) { c_answer = std::move(t); });
  EXPECT_EQ(engine_->QueueCount(), 3u);
  EXPECT_EQ(engine_->Backlog("ns", "a", kWf), 1u);

  const size_t forgotten = engine_->ForgetQueues(
      [](const std::string&, const std::string& queue, TaskKind) { return queue != "c"; });
  EXPECT_EQ(forgotten, 2u);
  ASSERT_TRUE(b_answer.has_value()) << "b's waiting poll answered at once";
  EXPECT_FALSE(b_answer->has_value()) << "with nothing";
  EXPECT_FALSE(c_answer.has_value()) << "c is kept and its poll still waits";
  EXPECT_EQ(engine_->QueueCount(), 1u);
  EXPECT_EQ(engine_->Backlog("ns", "a", kWf), 0u);
  EXPECT_EQ(store_.Stored(), 1u) << "a's task left memory only";

  // Owner again: the next touch reads the queue from the database.
  const int loads = store_.Loads();
  EXPECT_EQ(PollOnce("a"), 2);
  EXPECT_EQ(store_.Loads(), loads + 1);
  engine_->AddTask(store_.Commit("c"));
  ASSERT_TRUE(c_answer.has_value());
  EXPECT_EQ((*c_answer)->task_id, 3);
}

// Producers commit (ids drawn before rows become visible, so visibility is out of id
// order) then hand their tasks over; pollers start what they get. Every task is started
// exactly once, whatever the interleaving of reads, hand-offs and polls.
TEST_F(MatchingPagingTest, ConcurrentProducersAndPollersLoseNothing) {
  Make(8);
  constexpr int kProducers = 4, kPerProducer = 400, kPollers = 4;
  constexpr int kTotal = kProducers * kPerProducer;
  for (int i = 0; i < 50; ++i) store_.Commit();  // a backlog from before
  std::mutex mu;
  std::condition_variable cv;
  std::set<int64_t> started;
  std::atomic<bool> stop{false};
  std::atomic<int> stale{0};
  {
    std::vector<std::jthread> threads;
    for (int p = 0; p < kPollers; ++p) {
      threads.emplace_back([&] {
        while (!stop) {
          std::promise<void> answered;
          engine_->Poll("ns", "q", kWf, clock_.Now() + absl::Hours(1), "w",
                        [&](std::optional<TaskQueueTask> t) {
                          if (t) {
                            if (store_.Consume(t->task_id)) {
                              std::lock_guard lock(mu);
                              started.insert(t->task_id);
                              cv.notify_all();
                            } else {
                              ++stale;
                            }
                          }
                          answered.set_value();
                        });
          answered.get_future().wait();
        }
      });
    }
    for (int p = 0; p < kProducers; ++p) {
      threads.emplace_back([&] {
        for (int i = 0; i < kPerProducer; ++i) {
          const int64_t id = store_.Draw();
          std::this_thread::yield();
          engine_->AddTask(store_.Insert(id));
        }
      });
    }
    std::unique_lock lock(mu);
    const bool all = cv.wait_for(lock, std::chrono::seconds(60),
                                 [&] { return started.size() == size_t{kTotal + 50}; });
    EXPECT_TRUE(all) << started.size() << " of " << kTotal + 50 << " started";
    stop = true;
    lock.unlock();
    engine_->ReleasePolls();
  }
  EXPECT_EQ(store_.Stored(), 0u);
  RecordProperty("stale_deliveries", stale.load());
}

// A poll on a standby namespace (reference/replication.md §4.3) takes only query tasks: the
// workflow tasks of the queue stay for the polls after a failover.
TEST_F(MatchingPagingTest, AQueriesOnlyPollTakesQueriesAndLeavesTheBacklog) {
  Make(8);
  for (int i = 0; i < 3; ++i) engine_->AddTask(store_.Commit());
  auto query = [] {
    TaskQueueTask t;
    t.namespace_id = "ns";
    t.task_queue = "q";
    t.kind = kWf;
    t.task.set_kind(tock::persistence::v1::TransferTask::KIND_QUERY);
    t.task.set_query_id("query-1");
    return t;
  };
  // Held tasks but no query: the poll waits, and a query arriving later reaches it.
  std::optional<TaskQueueTask> got;
  bool answered = false;
  engine_->Poll(
      "ns", "q", kWf, clock_.Now() + absl::Hours(1), "standby",
      [&](std::optional<TaskQueueTask> t) {
        answered = true;
        got = std::move(t);
      },
      /*queries_only=*/true);
  EXPECT_FALSE(answered) << "a workflow task went to a queries-only poll";
  engine_->AddTask(store_.Commit());  // a fourth task: still not for it
  EXPECT_FALSE(answered);
  engine_->AddTask(query());
  ASSERT_TRUE(answered);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->task.query_id(), "query-1");

  // A query already waiting is taken at once, ahead of the older workflow tasks.
  engine_->AddTask(query());
  got.reset();
  answered = false;
  engine_->Poll(
      "ns", "q", kWf, clock_.Now() + absl::Hours(1), "standby",
      [&](std::optional<TaskQueueTask> t) {
        answered = true;
        got = std::move(t);
      },
      /*queries_only=*/true);
  ASSERT_TRUE(answered && got.has_value());
  EXPECT_EQ(got->task.kind(), tock::persistence::v1::TransferTask::KIND_QUERY);

  // After the failover, ordinary polls get the backlog, in order.
  EXPECT_EQ(Drain(), Range(1, 4));
}

// A queries-only poll waiting ahead of an ordinary one does not keep a task from it.
TEST_F(MatchingPagingTest, AnOrdinaryPollBehindAQueriesOnlyOneGetsTheTask) {
  Make(8);
  bool standby_answered = false;
  const MatchingEngine::PollId standby = engine_->Poll(
      "ns", "q", kWf, clock_.Now() + absl::Hours(1), "standby",
      [&](std::optional<TaskQueueTask>) { standby_answered = true; },
      /*queries_only=*/true);
  std::optional<int64_t> active;
  engine_->Poll("ns", "q", kWf, clock_.Now() + absl::Hours(1), "active",
                [&](std::optional<TaskQueueTask> t) {
                  if (t) active = t->task_id;
                });
  engine_->AddTask(store_.Commit());
  EXPECT_EQ(active, std::optional<int64_t>(1));
  EXPECT_FALSE(standby_answered);
  engine_->CancelPoll(standby);
  EXPECT_TRUE(standby_answered);
}


// The root of a queue with several hosts (routing/queue_partitions.h): Offer hands a task
// of another host's partition to a poll waiting here (one that may take it, preferring one
// that prefers it) or leaves it to the caller, keeping nothing.
TEST_F(MatchingPagingTest, OfferHandsATaskToAWaitingPollOrLeavesIt) {
  Make(8);
  TaskQueueTask task = store_.Unread();
  EXPECT_EQ(engine_->Offer(task), MatchingEngine::Offered::kNoPoll) << "no poll waits";
  EXPECT_EQ(task.task_id, 1) << "the task is left to the caller as it was";

  std::vector<std::pair<std::string, int64_t>> got;  // (poller, task id); 0: nothing
  auto poll = [&](const std::string& who, bool queries_only, MatchingEngine::Prefer prefer) {
    return engine_->Poll(
        "ns", "q", kWf, clock_.Now() + absl::Hours(1), who,
        [&, who](std::optional<TaskQueueTask> t) { got.emplace_back(who, t ? t->task_id : 0); },
        queries_only, /*worker_key=*/"", std::move(prefer));
  };
  const MatchingEngine::PollId standby = poll("standby", /*queries_only=*/true, nullptr);
  poll("any", false, nullptr);
  poll("odd", false, [](const TaskQueueTask& t) { return t.task_id % 2 == 1; });
  EXPECT_TRUE(got.empty());
  ASSERT_EQ(engine_->Offer(task), MatchingEngine::Offered::kTaken);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int64_t>>{{"odd", 1}}))
      << "the poll that prefers it, past the older ones";
  TaskQueueTask second = store_.Unread();
  ASSERT_EQ(engine_->Offer(second), MatchingEngine::Offered::kTaken);
  EXPECT_EQ(got.back(), (std::pair<std::string, int64_t>{"any", 2}))
      << "nobody prefers it: the oldest poll that may take a workflow task";
  TaskQueueTask third = store_.Unread();
  EXPECT_EQ(engine_->Offer(third), MatchingEngine::Offered::kNoPoll)
      << "only the queries-only poll waits";
  EXPECT_EQ(engine_->Backlog("ns", "q", kWf), 0u) << "an offer keeps nothing";
  engine_->CancelPoll(standby);
  EXPECT_EQ(got.back(), (std::pair<std::string, int64_t>{"standby", 0}));
}

// A host's partition of another host's queue: a sticky task is kept as it is (the root,
// which sees the worker's polls, decides whether the worker is gone: Offer answers so), the
// hook hears of tasks no poll waits for, and TakeToOffer hands out the oldest.
TEST_F(MatchingPagingTest, APartitionKeepsStickyTasksAndHandsItsOldestOutToOffer) {
  Make(8);
  std::vector<std::string> told;
  engine_->SetTasksWaiting([&](const std::string& ns, const std::string& queue, TaskKind kind,
                               const std::string& placing) {
    told.push_back(absl::StrCat(ns, "/", queue, "/", static_cast<int>(kind), "/", placing));
  });
  auto sticky = [&] {
    TaskQueueTask t = store_.Commit("sticky-q");
    t.task.set_task_queue("q");
    t.task.set_sticky(true);
    return t;
  };
  engine_->AddTask(sticky(), /*partition=*/true);
  EXPECT_EQ(engine_->Backlog("ns", "sticky-q", kWf), 1u) << "kept on the sticky queue";
  EXPECT_EQ(engine_->Backlog("ns", "q", kWf), 0u);
  ASSERT_FALSE(told.empty());
  EXPECT_EQ(told.back(), "ns/sticky-q/1/q") << "placed by its workflow's normal queue";

  std::optional<TaskQueueTask> out = engine_->TakeToOffer("ns", "sticky-q", kWf);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->task_id, 1);
  EXPECT_FALSE(engine_->TakeToOffer("ns", "sticky-q", kWf).has_value());
  // At the root, where no worker polls the sticky queue: refused as gone.
  EXPECT_EQ(engine_->Offer(*out), MatchingEngine::Offered::kWorkerGone);
  // Given back to the partition: held again, in its place.
  engine_->AddTask(std::move(*out), /*partition=*/true);
  EXPECT_EQ(engine_->Backlog("ns", "sticky-q", kWf), 1u);

  // Without `partition`, the same task for a worker nobody saw goes to the normal queue.
  engine_->AddTask(sticky());
  EXPECT_EQ(engine_->Backlog("ns", "q", kWf), 1u);
}

// A poll that prefers some tasks (one another host forwarded prefers its own runs'):
// arriving, it takes the first it prefers among the oldest rather than the oldest; waiting,
// it gets an arriving task it prefers before an older poll that prefers none. Everything
// else stays in order.
TEST_F(MatchingPagingTest, APollTakesATaskItPrefersAndGetsOneArrivingBeforeOlderPolls) {
  Make(8);
  for (int i = 0; i < 3; ++i) engine_->AddTask(store_.Commit());  // 1, 2, 3
  auto even = [](const TaskQueueTask& t) { return t.task_id % 2 == 0; };
  std::vector<std::pair<std::string, int64_t>> got;
  auto poll = [&](const std::string& who, MatchingEngine::Prefer prefer) {
    return engine_->Poll(
        "ns", "q", kWf, clock_.Now() + absl::Hours(1), who,
        [&, who](std::optional<TaskQueueTask> t) { got.emplace_back(who, t ? t->task_id : 0); },
        false, "", std::move(prefer));
  };
  poll("even", even);
  poll("any", nullptr);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int64_t>>{{"even", 2}, {"any", 1}}));

  EXPECT_EQ(Drain(), Range(3, 3));
  got.clear();
  const MatchingEngine::PollId any = poll("any", nullptr);
  const MatchingEngine::PollId prefers = poll("even", even);
  engine_->AddTask(store_.Commit());  // 4: the later poll prefers it
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int64_t>>{{"even", 4}}));
  engine_->AddTask(store_.Commit());  // 5: nobody prefers it, the oldest poll takes it
  EXPECT_EQ(got.back(), (std::pair<std::string, int64_t>{"any", 5}));
  EXPECT_TRUE(Drain().empty());
  engine_->CancelPoll(any);
  engine_->CancelPoll(prefers);
}

// ShutdownWorker (ReleaseWorkerPolls, namespace capability worker_poll_complete_on_shutdown):
// the worker's waiting polls get nothing at once, and so do its polls for the next
// kShutDownWorkerMemory; other workers' polls are untouched, and the next task goes to one
// of them: none is handed to the worker that left.
TEST_F(MatchingPagingTest, AWorkerShutDownGetsNothingAndTheNextTaskGoesToAnother) {
  Make(8);
  std::vector<std::string> answers;  // "<poller>:<task id or none>", in order
  auto poll = [&](const std::string& who, const std::string& worker, TaskKind kind) {
    engine_->Poll("ns", "q", kind, clock_.Now() + absl::Hours(1), who,
                  [this, &answers, who](std::optional<TaskQueueTask> t) {
                    answers.push_back(who + ":" + (t ? std::to_string(t->task_id) : "none"));
                    if (t) store_.Consume(t->task_id);  // started, as the frontend does
                  },
                  /*queries_only=*/false, worker);
  };
  poll("leaving-workflows", "instance-1", kWf);
  poll("leaving-activities", "instance-1", TaskKind::kActivity);
  poll("staying", "instance-2", kWf);
  EXPECT_EQ(engine_->ReleaseWorkerPolls("other-ns", "instance-1"), 0u);
  EXPECT_TRUE(answers.empty());

  EXPECT_EQ(engine_->ReleaseWorkerPolls("ns", "instance-1"), 2u);
  EXPECT_EQ(answers, (std::vector<std::string>{"leaving-workflows:none", "leaving-activities:none"}));
  poll("leaving-late", "instance-1", kWf);
  EXPECT_EQ(answers.back(), "leaving-late:none");
  engine_->AddTask(store_.Commit());
  EXPECT_EQ(answers.back(), "staying:1");

  // Forgotten after a while: a worker process reusing the key (it should not) polls again.
  clock_.Advance(MatchingEngine::kShutDownWorkerMemory);
  poll("restarted", "instance-1", kWf);
  EXPECT_EQ(answers.size(), 4u);
  engine_->AddTask(store_.Commit());
  EXPECT_EQ(answers.back(), "restarted:2");
}

}  // namespace
}  // namespace tock::server::matching
