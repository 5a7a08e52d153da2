// The history engine driven directly (no gRPC) on a manual clock: timers never fire before
// their started event's time plus their duration, signal-with-start writes the signal into
// the new run before its first workflow task, the timer queue keeps only a bounded window
// of stored timers in memory and fires each once, concurrent continue-as-new and reads
// of the new run are safe (run under TSAN by scripts/sanitize.sh thread), and workflow
// updates: unanswered ones rejected, unaccepted ones following a continue-as-new, limits.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/shard_controller.h"
#include "server-core/history/timer_queue.h"
#include "server-core/matching/matching_engine.h"
#include "server-core/persistence/persistence.h"
#include "tests/integration/engine_fixture.h"
#include "tests/support/eventually.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::history::v1::HistoryEvent;

// Not on a millisecond: stored timer times are whole milliseconds.
const absl::Time kStart = absl::FromUnixMicros(1'800'000'000'000'300);
constexpr absl::Duration kWait = absl::Seconds(10);  // bound on every wait in these tests

class EngineFixture : public HistoryEngineTest {
 protected:
  EngineFixture() : HistoryEngineTest(kStart) {}
};

TEST_F(EngineFixture, ATimerNeverFiresBeforeItsStartedEventTimePlusItsDuration) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("timer-wf"));
  ASSERT_TRUE(started.ok()) << started.status();
  auto task = PollWorkflowTask("q");
  ASSERT_TRUE(task.ok()) << task.status();
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(task->task_token());
  auto* cmd = done.add_commands();
  cmd->set_command_type(enums::COMMAND_TYPE_START_TIMER);
  cmd->mutable_start_timer_command_attributes()->set_timer_id("t1");
  *cmd->mutable_start_timer_command_attributes()->mutable_start_to_fire_timeout() =
      ToProtoDuration(absl::Seconds(1));
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());

  // 0.2 ms short of the duration: rounding the due time down to a whole millisecond made
  // the timer fire here.
  clock_.Advance(absl::Seconds(1) - absl::Microseconds(200));
  engine_->WakeTimers();
  engine_->WaitForDueTimersForTest();  // whatever is due by now has been run
  for (const HistoryEvent& e : History(started->run_id())) {
    ASSERT_NE(e.event_type(), enums::EVENT_TYPE_TIMER_FIRED) << "fired before its time";
  }
  clock_.Advance(absl::Milliseconds(1));
  engine_->WakeTimers();
  std::optional<HistoryEvent> fired = WaitForEvent(started->run_id(), enums::EVENT_TYPE_TIMER_FIRED);
  ASSERT_TRUE(fired.has_value());
  std::optional<HistoryEvent> timer_started;
  for (const HistoryEvent& e : History(started->run_id())) {
    if (e.event_type() == enums::EVENT_TYPE_TIMER_STARTED) timer_started = e;
  }
  ASSERT_TRUE(timer_started.has_value());
  EXPECT_GE(FromProtoTime(fired->event_time()) - FromProtoTime(timer_started->event_time()),
            absl::Seconds(1));
}

// A workflow task completed in time retires its timeout timer: the timer does not fire later
// only to find itself stale (which wrote the run again, a transaction for nothing).
TEST_F(EngineFixture, ARetiredTimeoutTimerDoesNotFireAndRewriteTheRun) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("retired-wf"));
  ASSERT_TRUE(started.ok()) << started.status();
  auto task = PollWorkflowTask("q");
  ASSERT_TRUE(task.ok()) << task.status();
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(task->task_token());
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());
  auto before = persistence_->executions().GetRun(ns_.id, "retired-wf", started->run_id());
  ASSERT_TRUE(before.ok()) << before.status();
  // Past the workflow task's start-to-close timeout (10 s).
  clock_.Advance(absl::Seconds(30));
  engine_->WakeTimers();
  engine_->WaitForDueTimersForTest();
  auto after = persistence_->executions().GetRun(ns_.id, "retired-wf", started->run_id());
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->db_version(), before->db_version()) << "the run was written again";
}

// return_new_workflow_task (which the SDKs set with a sticky queue): a completion that
// schedules the next workflow task (here for a signal that arrived meanwhile) gets it
// started in its answer, with only the events after the completed task, and no queue,
// poll or timer is involved: the sticky task's schedule-to-start timer is never written.
// A run of `workflow_id` whose first workflow task is started, and a signal that arrived
// meanwhile (buffered: the completion then needs a new workflow task).
class NextTaskFixture : public EngineFixture {
 protected:
  struct Started {
    std::string run_id;
    wf::PollWorkflowTaskQueueResponse task;
  };
  Started StartWithASignalDuringTheTask(const std::string& workflow_id) {
    auto started = engine_->StartWorkflow(ns_, StartRequest(workflow_id));
    EXPECT_TRUE(started.ok()) << started.status();
    auto task = PollWorkflowTask("q");
    EXPECT_TRUE(task.ok()) << task.status();
    wf::SignalWorkflowExecutionRequest signal;
    signal.mutable_workflow_execution()->set_workflow_id(workflow_id);
    signal.set_signal_name("go");
    EXPECT_TRUE(engine_->SignalWorkflow(ns_, signal).ok());
    return {started.ok() ? started->run_id() : "", task.ok() ? *task : wf::PollWorkflowTaskQueueResponse()};
  }
};

TEST_F(NextTaskFixture, ACompletionAskingForItsNextTaskGetsItStartedWithTheNewEventsOnly) {
  Started started = StartWithASignalDuringTheTask("next-wf");
  ASSERT_FALSE(HasFailure());
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(started.task.task_token());
  done.set_identity("worker-1");
  done.mutable_sticky_attributes()->mutable_worker_task_queue()->set_name("q-sticky-1");
  *done.mutable_sticky_attributes()->mutable_schedule_to_start_timeout() =
      ToProtoDuration(absl::Seconds(5));
  done.set_return_new_workflow_task(true);
  auto answer = engine_->RespondWorkflowTaskCompleted(ns_, done);
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_TRUE(answer->has_workflow_task());
  const wf::PollWorkflowTaskQueueResponse& next = answer->workflow_task();
  EXPECT_EQ(next.previous_started_event_id(), 3);
  EXPECT_EQ(next.started_event_id(), 7);
  EXPECT_EQ(next.workflow_execution().run_id(), started.run_id);
  std::vector<enums::EventType> types;
  for (const HistoryEvent& e : next.history().events()) types.push_back(e.event_type());
  EXPECT_EQ(types, (std::vector<enums::EventType>{
                       enums::EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
                       enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
                       enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
                       enums::EVENT_TYPE_WORKFLOW_TASK_STARTED}));
  // The same events as stored.
  std::vector<HistoryEvent> stored = History(started.run_id);
  ASSERT_EQ(stored.size(), 7u);
  for (int i = 0; i < next.history().events_size(); ++i) {
    EXPECT_EQ(next.history().events(i).SerializeAsString(), stored[3 + i].SerializeAsString());
  }
  EXPECT_EQ(stored[5].workflow_task_scheduled_event_attributes().task_queue().name(), "q-sticky-1");
  EXPECT_EQ(stored[6].workflow_task_started_event_attributes().identity(), "worker-1");

  // Past the sticky schedule-to-start timeout (5 s), short of start-to-close (10 s): no timer
  // of the task fires, the run is not written again.
  auto before = persistence_->executions().GetRun(ns_.id, "next-wf", started.run_id);
  ASSERT_TRUE(before.ok()) << before.status();
  clock_.Advance(absl::Seconds(6));
  engine_->WakeTimers();
  engine_->WaitForDueTimersForTest();
  auto after = persistence_->executions().GetRun(ns_.id, "next-wf", started.run_id);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->db_version(), before->db_version()) << "the run was written again";

  // The task handed back completes the run like any other.
  wf::RespondWorkflowTaskCompletedRequest finish;
  finish.set_task_token(next.task_token());
  finish.set_return_new_workflow_task(true);
  auto* complete = finish.add_commands();
  complete->set_command_type(enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION);
  complete->mutable_complete_workflow_execution_command_attributes();
  auto finished = engine_->RespondWorkflowTaskCompleted(ns_, finish);
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_FALSE(finished->has_workflow_task());
  EXPECT_EQ(History(started.run_id).back().event_type(),
            enums::EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
}

