// The commit path that parks no thread (HistoryEngine::MutateAsync, issue 35 step 3): a
// call's change is handed to the committer and answered only once its commit is; the run's
// later changes wait for its turn and are written in the order they came; a commit that
// fails fails only its own caller. A store wrapper holds the commits back (a gate), so
// every check is of a state the test brought about, with no sleep.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/integration/engine_fixture.h"
#include "tests/support/forwarding_stores.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
constexpr absl::Duration kWait = absl::Seconds(10);  // bound on every wait in these tests

// Forwards to a store, except that while closed it holds the asynchronous writes (unwritten,
// unanswered) until Open writes them, or Fail answers the first one with an error instead.
class GatedStore : public tock::testing::ForwardingExecutionStore {
 public:
  using ForwardingExecutionStore::ForwardingExecutionStore;

  void WriteAsync(persistence::Commit& commit, Written written) override {
    {
      std::lock_guard lock(mu_);
      const bool gated = only_run_.empty() ||
                         commit.runs.front().state.execution().run_id() == only_run_;
      if (closed_ && gated) {
        held_.emplace_back(&commit, std::move(written));
        cv_.notify_all();
        return;
      }
    }
    inner_.WriteAsync(commit, std::move(written));
  }

  // Holds the writes of run `only_run` (every run's when empty).
  void Close(const std::string& only_run = "") {
    std::lock_guard lock(mu_);
    closed_ = true;
    only_run_ = only_run;
  }
  size_t Held() {
    std::lock_guard lock(mu_);
    return held_.size();
  }
  // Waits (bounded) until `n` writes are held.
  bool WaitHeld(size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, absl::ToChronoNanoseconds(kWait), [&] { return held_.size() >= n; });
  }
  // Answers the first held write with `error`, writing nothing of it.
  void Fail(const absl::Status& error) {
    Written written;
    {
      std::lock_guard lock(mu_);
      written = std::move(held_.front().second);
      held_.erase(held_.begin());
    }
    written(error);
  }
  // Writes what is held, and everything after it.
  void Open() {
    std::vector<std::pair<persistence::Commit*, Written>> held;
    {
      std::lock_guard lock(mu_);
      closed_ = false;
      held.swap(held_);
    }
    for (auto& [commit, written] : held) inner_.WriteAsync(*commit, std::move(written));
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  std::string only_run_;
  std::vector<std::pair<persistence::Commit*, Written>> held_;
};

// What the asynchronous calls answered, in the order they answered.
class Answers {
 public:
  std::function<void(absl::Status)> For(std::string name) {
    return [this, name = std::move(name)](absl::Status s) {
      std::lock_guard lock(mu_);
      got_.emplace_back(name, std::move(s));
      cv_.notify_all();
    };
  }
  std::vector<std::pair<std::string, absl::Status>> Wait(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, absl::ToChronoNanoseconds(kWait), [&] { return got_.size() >= n; });
    return got_;
  }
  size_t size() {
    std::lock_guard lock(mu_);
    return got_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<std::string, absl::Status>> got_;
};

