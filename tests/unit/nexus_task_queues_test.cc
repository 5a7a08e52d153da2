// Nexus tasks in memory (nexus/nexus_task_queues.h) on a manual clock: a dispatch meets a
// poll whichever comes first, the worker's answer returns to the dispatch by token, and the
// deadlines of dispatches and polls end them (an answer after that is NOT_FOUND).
#include "server-core/nexus/nexus_task_queues.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>

#include "lib/common/clock.h"
#include "lib/common/timer_thread.h"

namespace tock::server::nexus {
namespace {

namespace wf = temporal::api::workflowservice::v1;
constexpr auto kWait = std::chrono::seconds(10);  // bounds every wait for a callback

temporal::api::nexus::v1::Request StartRequest(const std::string& operation) {
  temporal::api::nexus::v1::Request r;
  r.mutable_start_operation()->set_service("payments");
  r.mutable_start_operation()->set_operation(operation);
  return r;
}

temporal::api::nexus::v1::Response SyncSuccess(const std::string& data) {
  temporal::api::nexus::v1::Response r;
  r.mutable_start_operation()->mutable_sync_success()->mutable_payload()->set_data(data);
  return r;
}

class NexusTaskQueuesTest : public ::testing::Test {
 protected:
  // Dispatches to ("ns", "q") with a 10 s deadline; the future gets the outcome.
  std::future<absl::StatusOr<NexusAnswer>> Dispatch(const std::string& operation,
                                                    absl::Duration timeout = absl::Seconds(10)) {
    auto promise = std::make_shared<std::promise<absl::StatusOr<NexusAnswer>>>();
    queues_.Dispatch("ns", "q", StartRequest(operation), clock_.Now() + timeout,
                     [promise](absl::StatusOr<NexusAnswer> a) { promise->set_value(std::move(a)); });
    return promise->get_future();
  }
  std::future<absl::StatusOr<wf::PollNexusTaskQueueResponse>> Poll(uint64_t* id = nullptr) {
    auto promise = std::make_shared<std::promise<absl::StatusOr<wf::PollNexusTaskQueueResponse>>>();
    const uint64_t poll = queues_.Poll("ns", "q", "handler-1", "worker-1", clock_.Now() + absl::Seconds(60),
                                       [promise](auto out) { promise->set_value(std::move(out)); });
    if (id != nullptr) *id = poll;
    return promise->get_future();
  }
  void Advance(absl::Duration d) {
    clock_.Advance(d);
    timers_.Wake();
  }