// A worker without a sticky queue does not cache the run: its next task goes through the
// queue with the whole history, as a poll gets it.
TEST_F(NextTaskFixture, WithoutAStickyQueueTheNextTaskGoesThroughTheQueue) {
  Started started = StartWithASignalDuringTheTask("next-plain");
  ASSERT_FALSE(HasFailure());
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(started.task.task_token());
  done.set_return_new_workflow_task(true);
  auto answer = engine_->RespondWorkflowTaskCompleted(ns_, done);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_FALSE(answer->has_workflow_task());
  auto next = PollWorkflowTask("q");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->history().events_size(), 7);
}

// Another host took the shard: this one's write is fenced out, answers UNAVAILABLE (clients
// retry; the owner serves the retry), stores nothing, and this host stops using the shard.
TEST_F(EngineFixture, AWriteToAShardTakenByAnotherHostIsRetryableAndGivesTheShardUp) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("moved"));
  ASSERT_TRUE(started.ok()) << started.status();
  const int32_t shard = shards_->ShardFor(ns_.id, "moved");
  ShardController other(persistence_->executions(), 4, "other-host");
  ASSERT_TRUE(other.SetOwned({shard}).ok());

  wf::SignalWorkflowExecutionRequest signal;
  signal.mutable_workflow_execution()->set_workflow_id("moved");
  signal.set_signal_name("s");
  absl::Status s = engine_->SignalWorkflow(ns_, signal);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("is not owned by this host"), std::string::npos) << s;
  EXPECT_FALSE(shards_->Owns(shard));
  for (const HistoryEvent& e : History(started->run_id())) {
    EXPECT_NE(e.event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
  }
  // Later calls are refused before touching the store.
  EXPECT_EQ(engine_->SignalWorkflow(ns_, signal).code(), absl::StatusCode::kUnavailable);
  // Given back by the ring, the shard works again, with a newer range id than the other's.
  ASSERT_TRUE(shards_->SetOwned({1, 2, 3, 4}).ok());
  EXPECT_GT(shards_->RangeId(shard), other.RangeId(shard));
  EXPECT_TRUE(engine_->SignalWorkflow(ns_, signal).ok());
}

// A history long poll waits for the run's next commit, which happens on the shard's owner:
// when this host gives the shard up, the poll answers "not owned" at once (the router then
// asks the new owner) instead of at its deadline; a poll arriving afterwards does not wait.
TEST_F(EngineFixture, AHistoryLongPollOnAShardGivenUpAnswersNotOwnedAtOnce) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("awaited"));
  ASSERT_TRUE(started.ok()) << started.status();
  const int32_t shard = shards_->ShardFor(ns_.id, "awaited");
  wf::GetWorkflowExecutionHistoryRequest req;
  req.mutable_execution()->set_workflow_id("awaited");
  req.set_wait_new_event(true);
  req.set_next_page_token(std::to_string(History(started->run_id()).size() + 1));

  std::mutex mu;
  std::condition_variable cv;
  std::optional<absl::StatusOr<WireBytes>> answer;
  auto poll = [&] {
    engine_->GetWorkflowHistory(ns_, req, clock_.Now() + absl::Minutes(5),
                                [&](absl::StatusOr<WireBytes> r) {
                                  std::lock_guard lock(mu);
                                  answer = std::move(r);
                                  cv.notify_all();
                                });
  };
  poll();
  {
    std::unique_lock lock(mu);
    EXPECT_FALSE(cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return answer.has_value(); }))
        << "nothing new: the poll waits";
  }
  std::vector<int32_t> others;
  for (int32_t id = 1; id <= 4; ++id) {
    if (id != shard) others.push_back(id);
  }
  ASSERT_TRUE(shards_->SetOwned(others).ok());
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, absl::ToChronoNanoseconds(kWait), [&] { return answer.has_value(); }))
        << "the poll still waits after the shard was given up";
    EXPECT_EQ(answer->status().code(), absl::StatusCode::kUnavailable) << answer->status();
    EXPECT_NE(answer->status().message().find("is not owned by this host"), std::string::npos);
    answer.reset();
  }
  poll();  // given up already: answered at once, without waiting
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->status().code(), absl::StatusCode::kUnavailable) << answer->status();
  }
}

TEST_F(EngineFixture, SignalWithStartWritesTheSignalBeforeTheFirstWorkflowTask) {
  wf::SignalWithStartWorkflowExecutionRequest req;
  req.set_workflow_id("sws");
  req.mutable_workflow_type()->set_name("flow");
  req.mutable_task_queue()->set_name("q");
  req.set_signal_name("go");
  req.mutable_signal_input()->add_payloads()->set_data("1");
  req.set_request_id("sws-req");
  auto first = engine_->SignalWithStartWorkflow(ns_, req);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->started());

  std::vector<HistoryEvent> events = History(first->run_id());
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  EXPECT_EQ(events[1].event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
  EXPECT_EQ(events[1].workflow_execution_signaled_event_attributes().signal_name(), "go");
  EXPECT_EQ(events[2].event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);

  // The first task a worker takes holds the signal.
  auto task = PollWorkflowTask("q");
  ASSERT_TRUE(task.ok()) << task.status();
  ASSERT_GE(task->history().events_size(), 2);
  EXPECT_EQ(task->history().events(1).event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);

  // A retry of the same call signals nothing twice; a new call signals the running run.
  auto retried = engine_->SignalWithStartWorkflow(ns_, req);
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_FALSE(retried->started());
  EXPECT_EQ(retried->run_id(), first->run_id());
  req.set_request_id("sws-req-2");
  req.set_signal_name("again");
  auto second = engine_->SignalWithStartWorkflow(ns_, req);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->started());
  int signals = 0;
  for (const HistoryEvent& e : History(first->run_id())) {
    if (e.event_type() == enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) ++signals;
  }
  // The second signal is buffered while the first task is in flight: it is not an event
  // yet, but it is in the run's state.
  EXPECT_EQ(signals, 1);
  auto state = persistence_->executions().GetRun(ns_.id, "sws", first->run_id());
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->buffered_events_size(), 1);
}

TEST_F(EngineFixture, SignalWithStartRefusesABadSignalAndStoresNothing) {
  wf::SignalWithStartWorkflowExecutionRequest req;
  req.set_workflow_id("bad-sws");
  req.mutable_workflow_type()->set_name("flow");
  req.mutable_task_queue()->set_name("q");
  auto s = engine_->SignalWithStartWorkflow(ns_, req);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "SignalName is not set on request.");
  req.set_signal_name(std::string(1001, 's'));
  s = engine_->SignalWithStartWorkflow(ns_, req);
  EXPECT_EQ(s.status().message(), "SignalName length exceeds limit.");
  EXPECT_EQ(persistence_->executions().GetCurrentRun(ns_.id, "bad-sws").status().code(),
            absl::StatusCode::kNotFound);
}

// Continue-as-new caches the new run's state while other threads read that run: under
// TSAN this raced (the new run's cache entry was written without its lock).
TEST_F(EngineFixture, ContinueAsNewAndReadsOfTheNewRunDoNotRace) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("can"));
  ASSERT_TRUE(started.ok());
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    wf::DescribeWorkflowExecutionRequest d;
    d.mutable_execution()->set_workflow_id("can");
    while (!stop) (void)engine_->DescribeWorkflow(ns_, d);
  });
  for (int i = 0; i < 20; ++i) {
    auto task = PollWorkflowTask("q");
    ASSERT_TRUE(task.ok()) << task.status();
    wf::RespondWorkflowTaskCompletedRequest done;
    done.set_task_token(task->task_token());
    auto* cmd = done.add_commands();
    cmd->set_command_type(enums::COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION);
    cmd->mutable_continue_as_new_workflow_execution_command_attributes()
        ->mutable_workflow_type()
        ->set_name("flow");
    cmd->mutable_continue_as_new_workflow_execution_command_attributes()
        ->mutable_task_queue()
        ->set_name("q");
    ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());
  }
  stop = true;
  reader.join();
  auto current = persistence_->executions().GetCurrentRun(ns_.id, "can");
  ASSERT_TRUE(current.ok());
  EXPECT_NE(current->run_id, started->run_id());
}