class AsyncCommitTest : public HistoryEngineTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenStore());
    store_ = std::make_unique<GatedStore>(persistence_->executions());
    ASSERT_NO_FATAL_FAILURE(StartEngine(*store_));
  }
  void TearDown() override {
    store_->Open();
    StopEngine();
  }

  // Starts a workflow whose first workflow task schedules activities a1, a2, a3 (on queue
  // "aq", not eagerly), and starts each: their task tokens, in that order.
  std::vector<std::string> ThreeStartedActivities(const std::string& workflow_id) {
    return StartedActivities(workflow_id, 3);
  }
  // The same with activities a1..a<n>.
  std::vector<std::string> StartedActivities(const std::string& workflow_id, int n) {
    auto started = engine_->StartWorkflow(ns_, StartRequest(workflow_id));
    EXPECT_TRUE(started.ok()) << started.status();
    run_id_ = started.ok() ? started->run_id() : "";
    auto task = PollWorkflowTask("q");
    EXPECT_TRUE(task.ok()) << task.status();
    if (!task.ok()) return {};
    std::vector<temporal::api::command::v1::Command> commands;
    std::vector<std::string> ids;
    for (int i = 1; i <= n; ++i) ids.push_back("a" + std::to_string(i));
    for (const std::string& id : ids) {
      auto& c = commands.emplace_back();
      c.set_command_type(enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK);
      auto* a = c.mutable_schedule_activity_task_command_attributes();
      a->set_activity_id(id);
      a->mutable_activity_type()->set_name("act");
      a->mutable_task_queue()->set_name("aq");
      *a->mutable_start_to_close_timeout() = ToProtoDuration(absl::Minutes(5));
    }
    EXPECT_TRUE(CompleteWorkflowTask(task->task_token(), commands).ok());
    std::map<std::string, std::string> tokens;  // by activity id
    for (int i = 0; i < n; ++i) {
      std::optional<persistence::TaskQueueTask> got =
          TakeTask("aq", persistence::TaskKind::kActivity, kWait);
      EXPECT_TRUE(got.has_value());
      if (!got) return {};
      auto activity = engine_->RecordActivityTaskStarted(ns_, *got, worker_);
      EXPECT_TRUE(activity.ok()) << activity.status();
      if (!activity.ok()) return {};
      tokens[activity->activity_id()] = activity->task_token();
    }
    std::vector<std::string> out;
    for (const std::string& id : ids) out.push_back(tokens[id]);
    return out;
  }

  // Completes the activity of `token` asynchronously with the result `name`.
  void CompleteAsync(const std::string& token, const std::string& name, Answers& answers) {
    temporal::api::common::v1::Payloads result;
    result.add_payloads()->set_data(name);
    // The engine keeps references to its arguments until it answers (as the dispatcher's
    // request stays alive until then): these live in the test's members.
    results_.push_back(std::make_unique<temporal::api::common::v1::Payloads>(std::move(result)));
    tokens_.push_back(std::make_unique<std::string>(token));
    engine_->RespondActivityTaskCompletedAsync(ns_, *tokens_.back(), *results_.back(), worker_,
                                               answers.For(name));
  }

  // Completes each activity of `tokens` asynchronously, in order, with results a1, a2, ...
  void CompleteEach(const std::vector<std::string>& tokens, Answers& answers) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      CompleteAsync(tokens[i], "a" + std::to_string(i + 1), answers);
    }
  }

  // The results of the run's ActivityTaskCompleted events, in history order.
  std::vector<std::string> CompletedResults() {
    std::vector<std::string> out;
    for (const auto& e : History(run_id_)) {
      if (e.event_type() != enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED) continue;
      out.push_back(e.activity_task_completed_event_attributes().result().payloads(0).data());
    }
    return out;
  }

  std::unique_ptr<GatedStore> store_;
  std::string run_id_;
  std::vector<std::unique_ptr<temporal::api::common::v1::Payloads>> results_;
  std::vector<std::unique_ptr<std::string>> tokens_;
};

TEST_F(AsyncCommitTest, CallersAreAnsweredAfterTheirCommitAndARunsChangesKeepTheirOrder) {
  std::vector<std::string> tokens = ThreeStartedActivities("ordered");
  ASSERT_EQ(tokens.size(), 3u);
  store_->Close();
  Answers answers;
  CompleteEach(tokens, answers);
  // Each call returned at once. The first change is with the committer (held); the others
  // wait for the run's turn, unbuilt; nobody is answered before its commit.
  ASSERT_TRUE(store_->WaitHeld(1));
  EXPECT_EQ(store_->Held(), 1u);
  EXPECT_EQ(answers.size(), 0u);
  EXPECT_TRUE(CompletedResults().empty());

  store_->Open();
  std::vector<std::pair<std::string, absl::Status>> got = answers.Wait(3);
  ASSERT_EQ(got.size(), 3u);
  for (const auto& [name, status] : got) EXPECT_TRUE(status.ok()) << name << ": " << status;
  EXPECT_EQ(got[0].first, "a1");
  EXPECT_EQ(got[1].first, "a2");
  EXPECT_EQ(got[2].first, "a3");
  EXPECT_EQ(CompletedResults(), (std::vector<std::string>{"a1", "a2", "a3"}));
}

// A run's answers go out in the order its changes were written, though each is published
// on whichever completion thread is free: a1's publishing (the workflow task it schedules,
// handed to a poll whose callback waits) holds a1's answer, and a2's and a3's, written
// meanwhile, wait for it rather than overtake it.
TEST_F(AsyncCommitTest, ARunsAnswersWaitForItsEarlierChangesSlowPublishing) {
  std::vector<std::string> tokens = ThreeStartedActivities("slow-publish");
  ASSERT_EQ(tokens.size(), 3u);
  std::mutex mu;
  std::condition_variable cv;
  bool delivered = false, release = false;
  matching_->Poll(ns_.id, "q", persistence::TaskKind::kWorkflow, clock_.Now() + absl::Hours(1),
                  worker_, [&](std::optional<persistence::TaskQueueTask> task) {
                    std::unique_lock lock(mu);
                    delivered = task.has_value();
                    cv.notify_all();
                    cv.wait_for(lock, absl::ToChronoNanoseconds(kWait), [&] { return release; });
                  });
  store_->Close();
  Answers answers;
  CompleteEach(tokens, answers);
  ASSERT_TRUE(store_->WaitHeld(1));
  store_->Open();
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, absl::ToChronoNanoseconds(kWait), [&] { return delivered; }));
  }
  // a1's completion thread is in the poll's callback; a2 and a3 are written after it.
  for (int i = 0; i < 1000 && CompletedResults().size() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(CompletedResults(), (std::vector<std::string>{"a1", "a2", "a3"}));
  EXPECT_EQ(answers.size(), 0u) << "answered before a1's answer";
  {
    std::lock_guard lock(mu);
    release = true;
    cv.notify_all();
  }
  std::vector<std::pair<std::string, absl::Status>> got = answers.Wait(3);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].first, "a1");
  EXPECT_EQ(got[1].first, "a2");
  EXPECT_EQ(got[2].first, "a3");
}