  ManualClock clock_;
  TimerThread timers_{clock_};
  NexusTaskQueues queues_{clock_, timers_};
};

TEST_F(NexusTaskQueuesTest, ADispatchMeetsAPollAndGetsTheAnswer) {
  auto dispatched = Dispatch("charge");
  EXPECT_EQ(queues_.WaitingDispatches("ns", "q"), 1u);
  auto polled = Poll();
  ASSERT_EQ(polled.wait_for(kWait), std::future_status::ready);
  absl::StatusOr<wf::PollNexusTaskQueueResponse> task = polled.get();
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ(task->request().start_operation().operation(), "charge");
  EXPECT_EQ(task->request().header().at("request-timeout"), "10s");
  ASSERT_FALSE(task->task_token().empty());
  EXPECT_EQ(dispatched.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "no answer yet";

  ASSERT_TRUE(queues_.Complete("ns", task->task_token(), SyncSuccess("42")).ok());
  ASSERT_EQ(dispatched.wait_for(kWait), std::future_status::ready);
  absl::StatusOr<NexusAnswer> answer = dispatched.get();
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_TRUE(answer->response.has_value());
  EXPECT_EQ(answer->response->start_operation().sync_success().payload().data(), "42");
  EXPECT_EQ(queues_.Complete("ns", task->task_token(), SyncSuccess("again")).code(),
            absl::StatusCode::kNotFound)
      << "answered once";
}

TEST_F(NexusTaskQueuesTest, AWaitingPollTakesTheNextDispatchAndFailuresReturn) {
  auto polled = Poll();
  EXPECT_EQ(queues_.WaitingPolls("ns", "q"), 1u);
  auto dispatched = Dispatch("refund");
  ASSERT_EQ(polled.wait_for(kWait), std::future_status::ready);
  auto task = polled.get();
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(queues_.WaitingPolls("ns", "q"), 0u);
  temporal::api::failure::v1::Failure failure;
  failure.set_message("no such card");
  failure.mutable_nexus_handler_failure_info()->set_type("BAD_REQUEST");
  EXPECT_EQ(queues_.Fail("other-ns", task->task_token(), failure).code(),
            absl::StatusCode::kInvalidArgument)
      << "another namespace's token";
  ASSERT_TRUE(queues_.Fail("ns", task->task_token(), failure).ok());
  ASSERT_EQ(dispatched.wait_for(kWait), std::future_status::ready);
  auto answer = dispatched.get();
  ASSERT_TRUE(answer.ok());
  ASSERT_TRUE(answer->failure.has_value());
  EXPECT_EQ(answer->failure->nexus_handler_failure_info().type(), "BAD_REQUEST");
}

TEST_F(NexusTaskQueuesTest, DeadlinesEndDispatchesAndPolls) {
  // A dispatch no poller took, and one taken but not answered, end at their deadline.
  auto untaken = Dispatch("a", absl::Seconds(5));
  auto taken = Dispatch("b", absl::Seconds(5));
  auto first = Poll();  // takes "a"
  ASSERT_EQ(first.wait_for(kWait), std::future_status::ready);
  auto task_a = first.get();
  ASSERT_TRUE(task_a.ok());
  Advance(absl::Seconds(6));
  ASSERT_EQ(untaken.wait_for(kWait), std::future_status::ready);
  ASSERT_EQ(taken.wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(untaken.get().status().message(), "upstream timeout");
  EXPECT_EQ(taken.get().status().code(), absl::StatusCode::kDeadlineExceeded);
  const absl::Status late = queues_.Complete("ns", task_a->task_token(), SyncSuccess("late"));
  EXPECT_EQ(late.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(late.message(), "Nexus task not found or already expired");

  // A poll ends empty at its deadline, or at once when its caller goes away; neither takes
  // a later task.
  auto expiring = Poll();
  uint64_t id = 0;
  auto cancelled = Poll(&id);
  queues_.CancelPoll(id);
  ASSERT_EQ(cancelled.wait_for(kWait), std::future_status::ready);
  EXPECT_TRUE(cancelled.get()->task_token().empty());
  Advance(absl::Seconds(61));
  ASSERT_EQ(expiring.wait_for(kWait), std::future_status::ready);
  EXPECT_TRUE(expiring.get()->task_token().empty());
  auto waiting = Dispatch("c");
  EXPECT_EQ(queues_.WaitingDispatches("ns", "q"), 1u) << "no poll is left to take it";

  // Its pollers are remembered for five minutes after their last poll.
  ASSERT_EQ(queues_.Pollers("ns", "q").size(), 1u);
  EXPECT_EQ(queues_.Pollers("ns", "q")[0].first, "handler-1");
  Advance(NexusTaskQueues::kPollerMemory);
  EXPECT_TRUE(queues_.Pollers("ns", "q").empty());
}

TEST_F(NexusTaskQueuesTest, AWorkersShutdownEndsItsPolls) {
  auto shutting = Poll();  // of worker-1
  queues_.ReleaseWorkerPolls("ns", "worker-2");
  EXPECT_EQ(queues_.WaitingPolls("ns", "q"), 1u) << "another worker's shutdown";
  queues_.ReleaseWorkerPolls("ns", "worker-1");
  ASSERT_EQ(shutting.wait_for(kWait), std::future_status::ready);
  EXPECT_TRUE(shutting.get()->task_token().empty());
  EXPECT_EQ(queues_.WaitingPolls("ns", "q"), 0u);
}

TEST_F(NexusTaskQueuesTest, AnswersAreChecked) {
  auto dispatched = Dispatch("start");
  auto polled = Poll();
  ASSERT_EQ(polled.wait_for(kWait), std::future_status::ready);
  auto task = polled.get();
  ASSERT_TRUE(task.ok());
  temporal::api::nexus::v1::Response async;
  async.mutable_start_operation()->mutable_async_success();
  EXPECT_EQ(queues_.Complete("ns", task->task_token(), async).message(),
            "missing opration token in response");
  async.mutable_start_operation()->mutable_async_success()->set_operation_token(std::string(4097, 't'));
  EXPECT_EQ(queues_.Complete("ns", task->task_token(), async).message(),
            "operation token length exceeds allowed limit (4097/4096)");
  async.mutable_start_operation()->mutable_async_success()->set_operation_token("op-1");
  EXPECT_TRUE(queues_.Complete("ns", task->task_token(), async).ok()) << "the task waited on";

  auto queue = NexusTaskQueues::QueueOfToken(task->task_token());
  ASSERT_TRUE(queue.has_value());
  EXPECT_EQ(queue->first, "ns");
  EXPECT_EQ(queue->second, "q");
  EXPECT_FALSE(NexusTaskQueues::QueueOfToken("garbage").has_value());
}

}  // namespace
}  // namespace tock::server::nexus