// Update calls answer through a callback; this keeps the answer for the test to wait on.
template <typename Response>
struct Answer {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<absl::StatusOr<Response>> value;
  void Set(absl::StatusOr<Response> v) {
    std::lock_guard lock(mu);
    value = std::move(v);
    cv.notify_all();
  }
  absl::StatusOr<Response> Wait() {
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, absl::ToChronoNanoseconds(kWait), [&] { return value.has_value(); })) {
      return absl::DeadlineExceededError("no answer");
    }
    return *value;
  }
  bool Answered() {
    std::lock_guard lock(mu);
    return value.has_value();
  }
};
using UpdateAnswer = Answer<wf::UpdateWorkflowExecutionResponse>;

wf::UpdateWorkflowExecutionRequest UpdateRequest(const std::string& workflow_id,
                                                 const std::string& update_id) {
  wf::UpdateWorkflowExecutionRequest req;
  req.mutable_workflow_execution()->set_workflow_id(workflow_id);
  req.mutable_request()->mutable_meta()->set_update_id(update_id);
  req.mutable_request()->mutable_input()->set_name("add");
  return req;
}

// Sends an update; the answer comes later (or never: the caller's deadline is far).
std::shared_ptr<UpdateAnswer> SendUpdate(HistoryEngine& engine, const NamespaceRef& ns,
                                         const wf::UpdateWorkflowExecutionRequest& req) {
  auto answer = std::make_shared<UpdateAnswer>();
  engine.UpdateWorkflow(ns, req, absl::InfiniteFuture(),
                        [answer](absl::StatusOr<wf::UpdateWorkflowExecutionResponse> r) {
                          answer->Set(std::move(r));
                        });
  return answer;
}

// The worker's messages that accept update `id` (delivered by `request`) and complete it.
void AcceptAndComplete(wf::RespondWorkflowTaskCompletedRequest& done,
                       const temporal::api::protocol::v1::Message& request) {
  const std::string& id = request.protocol_instance_id();
  temporal::api::update::v1::Acceptance acceptance;
  acceptance.set_accepted_request_message_id(request.id());
  acceptance.set_accepted_request_sequencing_event_id(request.event_id());
  auto* accept = done.add_messages();
  accept->set_id(id + "/accept");
  accept->set_protocol_instance_id(id);
  accept->mutable_body()->PackFrom(acceptance);
  temporal::api::update::v1::Response response;
  response.mutable_meta()->set_update_id(id);
  response.mutable_outcome()->mutable_success()->add_payloads()->set_data("42");
  auto* respond = done.add_messages();
  respond->set_id(id + "/complete");
  respond->set_protocol_instance_id(id);
  respond->mutable_body()->PackFrom(response);
  for (const char* suffix : {"/accept", "/complete"}) {
    auto* cmd = done.add_commands();
    cmd->set_command_type(enums::COMMAND_TYPE_PROTOCOL_MESSAGE);
    cmd->mutable_protocol_message_command_attributes()->set_message_id(id + suffix);
  }
}

TEST_F(EngineFixture, AnUpdateTheWorkerDoesNotAnswerIsRejectedAsUnprocessed) {
  ASSERT_TRUE(engine_->StartWorkflow(ns_, StartRequest("unanswered")).ok());
  auto first = PollWorkflowTask("q");
  ASSERT_TRUE(first.ok()) << first.status();
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(first->task_token());
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());

  auto answer = SendUpdate(*engine_, ns_, UpdateRequest("unanswered", "u1"));
  auto task = PollWorkflowTask("q");
  ASSERT_TRUE(task.ok()) << task.status();
  ASSERT_EQ(task->messages_size(), 1);
  EXPECT_EQ(task->messages(0).id(), "u1/request");
  EXPECT_EQ(task->messages(0).event_id(), task->started_event_id() - 1);
  wf::RespondWorkflowTaskCompletedRequest ignored;
  ignored.set_task_token(task->task_token());
  auto response = engine_->RespondWorkflowTaskCompleted(ns_, ignored);
  ASSERT_TRUE(response.ok()) << response.status();

  auto result = answer->Wait();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stage(), enums::UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED);
  EXPECT_EQ(result->outcome().failure().application_failure_info().type(), "UnprocessedUpdate");
  // The task that carried it was speculative: nothing of it was written, and the worker is
  // told to forget it (back to the last completed task's started event).
  EXPECT_EQ(History(task->workflow_execution().run_id()).size(), 4u);
  EXPECT_EQ(response->reset_history_event_id(), 3);
}

TEST_F(EngineFixture, ASpeculativeTaskIsWrittenAsShownWhenASignalArrivesMeanwhile) {
  ASSERT_TRUE(engine_->StartWorkflow(ns_, StartRequest("spec")).ok());
  auto first = PollWorkflowTask("q");
  ASSERT_TRUE(first.ok()) << first.status();
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(first->task_token());
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());
  const std::string run_id = first->workflow_execution().run_id();

  auto answer = SendUpdate(*engine_, ns_, UpdateRequest("spec", "u1"));
  auto task = PollWorkflowTask("q");
  ASSERT_TRUE(task.ok()) << task.status();
  ASSERT_EQ(task->history().events_size(), 6);  // 4 written, 2 shown only
  EXPECT_EQ(History(run_id).size(), 4u);
  const HistoryEvent shown_started = task->history().events(5);

  wf::SignalWorkflowExecutionRequest signal;
  signal.mutable_workflow_execution()->set_workflow_id("spec");
  signal.set_signal_name("meanwhile");
  ASSERT_TRUE(engine_->SignalWorkflow(ns_, signal).ok());
  std::vector<HistoryEvent> written = History(run_id);
  ASSERT_EQ(written.size(), 6u) << "the signal made the task's events be written";
  EXPECT_EQ(written[4].event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
  EXPECT_EQ(written[5].event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_STARTED);
  EXPECT_EQ(written[5].event_time().seconds(), shown_started.event_time().seconds());
  EXPECT_EQ(written[5].event_time().nanos(), shown_started.event_time().nanos());

  wf::RespondWorkflowTaskCompletedRequest accept;
  accept.set_task_token(task->task_token());
  AcceptAndComplete(accept, task->messages(0));
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, accept).ok());
  ASSERT_TRUE(answer->Wait().ok());
  written = History(run_id);
  ASSERT_EQ(written.size(), 11u);  // and a task for the signal
  EXPECT_EQ(written[6].event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  EXPECT_EQ(written[7].event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
  EXPECT_EQ(written[8].event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
  EXPECT_EQ(written[9].event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
  EXPECT_EQ(written[10].event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
}

TEST_F(EngineFixture, AnUpdateNotYetAcceptedFollowsTheRunIntoItsContinuation) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("moves"));
  ASSERT_TRUE(started.ok());
  auto first = PollWorkflowTask("q");
  ASSERT_TRUE(first.ok()) << first.status();
  // Admitted while the task runs; the task continues as new without having seen it.
  auto answer = SendUpdate(*engine_, ns_, UpdateRequest("moves", "u1"));
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(first->task_token());
  auto* cmd = done.add_commands();
  cmd->set_command_type(enums::COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION);
  cmd->mutable_continue_as_new_workflow_execution_command_attributes()->mutable_workflow_type()->set_name("flow");
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());

  auto next = PollWorkflowTask("q");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_NE(next->workflow_execution().run_id(), started->run_id());
  ASSERT_EQ(next->messages_size(), 1) << "the new run's first task carries the update";
  wf::RespondWorkflowTaskCompletedRequest accept;
  accept.set_task_token(next->task_token());
  AcceptAndComplete(accept, next->messages(0));
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, accept).ok());

  auto result = answer->Wait();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->update_ref().workflow_execution().run_id(), next->workflow_execution().run_id());
  EXPECT_EQ(result->outcome().success().payloads(0).data(), "42");
}