TEST_F(AsyncCommitTest, AFailedCommitFailsOnlyItsCallerAndTheRunsNextChangeGoesOn) {
  std::vector<std::string> tokens = ThreeStartedActivities("failing");
  ASSERT_EQ(tokens.size(), 3u);
  store_->Close();
  Answers answers;
  CompleteAsync(tokens[0], "a1", answers);
  CompleteAsync(tokens[1], "a2", answers);
  ASSERT_TRUE(store_->WaitHeld(1));
  store_->Fail(absl::AbortedError("the run was changed concurrently"));
  // a1's caller has its error; a2, next in the run's turn, is built from the stored state
  // (the cache was dropped with the failed commit) and held in its turn.
  ASSERT_TRUE(store_->WaitHeld(1));
  std::vector<std::pair<std::string, absl::Status>> got = answers.Wait(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, "a1");
  EXPECT_EQ(got[0].second.code(), absl::StatusCode::kAborted) << got[0].second;

  store_->Open();
  got = answers.Wait(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].first, "a2");
  EXPECT_TRUE(got[1].second.ok()) << got[1].second;
  EXPECT_EQ(CompletedResults(), (std::vector<std::string>{"a2"})) << "nothing of a1 written";
  // a1 is still started and can be completed again.
  Answers again;
  CompleteAsync(tokens[0], "a1", again);
  got = again.Wait(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].second.ok()) << got[0].second;
  EXPECT_EQ(CompletedResults(), (std::vector<std::string>{"a2", "a1"}));
}

// Every completion thread waits for a run's turn (a continuation making a waiting call on
// another run) while that run's commit is with the committer: the commit is still answered
// and the turn passed on, since neither needs a completion thread. The continuations are
// of changes of different runs (a1..a<n>), since a run's answers go out one after another.
TEST_F(AsyncCommitTest, CompletionsWaitingForARunsTurnDoNotStopItsRelease) {
  constexpr int kThreads = HistoryEngine::kAfterCommitThreads;
  std::vector<std::string> b = StartedActivities("b", kThreads + 1);
  const std::string b_run = run_id_;
  std::vector<std::string> a;
  for (int i = 0; i < kThreads; ++i) {
    std::vector<std::string> one = StartedActivities("a" + std::to_string(i), 1);
    ASSERT_EQ(one.size(), 1u);
    a.push_back(one[0]);
  }
  ASSERT_EQ(b.size(), static_cast<size_t>(kThreads + 1));
  store_->Close(b_run);
  Answers b_first;
  CompleteAsync(b[0], "b1", b_first);
  ASSERT_TRUE(store_->WaitHeld(1));  // run b's turn is held by its commit

  // Each of a's completions answers on a completion thread, whose continuation completes one
  // more of b's activities, waiting: all the completion threads wait for b's turn.
  std::mutex mu;
  std::condition_variable cv;
  int entered = 0;
  std::vector<absl::Status> waited;
  for (int i = 0; i < kThreads; ++i) {
    temporal::api::common::v1::Payloads result;
    result.add_payloads()->set_data("a");
    results_.push_back(std::make_unique<temporal::api::common::v1::Payloads>(std::move(result)));
    tokens_.push_back(std::make_unique<std::string>(a[i]));
    const std::string* b_token = tokens_.emplace_back(std::make_unique<std::string>(b[i + 1])).get();
    engine_->RespondActivityTaskCompletedAsync(
        ns_, *tokens_[tokens_.size() - 2], *results_.back(), worker_,
        [&, b_token](absl::Status s) {
          EXPECT_TRUE(s.ok()) << s;
          {
            std::lock_guard lock(mu);
            ++entered;
            cv.notify_all();
          }
          temporal::api::common::v1::Payloads r;
          r.add_payloads()->set_data("waited");
          absl::Status w = engine_->RespondActivityTaskCompleted(ns_, *b_token, r, worker_);
          std::lock_guard lock(mu);
          waited.push_back(w);
          cv.notify_all();
        });
  }
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, absl::ToChronoNanoseconds(kWait),
                            [&] { return entered == kThreads; }));
    EXPECT_TRUE(waited.empty()) << "b's turn is held";
  }
  store_->Open();
  std::vector<std::pair<std::string, absl::Status>> got = b_first.Wait(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].second.ok()) << got[0].second;
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, absl::ToChronoNanoseconds(kWait),
                          [&] { return waited.size() == static_cast<size_t>(kThreads); }));
  for (const absl::Status& w : waited) EXPECT_TRUE(w.ok()) << w;
  run_id_ = b_run;
  EXPECT_EQ(CompletedResults().size(), static_cast<size_t>(kThreads + 1));
}

}  // namespace
}  // namespace tock::server::history