TEST_F(EngineFixture, UpdatesInFlightAreLimitedAndMessagesMustExist) {
  Limits limits;
  limits.in_flight_updates = 2;
  engine_->SetLimits(limits);
  ASSERT_TRUE(engine_->StartWorkflow(ns_, StartRequest("limited")).ok());
  auto a = SendUpdate(*engine_, ns_, UpdateRequest("limited", "a"));
  auto b = SendUpdate(*engine_, ns_, UpdateRequest("limited", "b"));
  auto c = SendUpdate(*engine_, ns_, UpdateRequest("limited", "c"));
  auto refused = c->Wait();
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "limit on number of concurrent in-flight updates has been reached (2)");
  EXPECT_FALSE(a->Answered());

  // One task carries both, in admission order; a command naming a message not sent fails the
  // completion and writes nothing.
  auto task = PollWorkflowTask("q");
  ASSERT_TRUE(task.ok()) << task.status();
  ASSERT_EQ(task->messages_size(), 2);
  EXPECT_EQ(task->messages(0).protocol_instance_id(), "a");
  EXPECT_EQ(task->messages(1).protocol_instance_id(), "b");
  wf::RespondWorkflowTaskCompletedRequest bad;
  bad.set_task_token(task->task_token());
  auto* cmd = bad.add_commands();
  cmd->set_command_type(enums::COMMAND_TYPE_PROTOCOL_MESSAGE);
  cmd->mutable_protocol_message_command_attributes()->set_message_id("nowhere");
  absl::StatusOr<wf::RespondWorkflowTaskCompletedResponse> failed =
      engine_->RespondWorkflowTaskCompleted(ns_, bad);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(failed.status().message(), "ProtocolMessageCommand referenced absent message ID nowhere");

  wf::RespondWorkflowTaskCompletedRequest both;
  both.set_task_token(task->task_token());
  AcceptAndComplete(both, task->messages(0));
  AcceptAndComplete(both, task->messages(1));
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, both).ok());
  ASSERT_TRUE(a->Wait().ok());
  ASSERT_TRUE(b->Wait().ok());
  // A repeated id after completion is answered from the history, not run again.
  auto again = SendUpdate(*engine_, ns_, UpdateRequest("limited", "a"));
  auto repeated = again->Wait();
  ASSERT_TRUE(repeated.ok()) << repeated.status();
  EXPECT_EQ(repeated->outcome().success().payloads(0).data(), "42");
}

// Temporal's per-workflow limits, small here so that a test reaches them.
// Task tokens are not signed: each call that answers one checks that the token's namespace
// is the one the call names (and authorization checked), before anything is read or written.
// A token of "ns" sent on another namespace is refused with Temporal's message, and ns's
// workflow task and activity stay as they were (review P2-1).
TEST_F(EngineFixture, ATokenOfAnotherNamespaceIsRefusedBeforeAnythingChanges) {
  const NamespaceRef other{"other-id", "other", 0};
  const std::string kMismatch = "Operation requested with a token from a different namespace.";
  auto expect_mismatch = [&](const absl::Status& s, const std::string& what) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << what << ": " << s;
    EXPECT_EQ(s.message(), kMismatch) << what;
  };
  auto started = engine_->StartWorkflow(ns_, StartRequest("token-owner"));
  ASSERT_TRUE(started.ok()) << started.status();
  auto task = PollWorkflowTask("q");
  ASSERT_TRUE(task.ok()) << task.status();
  wf::RespondWorkflowTaskFailedRequest failed;
  failed.set_task_token(task->task_token());
  expect_mismatch(engine_->RespondWorkflowTaskFailed(other, failed), "workflow task failed");
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(task->task_token());
  auto* cmd = done.add_commands();
  cmd->set_command_type(enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK);
  auto* a = cmd->mutable_schedule_activity_task_command_attributes();
  a->set_activity_id("act");
  a->mutable_activity_type()->set_name("act");
  a->mutable_task_queue()->set_name("q");
  *a->mutable_start_to_close_timeout() = ToProtoDuration(absl::Minutes(10));
  expect_mismatch(engine_->RespondWorkflowTaskCompleted(other, done).status(),
                  "workflow task completed");
  wf::RespondQueryTaskCompletedRequest query;
  query.set_task_token(task->task_token());
  expect_mismatch(engine_->RespondQueryTaskCompleted(other, query), "query task completed");
  // Nothing was written: the task is still started, and its owner completes it.
  ASSERT_EQ(History(started->run_id()).size(), 3u);  // started, task scheduled, task started
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());

  std::mutex mu;
  std::condition_variable cv;
  std::optional<persistence::TaskQueueTask> got;
  matching_->Poll(ns_.id, "q", persistence::TaskKind::kActivity, clock_.Now() + absl::Hours(1),
                  "test-worker", [&](std::optional<persistence::TaskQueueTask> t) {
                    std::lock_guard lock(mu);
                    got = std::move(t);
                    cv.notify_all();
                  });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(
        cv.wait_for(lock, absl::ToChronoNanoseconds(kWait), [&] { return got.has_value(); }));
  }
  auto activity = engine_->RecordActivityTaskStarted(ns_, *got, "test-worker");
  ASSERT_TRUE(activity.ok()) << activity.status();
  const std::string& token = activity->task_token();
  temporal::api::common::v1::Payloads details;
  details.add_payloads()->set_data("forged");
  expect_mismatch(engine_->RespondActivityTaskCompleted(other, token, details, "intruder"),
                  "activity completed");
  wf::RespondActivityTaskFailedRequest activity_failed;
  activity_failed.set_task_token(token);
  expect_mismatch(engine_->RespondActivityTaskFailed(other, activity_failed), "activity failed");
  expect_mismatch(engine_->RespondActivityTaskCanceled(other, token, details, "intruder"),
                  "activity canceled");
  expect_mismatch(engine_->RecordActivityTaskHeartbeat(other, token, details).status(),
                  "activity heartbeat");
  // The activity is still pending, with no heartbeat; the history holds no answer.
  wf::DescribeWorkflowExecutionRequest describe;
  describe.mutable_execution()->set_workflow_id("token-owner");
  auto described = engine_->DescribeWorkflow(ns_, describe);
  ASSERT_TRUE(described.ok()) << described.status();
  ASSERT_EQ(described->pending_activities_size(), 1);
  EXPECT_FALSE(described->pending_activities(0).has_heartbeat_details());
  for (const HistoryEvent& e : History(started->run_id())) {
    EXPECT_NE(e.event_type(), enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
    EXPECT_NE(e.event_type(), enums::EVENT_TYPE_ACTIVITY_TASK_FAILED);
    EXPECT_NE(e.event_type(), enums::EVENT_TYPE_ACTIVITY_TASK_CANCELED);
  }
  EXPECT_TRUE(engine_->RespondActivityTaskCompleted(ns_, token, details, "worker").ok());
}

class LimitsFixture : public EngineFixture {
 protected:
  void SetUp() override {
    EngineFixture::SetUp();
    Limits limits;
    limits.pending_activities = 3;
    limits.blob_size_error = 1000;
    limits.history_count_error = 20;
    engine_->SetLimits(limits);
  }

  wf::RespondWorkflowTaskCompletedRequest Completion(const std::string& token) {
    wf::RespondWorkflowTaskCompletedRequest done;
    done.set_task_token(token);
    return done;
  }
};

TEST_F(LimitsFixture, TooManyPendingActivitiesFailTheWorkflowTaskAndScheduleNothing) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("many-activities"));
  ASSERT_TRUE(started.ok());
  auto task = PollWorkflowTask("q");
  ASSERT_TRUE(task.ok()) << task.status();
  wf::RespondWorkflowTaskCompletedRequest done = Completion(task->task_token());
  for (int i = 0; i < 4; ++i) {
    auto* cmd = done.add_commands();
    cmd->set_command_type(enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK);
    auto* a = cmd->mutable_schedule_activity_task_command_attributes();
    a->set_activity_id("a" + std::to_string(i));
    a->mutable_activity_type()->set_name("act");
    *a->mutable_start_to_close_timeout() = ToProtoDuration(absl::Seconds(10));
  }
  auto result = engine_->RespondWorkflowTaskCompleted(ns_, done);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(),
            "the number of pending activities, 3, has reached the per-workflow limit of 3");
  std::vector<HistoryEvent> events = History(started->run_id());
  ASSERT_EQ(events.size(), 5u);  // started, scheduled, started, failed, scheduled again
  EXPECT_EQ(events[3].event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_FAILED);
  EXPECT_EQ(events[3].workflow_task_failed_event_attributes().cause(),
            enums::WORKFLOW_TASK_FAILED_CAUSE_PENDING_ACTIVITIES_LIMIT_EXCEEDED);
  EXPECT_EQ(events[4].event_type(), enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
  EXPECT_EQ(events[4].workflow_task_scheduled_event_attributes().attempt(), 2);
}

TEST_F(LimitsFixture, AnOversizedResultTerminatesTheRun) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("big-result"));
  ASSERT_TRUE(started.ok());
  auto task = PollWorkflowTask("q");
  ASSERT_TRUE(task.ok()) << task.status();
  wf::RespondWorkflowTaskCompletedRequest done = Completion(task->task_token());
  auto* cmd = done.add_commands();
  cmd->set_command_type(enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION);
  cmd->mutable_complete_workflow_execution_command_attributes()->mutable_result()->add_payloads()->set_data(
      std::string(2000, 'x'));
  auto result = engine_->RespondWorkflowTaskCompleted(ns_, done);
  EXPECT_EQ(result.status().message(),
            "CompleteWorkflowExecutionCommandAttributes.Result exceeds size limit.");
  std::vector<HistoryEvent> events = History(started->run_id());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED);
  EXPECT_EQ(events.back().workflow_execution_terminated_event_attributes().reason(),
            "CompleteWorkflowExecutionCommandAttributes.Result exceeds size limit.");
  EXPECT_EQ(events[events.size() - 2].workflow_task_failed_event_attributes().cause(),
            enums::WORKFLOW_TASK_FAILED_CAUSE_BAD_COMPLETE_WORKFLOW_EXECUTION_ATTRIBUTES);
}

TEST_F(LimitsFixture, AHistoryPastTheCountLimitIsTerminated) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("long-history"));
  ASSERT_TRUE(started.ok());
  wf::SignalWorkflowExecutionRequest signal;
  signal.mutable_workflow_execution()->set_workflow_id("long-history");
  signal.set_signal_name("tick");
  absl::Status last;
  int sent = 0;
  for (; sent < 40; ++sent) {
    last = engine_->SignalWorkflow(ns_, signal);
    if (!last.ok()) break;
  }
  EXPECT_EQ(last.code(), absl::StatusCode::kNotFound) << "signals after the end are refused";
  EXPECT_LT(sent, 25);
  std::vector<HistoryEvent> events = History(started->run_id());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().event_type(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED);
  EXPECT_EQ(events.back().workflow_execution_terminated_event_attributes().reason(),
            "Workflow history count exceeds limit.");
  EXPECT_EQ(events.back().workflow_execution_terminated_event_attributes().identity(),
            "history-service");
}

// Queues that clients named once are forgotten: the map of queues does not grow forever.
TEST(MatchingSweepTest, IdleQueuesAreForgotten) {
  ManualClock clock;
  clock.Set(kStart);
  TimerThread timer_thread(clock);
  matching::MatchingEngine matching(clock, timer_thread);
  std::atomic<int> answered{0};
  for (int i = 0; i < 100; ++i) {
    matching.Poll("ns", "queue-" + std::to_string(i), persistence::TaskKind::kWorkflow,
                  clock.Now() + absl::Seconds(1), "w", [&](auto task) {
                    EXPECT_FALSE(task.has_value());
                    ++answered;
                  });
  }
  EXPECT_EQ(matching.QueueCount(), 100u);
  clock.Advance(absl::Seconds(2));
  timer_thread.Wake();
  ASSERT_TRUE(tock::testing::Eventually([&] { return answered.load() >= 100; }));
  ASSERT_EQ(answered.load(), 100) << "every poll got its empty answer at its deadline";
  // Past the pollers' memory, the next poll sweeps: only its own queue is left.
  clock.Advance(matching::MatchingEngine::kPollerMemory + absl::Seconds(1));
  matching.Poll("ns", "busy", persistence::TaskKind::kWorkflow, clock.Now() + absl::Seconds(1), "w",
                [&](auto) { ++answered; });
  EXPECT_EQ(matching.QueueCount(), 1u);
  matching.ReleasePolls();
  EXPECT_EQ(answered.load(), 101);
}

// Stored timers: only a window of them is in memory; every one fires once, never early.
TEST(TimerQueueTest, PagesStoredTimersInAndFiresEachOnce) {
  ManualClock clock;
  clock.Set(kStart);
  auto p = persistence::OpenPersistence({});
  ASSERT_TRUE(p.ok());
  ShardController shards((*p)->executions(), 2, "test");
  ASSERT_TRUE(shards.AcquireAll().ok());
  // 3,000 timers one second apart, in two shards, all stored before the queue starts.
  constexpr int kTimers = 3000;
  for (int32_t shard = 1; shard <= 2; ++shard) {
    persistence::Commit commit;
    commit.shard_id = shard;
    commit.range_id = shards.RangeId(shard);
    for (int i = shard - 1; i < kTimers; i += 2) {
      persistence::TimerTaskRow row;
      row.shard_id = shard;
      row.fire_time = absl::FromUnixMillis(absl::ToUnixMillis(kStart)) + absl::Seconds(i + 1);
      row.task_id = shards.NextTaskId(shard);
      row.task.set_timer_id(std::to_string(i));
      commit.new_timers.push_back(row);
    }
    ASSERT_TRUE((*p)->executions().Write(commit).ok());
  }
  std::mutex mu;
  std::set<std::string> fired;
  int duplicates = 0, early = 0;
  // The timer thread goes before the queue (TimerQueue's contract): see the end.
  auto timer_thread = std::make_unique<TimerThread>(clock);
  TimerQueue::Options options;
  options.window = absl::Seconds(120);  // 120 timers due within it: more than max_armed
  options.page = 50;
  options.max_armed = 100;
  TimerQueue queue(
      (*p)->executions(), 2, *timer_thread, clock, NullLogger(),
      [&](const persistence::TimerTaskRow& row) {
        std::lock_guard lock(mu);
        if (clock.Now() < row.fire_time) ++early;
        if (!fired.insert(row.task.timer_id()).second) ++duplicates;
        return absl::OkStatus();
      },
      options);
  queue.Activate(1);
  queue.Activate(2);
  ASSERT_TRUE(queue.Start().ok());
  // At most max_armed plus the page that crossed it; far fewer than the 3,000 stored.
  EXPECT_LE(queue.armed(), 150u) << "the window is bounded";
  EXPECT_GE(queue.armed(), 100u);

  // A timer committed now, due in 2 s, inside the loaded window: armed at once.
  persistence::TimerTaskRow soon;
  soon.shard_id = 1;
  soon.fire_time = absl::FromUnixMillis(absl::ToUnixMillis(kStart)) + absl::Milliseconds(2500);
  soon.task_id = shards.NextTaskId(1);
  soon.task.set_timer_id("soon");
  queue.Add(soon);

  // Move time in steps of 30 s to the end; every timer fires once.
  for (int step = 0; step < kTimers / 30 + 4; ++step) {
    clock.Advance(absl::Seconds(30));
    queue.Wake();
    const absl::Time until = absl::Now() + kWait;
    while (absl::Now() < until) {
      {
        std::lock_guard lock(mu);
        // The stored timers due by now ("soon" aside: counting it let the last step end one
        // short, and Stop came before the last timer fired).
        const int due = std::min(kTimers, (step + 1) * 30);
        if (static_cast<int>(fired.size() - fired.count("soon")) >= due) break;
      }
      absl::SleepFor(absl::Milliseconds(2));
    }
    EXPECT_LE(queue.armed(), 151u);
  }
  queue.Stop();
  timer_thread.reset();
  std::lock_guard lock(mu);
  EXPECT_EQ(fired.size(), static_cast<size_t>(kTimers) + 1);
  EXPECT_TRUE(fired.contains("soon"));
  EXPECT_EQ(duplicates, 0);
  EXPECT_EQ(early, 0);
}

// One shard of an in-memory store, owned, on a manual clock at kStart, with a timer thread:
// what a TimerQueue test runs on. `Row` makes a timer of the shard due `in` after kStart.
struct OneShardTimers {
  OneShardTimers() {
    clock.Set(kStart);
    EXPECT_TRUE(shards.AcquireAll().ok());
  }
  persistence::TimerTaskRow Row(const std::string& id, absl::Duration in) {
    persistence::TimerTaskRow r;
    r.shard_id = 1;
    r.fire_time = absl::FromUnixMillis(absl::ToUnixMillis(kStart)) + in;
    r.task_id = shards.NextTaskId(1);
    r.task.set_timer_id(id);
    return r;
  }
  persistence::ExecutionStore& store() { return persistence->executions(); }

  ManualClock clock;
  std::unique_ptr<persistence::Persistence> persistence = *persistence::OpenPersistence({});
  ShardController shards{persistence->executions(), 1, "test"};
  std::unique_ptr<TimerThread> timer_thread = std::make_unique<TimerThread>(clock);
};

// A firing that fails is retried with backoff until it succeeds; nothing is lost.
TEST(TimerQueueTest, RetriesAFailingTimerWithBackoff) {
  OneShardTimers t;
  std::atomic<int> calls{0};
  std::mutex mu;
  std::vector<absl::Time> attempts;
  TimerQueue queue(t.store(), 1, *t.timer_thread, t.clock, NullLogger(),
                   [&](const persistence::TimerTaskRow&) {
                     std::lock_guard lock(mu);
                     attempts.push_back(t.clock.Now());
                     return ++calls < 4 ? absl::UnavailableError("database is busy")
                                        : absl::OkStatus();
                   });
  queue.Activate(1);
  ASSERT_TRUE(queue.Start().ok());
  queue.Add(t.Row("", absl::Seconds(1)));
  // 1 s, then retries after 1 s, 2 s, 4 s.
  for (int i = 0; i < 12 && calls < 4; ++i) {
    t.clock.Advance(absl::Seconds(1));
    queue.Wake();
    queue.WaitForDueForTest();  // each attempt due by now has been made
  }
  ASSERT_EQ(calls.load(), 4);
  queue.Stop();
  t.timer_thread.reset();
  std::lock_guard lock(mu);
  EXPECT_GE(attempts[1] - attempts[0], absl::Seconds(1));
  EXPECT_GE(attempts[2] - attempts[1], absl::Seconds(2));
  EXPECT_GE(attempts[3] - attempts[2], absl::Seconds(4));
  EXPECT_EQ(queue.armed(), 0u);
}


// A timer whose row a commit deleted (Remove) is dropped when due; the others fire.
TEST(TimerQueueTest, ARemovedTimerIsDroppedWhenDue) {
  OneShardTimers t;
  std::mutex mu;
  std::vector<std::string> fired;
  TimerQueue queue(t.store(), 1, *t.timer_thread, t.clock, NullLogger(),
                   [&](const persistence::TimerTaskRow& row) {
                     std::lock_guard lock(mu);
                     fired.push_back(row.task.timer_id());
                     return absl::OkStatus();
                   });
  queue.Activate(1);
  ASSERT_TRUE(queue.Start().ok());
  const persistence::TimerTaskRow kept = t.Row("kept", absl::Seconds(1));
  const persistence::TimerTaskRow removed = t.Row("removed", absl::Seconds(2));
  queue.Add(kept);
  queue.Add(removed);
  EXPECT_EQ(queue.armed(), 2u);
  queue.Remove(removed);
  t.clock.Advance(absl::Seconds(3));
  queue.Wake();
  queue.WaitForDueForTest();
  queue.Stop();
  t.timer_thread.reset();
  std::lock_guard lock(mu);
  EXPECT_EQ(fired, std::vector<std::string>{"kept"});
  EXPECT_EQ(queue.armed(), 0u);
}

// Two hosts' timer queues over one store: a timer armed by the host that gives its shard up
// is dropped unfired, and the shard's new owner loads and fires it.
TEST(TimerQueueTest, ATimerOfAShardGivenUpIsDroppedAndFiredByItsNewOwner) {
  OneShardTimers t;
  persistence::Commit commit;
  commit.shard_id = 1;
  commit.range_id = t.shards.RangeId(1);
  const persistence::TimerTaskRow row = t.Row("t", absl::Seconds(1));
  commit.new_timers.push_back(row);
  ASSERT_TRUE(t.store().Write(commit).ok());

  std::atomic<int> fired_a{0}, fired_b{0};
  TimerQueue a(t.store(), 1, *t.timer_thread, t.clock, NullLogger(),
               [&](const persistence::TimerTaskRow&) { ++fired_a; return absl::OkStatus(); });
  TimerQueue b(t.store(), 1, *t.timer_thread, t.clock, NullLogger(),
               [&](const persistence::TimerTaskRow&) { ++fired_b; return absl::OkStatus(); });
  ASSERT_TRUE(b.Start().ok());  // owns nothing yet
  a.Activate(1);
  ASSERT_TRUE(a.Start().ok());
  EXPECT_EQ(a.armed(), 1u);
  EXPECT_EQ(b.armed(), 0u);

  a.Deactivate(1);
  a.Add(row);  // a commit seen after giving the shard up is not armed either
  t.clock.Advance(absl::Seconds(2));
  a.Wake();
  b.Wake();
  // Everything due by now has been run by both queues: the checks below see what they did.
  a.WaitForDueForTest();
  b.WaitForDueForTest();
  EXPECT_EQ(a.armed(), 0u) << "dropped from memory";
  EXPECT_EQ(fired_a.load(), 0);
  EXPECT_EQ(fired_b.load(), 0) << "not b's yet";

  b.Activate(1);
  b.WaitForDueForTest();
  EXPECT_EQ(fired_b.load(), 1);
  EXPECT_EQ(fired_a.load(), 0);
  a.Stop();
  b.Stop();
  t.timer_thread.reset();
}


// Activity timeouts as Temporal normalises and enforces them (activity_timeouts.h, issue 34).
class ActivityTimeoutFixture : public EngineFixture {
 protected:
  using Attributes = temporal::api::command::v1::ScheduleActivityTaskCommandAttributes;

  static Attributes Activity(const std::string& id, absl::Duration s2c, absl::Duration s2s,
                             absl::Duration stc) {
    Attributes a;
    a.set_activity_id(id);
    a.mutable_activity_type()->set_name("act");
    a.mutable_task_queue()->set_name("aq-" + id);
    if (s2c > absl::ZeroDuration()) *a.mutable_schedule_to_close_timeout() = ToProtoDuration(s2c);
    if (s2s > absl::ZeroDuration()) *a.mutable_schedule_to_start_timeout() = ToProtoDuration(s2s);
    if (stc > absl::ZeroDuration()) *a.mutable_start_to_close_timeout() = ToProtoDuration(stc);
    return a;
  }

  // Starts `workflow_id` and answers its first workflow task with the activities.
  absl::StatusOr<std::string> StartWithActivities(wf::StartWorkflowExecutionRequest start,
                                                  const std::vector<Attributes>& activities) {
    auto started = engine_->StartWorkflow(ns_, start);
    if (!started.ok()) return started.status();
    auto task = PollWorkflowTask("q");
    if (!task.ok()) return task.status();
    wf::RespondWorkflowTaskCompletedRequest done;
    done.set_task_token(task->task_token());
    for (const Attributes& a : activities) {
      auto* cmd = done.add_commands();
      cmd->set_command_type(enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK);
      *cmd->mutable_schedule_activity_task_command_attributes() = a;
    }
    if (auto s = engine_->RespondWorkflowTaskCompleted(ns_, done); !s.ok()) return s.status();
    return started->run_id();
  }

  std::map<std::string, temporal::api::history::v1::ActivityTaskScheduledEventAttributes>
  Scheduled(const std::string& run_id) {
    std::map<std::string, temporal::api::history::v1::ActivityTaskScheduledEventAttributes> out;
    for (const HistoryEvent& e : History(run_id)) {
      if (e.event_type() != enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) continue;
      out[e.activity_task_scheduled_event_attributes().activity_id()] =
          e.activity_task_scheduled_event_attributes();
    }
    return out;
  }

  // The stored activity timeout timer of `type` of the workflow's run, if any.
  std::optional<persistence::TimerTaskRow> StoredTimeout(const std::string& workflow_id,
                                                         enums::TimeoutType type) {
    auto rows = persistence_->executions().LoadTimers(shards_->ShardFor(ns_.id, workflow_id),
                                                      persistence::TimerCursor{},
                                                      absl::InfiniteFuture(), 1000);
    EXPECT_TRUE(rows.ok()) << rows.status();
    if (!rows.ok()) return std::nullopt;
    for (const auto& row : *rows) {
      if (row.task.workflow_id() == workflow_id &&
          row.task.kind() == tock::persistence::v1::TimerTask::KIND_ACTIVITY_TIMEOUT &&
          row.task.timeout_type() == type) {
        return row;
      }
    }
    return std::nullopt;
  }

  // Takes the activity task of `queue` (waits at most kWait) and starts it.
  absl::StatusOr<wf::PollActivityTaskQueueResponse> PollActivity(const std::string& queue) {
    std::optional<persistence::TaskQueueTask> got =
        TakeTask(queue, persistence::TaskKind::kActivity, kWait);
    if (!got) return absl::DeadlineExceededError("no activity task");
    return engine_->RecordActivityTaskStarted(ns_, *got, "test-worker");
  }
};

// Only a schedule-to-close timeout: schedule-to-start and start-to-close take its value (and
// the stored event shows them), and nobody polling the queue, the activity times out
// SCHEDULE_TO_START: both deadlines come due together, and Temporal reports that one. The
// schedule-to-close timer is fired first here, so its firing must report it too.
TEST_F(ActivityTimeoutFixture, AnActivityNobodyPicksUpTimesOutScheduleToStart) {
  auto run = StartWithActivities(
      StartRequest("unpicked"),
      {Activity("idle", absl::Seconds(10), absl::ZeroDuration(), absl::ZeroDuration())});
  ASSERT_TRUE(run.ok()) << run.status();
  const auto scheduled = Scheduled(*run).at("idle");
  EXPECT_EQ(FromProtoDuration(scheduled.schedule_to_close_timeout()), absl::Seconds(10));
  EXPECT_EQ(FromProtoDuration(scheduled.schedule_to_start_timeout()), absl::Seconds(10));
  EXPECT_EQ(FromProtoDuration(scheduled.start_to_close_timeout()), absl::Seconds(10));
  EXPECT_EQ(FromProtoDuration(scheduled.heartbeat_timeout()), absl::ZeroDuration());

  std::optional<persistence::TimerTaskRow> to_start =
      StoredTimeout("unpicked", enums::TIMEOUT_TYPE_SCHEDULE_TO_START);
  std::optional<persistence::TimerTaskRow> to_close =
      StoredTimeout("unpicked", enums::TIMEOUT_TYPE_SCHEDULE_TO_CLOSE);
  ASSERT_TRUE(to_start.has_value()) << "no schedule-to-start timer was armed";
  ASSERT_TRUE(to_close.has_value());
  EXPECT_EQ(to_start->fire_time, to_close->fire_time);
  EXPECT_GE(to_start->fire_time, kStart + absl::Seconds(10));

  clock_.Advance(absl::Seconds(10) + absl::Milliseconds(1));
  ASSERT_TRUE(engine_->FireTimer(*to_close).ok());  // the queue may fire either one as well
  engine_->WakeTimers();
  std::optional<HistoryEvent> timed_out =
      WaitForEvent(*run, enums::EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT);
  ASSERT_TRUE(timed_out.has_value());
  const auto& attrs = timed_out->activity_task_timed_out_event_attributes();
  EXPECT_EQ(attrs.failure().timeout_failure_info().timeout_type(),
            enums::TIMEOUT_TYPE_SCHEDULE_TO_START);
  EXPECT_EQ(attrs.failure().message(), "activity ScheduleToStart timeout");
  EXPECT_EQ(attrs.retry_state(), enums::RETRY_STATE_TIMEOUT);
  EXPECT_EQ(attrs.started_event_id(), 0);
  int timeouts = 0;
  for (const HistoryEvent& e : History(*run)) {
    timeouts += e.event_type() == enums::EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT;
    EXPECT_NE(e.event_type(), enums::EVENT_TYPE_ACTIVITY_TASK_STARTED);
  }
  EXPECT_EQ(timeouts, 1);
}

// A worker took the activity: its schedule-to-start timer is retired, and one fired anyway
// (a copy still stored, or one racing the start) changes nothing; the activity completes.
TEST_F(ActivityTimeoutFixture, APickedUpActivityIsNotTimedOutByScheduleToStart) {
  auto run = StartWithActivities(
      StartRequest("picked"),
      {Activity("busy", absl::Hours(1), absl::Seconds(1), absl::Hours(1))});
  ASSERT_TRUE(run.ok()) << run.status();
  std::optional<persistence::TimerTaskRow> to_start =
      StoredTimeout("picked", enums::TIMEOUT_TYPE_SCHEDULE_TO_START);
  ASSERT_TRUE(to_start.has_value()) << "no schedule-to-start timer was armed";
  auto activity = PollActivity("aq-busy");
  ASSERT_TRUE(activity.ok()) << activity.status();
  EXPECT_FALSE(StoredTimeout("picked", enums::TIMEOUT_TYPE_SCHEDULE_TO_START).has_value());

  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(engine_->FireTimer(*to_start).ok());  // synchronous: its effect is committed
  for (const HistoryEvent& e : History(*run)) {
    ASSERT_NE(e.event_type(), enums::EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT);
  }
  temporal::api::common::v1::Payloads result;
  ASSERT_TRUE(
      engine_->RespondActivityTaskCompleted(ns_, activity->task_token(), result, "w").ok());
  EXPECT_TRUE(WaitForEvent(*run, enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED).has_value());
}

// Temporal's normalisation, as the stored events show it: schedule-to-start and
// start-to-close capped at schedule-to-close; without schedule-to-close, the run timeout
// (0: none) for it and for schedule-to-start unless that was set; everything capped at the
// run timeout; heartbeat at start-to-close; neither timeout set is refused.
TEST_F(ActivityTimeoutFixture, TimeoutsAreNormalisedAsTemporalDoes) {
  Attributes heartbeat = Activity("hb", absl::ZeroDuration(), absl::ZeroDuration(),
                                  absl::Seconds(5));
  *heartbeat.mutable_heartbeat_timeout() = ToProtoDuration(absl::Seconds(30));
  auto run = StartWithActivities(
      StartRequest("normalised"),
      {Activity("capped", absl::Seconds(10), absl::Seconds(30), absl::Seconds(20)),
       Activity("stc-only", absl::ZeroDuration(), absl::ZeroDuration(), absl::Seconds(5)),
       Activity("stc-s2s", absl::ZeroDuration(), absl::Seconds(3), absl::Seconds(5)), heartbeat});
  ASSERT_TRUE(run.ok()) << run.status();
  auto scheduled = Scheduled(*run);
  auto timeouts = [&](const std::string& id) {
    const auto& a = scheduled.at(id);
    return std::vector<absl::Duration>{
        FromProtoDuration(a.schedule_to_close_timeout()),
        FromProtoDuration(a.schedule_to_start_timeout()),
        FromProtoDuration(a.start_to_close_timeout()), FromProtoDuration(a.heartbeat_timeout())};
  };
  const absl::Duration zero = absl::ZeroDuration();
  EXPECT_EQ(timeouts("capped"),
            (std::vector{absl::Seconds(10), absl::Seconds(10), absl::Seconds(10), zero}));
  EXPECT_EQ(timeouts("stc-only"), (std::vector{zero, zero, absl::Seconds(5), zero}));
  EXPECT_EQ(timeouts("stc-s2s"), (std::vector{zero, absl::Seconds(3), absl::Seconds(5), zero}));
  EXPECT_EQ(timeouts("hb"), (std::vector{zero, zero, absl::Seconds(5), absl::Seconds(5)}));

  wf::StartWorkflowExecutionRequest bounded = StartRequest("bounded");
  *bounded.mutable_workflow_run_timeout() = ToProtoDuration(absl::Minutes(1));
  run = StartWithActivities(
      bounded, {Activity("long", absl::ZeroDuration(), absl::ZeroDuration(), absl::Minutes(2))});
  ASSERT_TRUE(run.ok()) << run.status();
  scheduled = Scheduled(*run);
  EXPECT_EQ(timeouts("long"),
            (std::vector{absl::Minutes(1), absl::Minutes(1), absl::Minutes(1), zero}));

  run = StartWithActivities(StartRequest("untimed"), {Activity("none", zero, absl::Seconds(1), zero)});
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument) << run.status();
  EXPECT_EQ(run.status().message(),
            "a valid StartToCloseTimeout or ScheduleToCloseTimeout must be set on the activity. "
            "ActivityId=none ActivityType=act");
}


// What GetSystemInfo's capabilities promise, done (workflow_handler.cc names these tests).
class CapabilityFixture : public ActivityTimeoutFixture {
 protected:
  static temporal::api::common::v1::Payload Payload(const std::string& data) {
    temporal::api::common::v1::Payload p;
    (*p.mutable_metadata())["encoding"] = "binary/plain";
    p.set_data(data);
    return p;
  }
};

// signal_and_query_header: a signal's header is stored in its event, and a query's header
// reaches the worker with the query.
TEST_F(CapabilityFixture, SignalAndQueryHeadersReachTheWorkflow) {
  auto run = StartWithActivities(StartRequest("headers"), {});
  ASSERT_TRUE(run.ok()) << run.status();

  wf::QueryWorkflowRequest query;
  query.mutable_execution()->set_workflow_id("headers");
  query.mutable_query()->set_query_type("state");
  (*query.mutable_query()->mutable_header()->mutable_fields())["trace"] = Payload("query-header");
  auto answered = std::make_shared<std::atomic<bool>>(false);
  engine_->QueryWorkflow(ns_, query, clock_.Now() + absl::Hours(1),
                         [answered](absl::StatusOr<wf::QueryWorkflowResponse>) { *answered = true; });
  std::optional<persistence::TaskQueueTask> task = TakeTask("q", persistence::TaskKind::kWorkflow);
  ASSERT_TRUE(task.has_value());
  auto query_task = engine_->StartQueryTask(ns_, *task);
  ASSERT_TRUE(query_task.ok()) << query_task.status();
  EXPECT_EQ(query_task->query().header().fields().at("trace").data(), "query-header");
  wf::RespondQueryTaskCompletedRequest answer;
  answer.set_task_token(query_task->task_token());
  answer.set_completed_type(enums::QUERY_RESULT_TYPE_ANSWERED);
  ASSERT_TRUE(engine_->RespondQueryTaskCompleted(ns_, answer).ok());
  EXPECT_TRUE(tock::testing::Eventually([&] { return answered->load(); }, kWait));

  wf::SignalWorkflowExecutionRequest signal;
  signal.mutable_workflow_execution()->set_workflow_id("headers");
  signal.set_signal_name("poke");
  (*signal.mutable_header()->mutable_fields())["trace"] = Payload("signal-header");
  ASSERT_TRUE(engine_->SignalWorkflow(ns_, signal).ok());
  std::optional<HistoryEvent> signaled =
      WaitForEvent(*run, enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
  ASSERT_TRUE(signaled.has_value());
  EXPECT_EQ(signaled->workflow_execution_signaled_event_attributes().header().fields().at("trace").data(),
            "signal-header");
}

// activity_failure_include_heartbeat: the details a failed attempt reports with its failure
// are the next attempt's heartbeat details.
TEST_F(CapabilityFixture, AFailedAttemptsHeartbeatDetailsReachTheNextAttempt) {
  Attributes retried = Activity("retried", absl::ZeroDuration(), absl::ZeroDuration(), absl::Hours(1));
  *retried.mutable_retry_policy()->mutable_initial_interval() = ToProtoDuration(absl::Seconds(1));
  auto run = StartWithActivities(StartRequest("heartbeat-details"), {retried});
  ASSERT_TRUE(run.ok()) << run.status();
  auto first = PollActivity("aq-retried");
  ASSERT_TRUE(first.ok()) << first.status();
  wf::RespondActivityTaskFailedRequest failed;
  failed.set_task_token(first->task_token());
  failed.mutable_failure()->set_message("try again");
  failed.mutable_failure()->mutable_application_failure_info()->set_type("Flaky");
  *failed.mutable_last_heartbeat_details()->add_payloads() = Payload("progress-7");
  ASSERT_TRUE(engine_->RespondActivityTaskFailed(ns_, failed).ok());

  clock_.Advance(absl::Seconds(2));
  engine_->WakeTimers();
  auto second = PollActivity("aq-retried");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->attempt(), 2);
  ASSERT_EQ(second->heartbeat_details().payloads_size(), 1);
  EXPECT_EQ(second->heartbeat_details().payloads(0).data(), "progress-7");
}

// encoded_failure_attributes: a failure whose message and stack trace the SDK encoded is
// stored and passed on as sent.
TEST_F(CapabilityFixture, EncodedFailureAttributesArePassedOnUnchanged) {
  auto run = StartWithActivities(
      StartRequest("encoded"),
      {Activity("encoded", absl::ZeroDuration(), absl::ZeroDuration(), absl::Hours(1))});
  ASSERT_TRUE(run.ok()) << run.status();
  auto activity = PollActivity("aq-encoded");
  ASSERT_TRUE(activity.ok()) << activity.status();
  wf::RespondActivityTaskFailedRequest failed;
  failed.set_task_token(activity->task_token());
  failed.mutable_failure()->set_message("Encoded failure");
  *failed.mutable_failure()->mutable_encoded_attributes() = Payload("{\"message\":\"secret\"}");
  failed.mutable_failure()->mutable_application_failure_info()->set_non_retryable(true);
  ASSERT_TRUE(engine_->RespondActivityTaskFailed(ns_, failed).ok());
  std::optional<HistoryEvent> event = WaitForEvent(*run, enums::EVENT_TYPE_ACTIVITY_TASK_FAILED);
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->activity_task_failed_event_attributes().failure().SerializeAsString(),
            failed.failure().SerializeAsString());
}

// upsert_memo: ModifyWorkflowProperties upserts the memo (event and described run).
TEST_F(CapabilityFixture, AWorkflowUpsertsItsMemo) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("memo"));
  ASSERT_TRUE(started.ok()) << started.status();
  auto task = PollWorkflowTask("q");
  ASSERT_TRUE(task.ok()) << task.status();
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(task->task_token());
  auto* cmd = done.add_commands();
  cmd->set_command_type(enums::COMMAND_TYPE_MODIFY_WORKFLOW_PROPERTIES);
  (*cmd->mutable_modify_workflow_properties_command_attributes()
        ->mutable_upserted_memo()
        ->mutable_fields())["stage"] = Payload("shipped");
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());
  EXPECT_TRUE(WaitForEvent(started->run_id(), enums::EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED)
                  .has_value());
  wf::DescribeWorkflowExecutionRequest describe;
  describe.mutable_execution()->set_workflow_id("memo");
  auto described = engine_->DescribeWorkflow(ns_, describe);
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(described->workflow_execution_info().memo().fields().at("stage").data(), "shipped");
}

// sdk_metadata: the SDK's metadata of a completion (the flags its replays depend on) is
// recorded in the WorkflowTaskCompleted event.
TEST_F(CapabilityFixture, TheSdkMetadataOfACompletionIsRecorded) {
  auto started = engine_->StartWorkflow(ns_, StartRequest("flags"));
  ASSERT_TRUE(started.ok()) << started.status();
  auto task = PollWorkflowTask("q");
  ASSERT_TRUE(task.ok()) << task.status();
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(task->task_token());
  done.mutable_sdk_metadata()->add_lang_used_flags(1);
  done.mutable_sdk_metadata()->add_lang_used_flags(3);
  done.mutable_sdk_metadata()->set_sdk_name("temporal-typescript");
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());
  std::optional<HistoryEvent> completed =
      WaitForEvent(started->run_id(), enums::EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  ASSERT_TRUE(completed.has_value());
  EXPECT_EQ(completed->workflow_task_completed_event_attributes().sdk_metadata().SerializeAsString(),
            done.sdk_metadata().SerializeAsString());
}

}  // namespace
}  // namespace tock::server::history
