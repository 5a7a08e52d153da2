// The passive state rebuilder (server-core/history/replicated_events.h): runs driven through
// the active engine by a fake worker, then each run's history applied to an empty state
// (event by event, in batches ending at workflow task boundaries, all at once) must give the
// mutable state the active side stored, and the tasks and timers of what is still pending.
// Malformed input is refused with INVALID_ARGUMENT.
#include "server-core/history/replicated_events.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>

#include "google/protobuf/util/message_differencer.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/shard_controller.h"
#include "server-core/matching/matching_engine.h"
#include "server-core/persistence/persistence.h"
#include "tests/integration/engine_fixture.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::command::v1::Command;
using temporal::api::history::v1::HistoryEvent;
using tock::persistence::v1::TimerTask;
using tock::persistence::v1::TransferTask;

const absl::Time kStart = absl::FromUnixMicros(1'800'000'000'000'300);
constexpr absl::Duration kWait = absl::Seconds(10);  // bound on every wait in these tests

enum class Split { kEventByEvent, kWorkflowTaskBoundaries, kWhole };

std::vector<std::vector<HistoryEvent>> Batches(const std::vector<HistoryEvent>& events,
                                               Split split) {
  std::vector<std::vector<HistoryEvent>> out;
  if (split == Split::kWhole) {
    out.push_back(events);
    return out;
  }
  std::vector<HistoryEvent> current;
  for (const HistoryEvent& e : events) {
    current.push_back(e);
    const bool boundary = split == Split::kEventByEvent ||
                          e.event_type() == enums::EVENT_TYPE_WORKFLOW_TASK_STARTED ||
                          e.event_type() == enums::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED;
    if (boundary) {
      out.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

// What the rebuild produced, over all its transactions.
struct Rebuilt {
  MutableStateRecord state;
  std::vector<persistence::TaskQueueTask> tasks;
  std::vector<persistence::TimerTaskRow> timers;  // created and not retired
};

// Fields that legitimately differ between the active state and the rebuilt one are cleared.
// `activity_progress`: also what no event carries of a pending activity that was started or
// retried (attempt, stamp, start, heartbeats, last failure, the attempt's timers: Temporal
// replicates those with SyncActivity tasks, not events).
void Normalize(MutableStateRecord& s, bool activity_progress = false) {
  // The store's optimistic-concurrency counter: each side counts its own writes.
  s.clear_db_version();
  auto* exec = s.mutable_execution();
  // The start request id is in no event (WorkflowExecutionStartedEventAttributes has none).
  exec->clear_start_request_id();
  // WorkflowExecutionCancelRequested carries no request id.
  exec->clear_cancel_request_id();
  // The active side sizes an event before its attributes are set (RunTransaction::Append),
  // the rebuild sizes the whole event: checked separately (HistorySize).
  exec->clear_history_size_bytes();
  // Timer rows are identified by a task id drawn from the writing shard's sequence; their
  // fire times must agree.
  s.mutable_workflow_task()->mutable_timeout_timer()->clear_task_id();
  for (auto& [id, timer] : *s.mutable_timers()) timer.mutable_timer()->clear_task_id();
  for (auto& [id, activity] : *s.mutable_activities()) {
    for (auto& key : *activity.mutable_timers()) key.clear_task_id();
    if (!activity_progress) continue;
    activity.clear_attempt();
    activity.clear_stamp();
    activity.clear_started_time();
    activity.clear_started_identity();
    activity.clear_request_id();
    activity.clear_last_failure();
    activity.clear_heartbeat_details();
    activity.clear_last_heartbeat_time();
    activity.clear_current_attempt_scheduled_time();
    activity.clear_timers();
  }
}

int64_t HistorySize(const std::vector<HistoryEvent>& events) {
  int64_t size = 0;
  for (const HistoryEvent& e : events) size += static_cast<int64_t>(e.ByteSizeLong());
  return size;
}

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
};

class ReplicatedEventsTest : public HistoryEngineTest {
 protected:
  ReplicatedEventsTest() : HistoryEngineTest(kStart) {}

  // The next workflow task of `queue`, started (stale tasks are skipped).
  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> PollWorkflowTask(const std::string& queue) {
    for (int i = 0; i < 10; ++i) {
      std::optional<persistence::TaskQueueTask> task =
          TakeTask(queue, persistence::TaskKind::kWorkflow);
      if (!task) return absl::DeadlineExceededError("no workflow task on " + queue);
      auto started = engine_->RecordWorkflowTaskStarted(ns_, *task, "test-worker");
      if (started.status().code() != absl::StatusCode::kNotFound) return started;
    }
    return absl::DeadlineExceededError("only stale workflow tasks on " + queue);
  }

  absl::StatusOr<wf::PollActivityTaskQueueResponse> PollActivityTask(const std::string& queue) {
    for (int i = 0; i < 10; ++i) {
      std::optional<persistence::TaskQueueTask> task =
          TakeTask(queue, persistence::TaskKind::kActivity);
      if (!task) return absl::DeadlineExceededError("no activity task on " + queue);
      auto started = engine_->RecordActivityTaskStarted(ns_, *task, "activity-worker");
      if (started.status().code() != absl::StatusCode::kNotFound) return started;
    }
    return absl::DeadlineExceededError("only stale activity tasks on " + queue);
  }

  absl::Status Complete(const std::string& token, const std::vector<Command>& commands) {
    return CompleteWorkflowTask(token, commands);
  }

  // Waits (bounded) until the run's history has `n` events of `type`.
  bool WaitForEvents(const std::string& run_id, enums::EventType type, int n = 1) {
    const absl::Time until = absl::Now() + kWait;
    while (absl::Now() < until) {
      if (Count(run_id, type) >= n) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  }

  void AdvanceAndFire(absl::Duration d) {
    clock_.Advance(d);
    engine_->WakeTimers();
  }

  std::string CurrentRun(const std::string& workflow_id) {
    auto current = persistence_->executions().GetCurrentRun(ns_.id, workflow_id);
    EXPECT_TRUE(current.ok()) << current.status();
    return current.ok() ? current->run_id : "";
  }

  MutableStateRecord Stored(const std::string& workflow_id, const std::string& run_id) {
    auto state = persistence_->executions().GetRun(ns_.id, workflow_id, run_id);
    EXPECT_TRUE(state.ok()) << state.status();
    return state.ok() ? *state : MutableStateRecord();
  }

  // A state holding only the run's keys, as a standby starts one.
  static MutableStateRecord Empty(const MutableStateRecord& like) {
    MutableStateRecord state;
    state.mutable_execution()->set_namespace_id(like.execution().namespace_id());
    state.mutable_execution()->set_workflow_id(like.execution().workflow_id());
    state.mutable_execution()->set_run_id(like.execution().run_id());
    return state;
  }

  // Applies `events` to an empty state of the run, one transaction per batch.
  absl::StatusOr<Rebuilt> Rebuild(const MutableStateRecord& like,
                                  const std::vector<HistoryEvent>& events, Split split) {
    Rebuilt out;
    out.state = Empty(like);
    std::vector<persistence::TimerTaskRow> done;
    for (const auto& batch : Batches(events, split)) {
      RunTransaction tx(std::move(out.state), clock_.Now(), -1, *shards_);
      if (absl::Status s = ApplyReplicatedEvents(tx, batch); !s.ok()) return s;
      for (auto& t : tx.new_tasks()) out.tasks.push_back(t);
      for (auto& t : tx.new_timers()) out.timers.push_back(t);
      for (auto& t : tx.done_timers()) done.push_back(t);
      out.state = tx.state();
    }
    std::erase_if(out.timers, [&](const persistence::TimerTaskRow& t) {
      return std::any_of(done.begin(), done.end(), [&](const persistence::TimerTaskRow& d) {
        return d.task_id == t.task_id && d.fire_time == t.fire_time;
      });
    });
    return out;
  }

  // The run rebuilt from its history in every split equals its stored state.
  void ExpectRebuildsToStoredState(const std::string& workflow_id, const std::string& run_id,
                                   bool activity_progress = false) {
    SCOPED_TRACE("workflow " + workflow_id + " run " + run_id);
    const MutableStateRecord stored = Stored(workflow_id, run_id);
    const std::vector<HistoryEvent> events = History(run_id);
    ASSERT_FALSE(events.empty());
    ASSERT_EQ(stored.next_event_id(), static_cast<int64_t>(events.size()) + 1);
    for (Split split : {Split::kEventByEvent, Split::kWorkflowTaskBoundaries, Split::kWhole}) {
      SCOPED_TRACE(absl::StrCat("split ", static_cast<int>(split)));
      absl::StatusOr<Rebuilt> rebuilt = Rebuild(stored, events, split);
      ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
      EXPECT_EQ(rebuilt->state.execution().history_size_bytes(), HistorySize(events));
      EXPECT_GE(rebuilt->state.execution().history_size_bytes(),
                stored.execution().history_size_bytes());
      MutableStateRecord expected = stored;
      MutableStateRecord actual = rebuilt->state;
      Normalize(expected, activity_progress);
      Normalize(actual, activity_progress);
      std::string diff;
      google::protobuf::util::MessageDifferencer differ;
      differ.ReportDifferencesToString(&diff);
      EXPECT_TRUE(differ.Compare(expected, actual)) << diff;
    }
  }

  static Command ScheduleActivity(const std::string& id, const std::string& queue,
                                  absl::Duration start_to_close, int32_t max_attempts,
                                  absl::Duration heartbeat = absl::ZeroDuration(),
                                  absl::Duration schedule_to_close = absl::ZeroDuration()) {
    Command c;
    c.set_command_type(enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK);
    auto* a = c.mutable_schedule_activity_task_command_attributes();
    a->set_activity_id(id);
    a->mutable_activity_type()->set_name("act");
    a->mutable_task_queue()->set_name(queue);
    a->mutable_input()->add_payloads()->set_data("in-" + id);
    if (start_to_close > absl::ZeroDuration())
      *a->mutable_start_to_close_timeout() = ToProtoDuration(start_to_close);
    if (schedule_to_close > absl::ZeroDuration()) {
      *a->mutable_schedule_to_close_timeout() = ToProtoDuration(schedule_to_close);
    }
    if (heartbeat > absl::ZeroDuration())
      *a->mutable_heartbeat_timeout() = ToProtoDuration(heartbeat);
    a->mutable_retry_policy()->set_maximum_attempts(max_attempts);
    *a->mutable_retry_policy()->mutable_initial_interval() = ToProtoDuration(absl::Seconds(1));
    return c;
  }
  static Command StartTimer(const std::string& id, absl::Duration d) {
    Command c;
    c.set_command_type(enums::COMMAND_TYPE_START_TIMER);
    c.mutable_start_timer_command_attributes()->set_timer_id(id);
    *c.mutable_start_timer_command_attributes()->mutable_start_to_fire_timeout() =
        ToProtoDuration(d);
    return c;
  }
  static Command StartChild(const std::string& workflow_id, const std::string& queue,
                            absl::Duration run_timeout = absl::ZeroDuration()) {
    Command c;
    c.set_command_type(enums::COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION);
    auto* a = c.mutable_start_child_workflow_execution_command_attributes();
    a->set_workflow_id(workflow_id);
    a->mutable_workflow_type()->set_name("child");
    a->mutable_task_queue()->set_name(queue);
    a->set_parent_close_policy(enums::PARENT_CLOSE_POLICY_ABANDON);
    if (run_timeout > absl::ZeroDuration())
      *a->mutable_workflow_run_timeout() = ToProtoDuration(run_timeout);
    return c;
  }
  static Command SignalExternal(const std::string& workflow_id) {
    Command c;
    c.set_command_type(enums::COMMAND_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION);
    auto* a = c.mutable_signal_external_workflow_execution_command_attributes();
    a->mutable_execution()->set_workflow_id(workflow_id);
    a->set_signal_name("poke");
    a->mutable_input()->add_payloads()->set_data("p");
    return c;
  }
  static Command CancelExternal(const std::string& workflow_id) {
    Command c;
    c.set_command_type(enums::COMMAND_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION);
    c.mutable_request_cancel_external_workflow_execution_command_attributes()->set_workflow_id(
        workflow_id);
    return c;
  }
  static Command CancelActivity(int64_t scheduled_event_id) {
    Command c;
    c.set_command_type(enums::COMMAND_TYPE_REQUEST_CANCEL_ACTIVITY_TASK);
    c.mutable_request_cancel_activity_task_command_attributes()->set_scheduled_event_id(
        scheduled_event_id);
    return c;
  }
  static Command Simple(enums::CommandType type) {
    Command c;
    c.set_command_type(type);
    return c;
  }

  absl::Status Signal(const std::string& workflow_id, const std::string& name,
                      const std::string& request_id) {
    wf::SignalWorkflowExecutionRequest req;
    req.mutable_workflow_execution()->set_workflow_id(workflow_id);
    req.set_signal_name(name);
    req.set_request_id(request_id);
    req.set_identity("client");
    return engine_->SignalWorkflow(ns_, req);
  }

  absl::StatusOr<wf::StartWorkflowExecutionResponse> Start(const std::string& id,
                                                           const std::string& queue) {
    wf::StartWorkflowExecutionRequest req;
    req.set_workflow_id(id);
    req.mutable_workflow_type()->set_name("flow");
    req.mutable_task_queue()->set_name(queue);
    req.set_request_id("req-" + id);
    req.set_identity("starter");
    return engine_->StartWorkflow(ns_, req);
  }

  int64_t ScheduledIdOf(const std::string& run_id, const std::string& activity_id) {
    for (const HistoryEvent& e : History(run_id)) {
      if (e.event_type() == enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
          e.activity_task_scheduled_event_attributes().activity_id() == activity_id) {
        return e.event_id();
      }
    }
    return 0;
  }
};

// The worker's messages that accept update `request` and complete it, placed by commands.
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

// One run through activities (a retry, a heartbeat timeout, a cancellation before and after
// its start), timers (fired, canceled), a marker, a search attribute upsert, a memo change,
// child workflows (completed, timed out, failed to start), signals and cancellations to
// another workflow (delivered, failed), a client signal and cancel request, an update, a
// failover version change, continue-as-new; its next run terminated with a started task.
TEST_F(ReplicatedEventsTest, AWholeRunRebuildsToTheStateTheActiveSideStored) {
  ASSERT_TRUE(Start("target", "q-target").ok());
  wf::StartWorkflowExecutionRequest start;
  start.set_workflow_id("main");
  start.mutable_workflow_type()->set_name("flow");
  start.mutable_task_queue()->set_name("q-main");
  start.set_request_id("req-main");
  start.set_identity("starter");
  *start.mutable_workflow_execution_timeout() = ToProtoDuration(absl::Hours(1));
  *start.mutable_workflow_run_timeout() = ToProtoDuration(absl::Minutes(30));
  (*start.mutable_memo()->mutable_fields())["m1"].set_data("\"one\"");
  auto main = engine_->StartWorkflow(ns_, start);
  ASSERT_TRUE(main.ok()) << main.status();
  const std::string run1 = main->run_id();

  // Workflow task 1: everything that starts something.
  auto wft = PollWorkflowTask("q-main");
  ASSERT_TRUE(wft.ok()) << wft.status();
  Command marker = Simple(enums::COMMAND_TYPE_RECORD_MARKER);
  marker.mutable_record_marker_command_attributes()->set_marker_name("version");
  Command upsert = Simple(enums::COMMAND_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES);
  {
    temporal::api::common::v1::Payload value;
    (*value.mutable_metadata())["encoding"] = "json/plain";
    value.set_data("[\"v1\"]");
    (*upsert.mutable_upsert_workflow_search_attributes_command_attributes()
          ->mutable_search_attributes()
          ->mutable_indexed_fields())["TemporalChangeVersion"] = value;
  }
  Command memo = Simple(enums::COMMAND_TYPE_MODIFY_WORKFLOW_PROPERTIES);
  (*memo.mutable_modify_workflow_properties_command_attributes()
        ->mutable_upserted_memo()
        ->mutable_fields())["m2"]
      .set_data("\"two\"");
  ASSERT_TRUE(
      Complete(wft->task_token(),
               {ScheduleActivity("a1", "aq", absl::Seconds(10), 3),
                ScheduleActivity("a2", "aq", absl::Seconds(60), 1, absl::Seconds(2)),
                StartTimer("t1", absl::Seconds(5)), StartTimer("t2", absl::Seconds(60)), marker,
                upsert, memo, StartChild("child-ok", "q-child-ok"),
                StartChild("child-timeout", "q-child-timeout", absl::Seconds(3)),
                StartChild("target", "q-target"), SignalExternal("target"),
                CancelExternal("target"), SignalExternal("nobody"), CancelExternal("nobody")})
          .ok());
  ASSERT_TRUE(WaitForEvents(run1, enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED));
  ASSERT_TRUE(WaitForEvents(run1, enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED, 2));
  ASSERT_TRUE(WaitForEvents(run1, enums::EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED));
  ASSERT_TRUE(WaitForEvents(run1, enums::EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED));
  ASSERT_TRUE(WaitForEvents(run1, enums::EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED));
  ASSERT_TRUE(
      WaitForEvents(run1, enums::EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED));

  // Checkpoint: activities and timers pending, children running, a workflow task scheduled.
  {
    const MutableStateRecord now = Stored("main", run1);
    EXPECT_EQ(now.activities_size(), 2);
    EXPECT_EQ(now.timers_size(), 2);
    EXPECT_EQ(now.children_size(), 2);
    EXPECT_NE(now.workflow_task().scheduled_event_id(), 0);
    ExpectRebuildsToStoredState("main", run1);
  }

  // From outside: a signal and a cancel request.
  ASSERT_TRUE(Signal("main", "hello", "sig-1").ok());
  wf::RequestCancelWorkflowExecutionRequest cancel;
  cancel.mutable_workflow_execution()->set_workflow_id("main");
  cancel.set_identity("client");
  cancel.set_request_id("cancel-1");
  ASSERT_TRUE(engine_->RequestCancelWorkflow(ns_, cancel).ok());

  // The child that completes.
  auto child = PollWorkflowTask("q-child-ok");
  ASSERT_TRUE(child.ok()) << child.status();
  Command child_done = Simple(enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION);
  child_done.mutable_complete_workflow_execution_command_attributes()
      ->mutable_result()
      ->add_payloads()
      ->set_data("r");
  ASSERT_TRUE(Complete(child->task_token(), {child_done}).ok());
  ASSERT_TRUE(WaitForEvents(run1, enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED));

  // a1 fails once and is retried after a second; a2 misses its heartbeat.
  std::map<std::string, wf::PollActivityTaskQueueResponse> activities;
  for (int i = 0; i < 2; ++i) {
    auto a = PollActivityTask("aq");
    ASSERT_TRUE(a.ok()) << a.status();
    activities[a->activity_id()] = *a;
  }
  ASSERT_TRUE(activities.contains("a1") && activities.contains("a2"));
  wf::RespondActivityTaskFailedRequest failed;
  failed.set_task_token(activities["a1"].task_token());
  failed.mutable_failure()->set_message("transient");
  failed.mutable_failure()->mutable_application_failure_info()->set_type("Transient");
  ASSERT_TRUE(engine_->RespondActivityTaskFailed(ns_, failed).ok());
  AdvanceAndFire(absl::Milliseconds(1100));
  auto retried = PollActivityTask("aq");
  ASSERT_TRUE(retried.ok()) << retried.status();
  ASSERT_EQ(retried->activity_id(), "a1");
  ASSERT_EQ(retried->attempt(), 2);
  temporal::api::common::v1::Payloads result;
  result.add_payloads()->set_data("ok");
  ASSERT_TRUE(
      engine_->RespondActivityTaskCompleted(ns_, retried->task_token(), result, "activity-worker")
          .ok());
  ExpectRebuildsToStoredState("main", run1, /*activity_progress=*/true);  // a2 started
  AdvanceAndFire(absl::Seconds(1));
  ASSERT_TRUE(WaitForEvents(run1, enums::EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT));
  AdvanceAndFire(absl::Seconds(3));
  ASSERT_TRUE(WaitForEvents(run1, enums::EVENT_TYPE_TIMER_FIRED));
  ASSERT_TRUE(WaitForEvents(run1, enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT));

  // Workflow task 2: a timer canceled, two activities to cancel.
  wft = PollWorkflowTask("q-main");
  ASSERT_TRUE(wft.ok()) << wft.status();
  ExpectRebuildsToStoredState("main", run1);  // a started workflow task and its timeout
  Command cancel_timer = Simple(enums::COMMAND_TYPE_CANCEL_TIMER);
  cancel_timer.mutable_cancel_timer_command_attributes()->set_timer_id("t2");
  ASSERT_TRUE(Complete(wft->task_token(),
                       {cancel_timer, ScheduleActivity("a3", "aq2", absl::Seconds(60), 1),
                        ScheduleActivity("a4", "aq2", absl::Seconds(60), 1)})
                  .ok());
  auto taken = PollActivityTask("aq2");  // one of them starts; the other is canceled unstarted
  ASSERT_TRUE(taken.ok()) << taken.status();
  ExpectRebuildsToStoredState("main", run1, /*activity_progress=*/true);
  ASSERT_TRUE(Signal("main", "again", "sig-2").ok());
  wft = PollWorkflowTask("q-main");
  ASSERT_TRUE(wft.ok()) << wft.status();
  ASSERT_TRUE(Complete(wft->task_token(), {CancelActivity(ScheduledIdOf(run1, "a3")),
                                           CancelActivity(ScheduledIdOf(run1, "a4"))})
                  .ok());
  ASSERT_TRUE(
      engine_->RespondActivityTaskCanceled(ns_, taken->task_token(), {}, "activity-worker").ok());
  ASSERT_EQ(Count(run1, enums::EVENT_TYPE_ACTIVITY_TASK_CANCELED), 2);
  ExpectRebuildsToStoredState("main", run1);

  // A failover: the namespace's version moves on; an update; then continue-as-new.
  ns_.failover_version = 10;
  auto update = std::make_shared<Answer<wf::UpdateWorkflowExecutionResponse>>();
  wf::UpdateWorkflowExecutionRequest update_req;
  update_req.mutable_workflow_execution()->set_workflow_id("main");
  update_req.mutable_request()->mutable_meta()->set_update_id("u1");
  update_req.mutable_request()->mutable_input()->set_name("add");
  engine_->UpdateWorkflow(ns_, update_req, absl::InfiniteFuture(),
                          [update](absl::StatusOr<wf::UpdateWorkflowExecutionResponse> r) {
                            update->Set(std::move(r));
                          });
  wft = PollWorkflowTask("q-main");
  ASSERT_TRUE(wft.ok()) << wft.status();
  ASSERT_EQ(wft->messages_size(), 1);
  wf::RespondWorkflowTaskCompletedRequest last;
  last.set_task_token(wft->task_token());
  last.set_identity("test-worker");
  AcceptAndComplete(last, wft->messages(0));
  auto* can = last.add_commands();
  can->set_command_type(enums::COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION);
  can->mutable_continue_as_new_workflow_execution_command_attributes()
      ->mutable_workflow_type()
      ->set_name("flow");
  can->mutable_continue_as_new_workflow_execution_command_attributes()
      ->mutable_task_queue()
      ->set_name("q-main");
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, last).ok());
  ASSERT_TRUE(update->Wait().ok());

  // The next run: terminated while its first workflow task is started.
  const std::string run2 = CurrentRun("main");
  ASSERT_NE(run2, run1);
  wft = PollWorkflowTask("q-main");
  ASSERT_TRUE(wft.ok()) << wft.status();
  wf::TerminateWorkflowExecutionRequest terminate;
  terminate.mutable_workflow_execution()->set_workflow_id("main");
  terminate.set_reason("enough");
  terminate.set_identity("client");
  ASSERT_TRUE(engine_->TerminateWorkflow(ns_, terminate).ok());

  // Every event type this test meant to produce is in the histories.
  std::set<enums::EventType> seen;
  for (const std::string& run : {run1, run2}) {
    for (const HistoryEvent& e : History(run)) seen.insert(e.event_type());
  }
  for (enums::EventType type :
       {enums::EVENT_TYPE_ACTIVITY_TASK_STARTED, enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
        enums::EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED, enums::EVENT_TYPE_TIMER_CANCELED,
        enums::EVENT_TYPE_MARKER_RECORDED, enums::EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
        enums::EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED,
        enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
        enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED,
        enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
        enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED,
        enums::EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
        enums::EVENT_TYPE_WORKFLOW_TASK_FAILED, enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED}) {
    EXPECT_TRUE(seen.contains(type)) << enums::EventType_Name(type);
  }
  const MutableStateRecord first = Stored("main", run1);
  const auto& items = first.version_histories().histories(0).items();
  ASSERT_EQ(items.size(), 2) << "versions 0 then 10";
  EXPECT_EQ(items.at(1).version(), 10);

  ExpectRebuildsToStoredState("main", run1);
  ExpectRebuildsToStoredState("main", run2);
  ExpectRebuildsToStoredState("target", CurrentRun("target"));
  ExpectRebuildsToStoredState("child-ok", CurrentRun("child-ok"));
  ExpectRebuildsToStoredState("child-timeout", CurrentRun("child-timeout"));
}

// The other ways a run ends, workflow task failures and timeouts, a retry's backoff, and a
// signal-with-start.
TEST_F(ReplicatedEventsTest, EveryWayARunEndsRebuildsToTheStoredState) {
  // A workflow task failed by the worker, then one timing out, then completion.
  ASSERT_TRUE(Start("tasks", "q-tasks").ok());
  auto wft = PollWorkflowTask("q-tasks");
  ASSERT_TRUE(wft.ok()) << wft.status();
  wf::RespondWorkflowTaskFailedRequest task_failed;
  task_failed.set_task_token(wft->task_token());
  task_failed.set_cause(enums::WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE);
  task_failed.mutable_failure()->set_message("panic");
  task_failed.set_identity("test-worker");
  ASSERT_TRUE(engine_->RespondWorkflowTaskFailed(ns_, task_failed).ok());
  wft = PollWorkflowTask("q-tasks");
  ASSERT_TRUE(wft.ok()) << wft.status();

  // Meanwhile: runs that fail, are canceled, time out, retry.
  wf::StartWorkflowExecutionRequest timing_out;
  timing_out.set_workflow_id("timing-out");
  timing_out.mutable_workflow_type()->set_name("flow");
  timing_out.mutable_task_queue()->set_name("q-timing-out");
  *timing_out.mutable_workflow_run_timeout() = ToProtoDuration(absl::Seconds(5));
  ASSERT_TRUE(engine_->StartWorkflow(ns_, timing_out).ok());
  wf::StartWorkflowExecutionRequest retrying = timing_out;
  retrying.set_workflow_id("retrying");
  retrying.mutable_task_queue()->set_name("q-retrying");
  retrying.clear_workflow_run_timeout();
  retrying.mutable_retry_policy()->set_maximum_attempts(2);
  *retrying.mutable_retry_policy()->mutable_initial_interval() = ToProtoDuration(absl::Seconds(3));
  auto retrying_run = engine_->StartWorkflow(ns_, retrying);
  ASSERT_TRUE(retrying_run.ok());
  ASSERT_TRUE(Start("failing", "q-failing").ok());
  ASSERT_TRUE(Start("canceled", "q-canceled").ok());
  wf::SignalWithStartWorkflowExecutionRequest sws;
  sws.set_workflow_id("sws");
  sws.mutable_workflow_type()->set_name("flow");
  sws.mutable_task_queue()->set_name("q-sws");
  sws.set_signal_name("go");
  sws.set_request_id("sws-req");
  ASSERT_TRUE(engine_->SignalWithStartWorkflow(ns_, sws).ok());

  Command fail = Simple(enums::COMMAND_TYPE_FAIL_WORKFLOW_EXECUTION);
  fail.mutable_fail_workflow_execution_command_attributes()->mutable_failure()->set_message("no");
  for (const char* id : {"failing", "retrying"}) {
    auto t = PollWorkflowTask(std::string("q-") + id);
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_TRUE(Complete(t->task_token(), {fail}).ok());
  }
  wf::RequestCancelWorkflowExecutionRequest cancel;
  cancel.mutable_workflow_execution()->set_workflow_id("canceled");
  ASSERT_TRUE(engine_->RequestCancelWorkflow(ns_, cancel).ok());
  auto t = PollWorkflowTask("q-canceled");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(
      Complete(t->task_token(), {Simple(enums::COMMAND_TYPE_CANCEL_WORKFLOW_EXECUTION)}).ok());

  // The started task of "tasks" times out (10 s), and so does the run of "timing-out".
  AdvanceAndFire(absl::Seconds(11));
  const std::string tasks_run = CurrentRun("tasks");
  ASSERT_TRUE(WaitForEvents(tasks_run, enums::EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT));
  ASSERT_TRUE(
      WaitForEvents(CurrentRun("timing-out"), enums::EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT));
  wft = PollWorkflowTask("q-tasks");
  ASSERT_TRUE(wft.ok()) << wft.status();
  EXPECT_EQ(wft->attempt(), 3);
  ASSERT_TRUE(
      Complete(wft->task_token(), {Simple(enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION)}).ok());

  const std::string retry_run = CurrentRun("retrying");
  ASSERT_NE(retry_run, retrying_run->run_id());
  EXPECT_EQ(History(retry_run)
                .front()
                .workflow_execution_started_event_attributes()
                .first_workflow_task_backoff()
                .seconds(),
            3);

  ExpectRebuildsToStoredState("tasks", tasks_run);
  ExpectRebuildsToStoredState("timing-out", CurrentRun("timing-out"));
  ExpectRebuildsToStoredState("failing", CurrentRun("failing"));
  ExpectRebuildsToStoredState("canceled", CurrentRun("canceled"));
  ExpectRebuildsToStoredState("retrying", retrying_run->run_id());
  ExpectRebuildsToStoredState("retrying", retry_run);
  ExpectRebuildsToStoredState("sws", CurrentRun("sws"));
}

// A run left open: the rebuild queues what is pending as the active side did (the activity's
// task and its timeouts, the user timer at the same expiry, the workflow task, the run's
// timeout) and nothing for what is over.
TEST_F(ReplicatedEventsTest, AnOpenRunsRebuildQueuesWhatIsPending) {
  wf::StartWorkflowExecutionRequest start;
  start.set_workflow_id("open");
  start.mutable_workflow_type()->set_name("flow");
  start.mutable_task_queue()->set_name("q-open");
  *start.mutable_workflow_execution_timeout() = ToProtoDuration(absl::Hours(1));
  auto started = engine_->StartWorkflow(ns_, start);
  ASSERT_TRUE(started.ok());
  auto wft = PollWorkflowTask("q-open");
  ASSERT_TRUE(wft.ok()) << wft.status();
  ASSERT_TRUE(
      Complete(wft->task_token(), {ScheduleActivity("p1", "pq", absl::ZeroDuration(), 0,
                                                    absl::ZeroDuration(), absl::Seconds(100)),
                                   StartTimer("pt", absl::Seconds(30))})
          .ok());
  AdvanceAndFire(absl::Seconds(2));
  ASSERT_TRUE(Signal("open", "wake", "").ok());

  const std::string run = started->run_id();
  ExpectRebuildsToStoredState("open", run);
  const MutableStateRecord stored = Stored("open", run);
  absl::StatusOr<Rebuilt> rebuilt = Rebuild(stored, History(run), Split::kWhole);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();

  const int64_t activity_id = ScheduledIdOf(run, "p1");
  const int64_t task_id = stored.workflow_task().scheduled_event_id();
  ASSERT_NE(task_id, 0);
  ASSERT_EQ(stored.workflow_task().started_event_id(), 0);
  ASSERT_EQ(rebuilt->tasks.size(), 2u);
  std::map<persistence::TaskKind, TransferTask> tasks;
  for (const auto& t : rebuilt->tasks) tasks[t.kind] = t.task;
  ASSERT_TRUE(tasks.contains(persistence::TaskKind::kActivity));
  EXPECT_EQ(tasks[persistence::TaskKind::kActivity].scheduled_event_id(), activity_id);
  EXPECT_EQ(tasks[persistence::TaskKind::kActivity].task_queue(), "pq");
  EXPECT_EQ(tasks[persistence::TaskKind::kActivity].stamp(), 1);
  ASSERT_TRUE(tasks.contains(persistence::TaskKind::kWorkflow));
  EXPECT_EQ(tasks[persistence::TaskKind::kWorkflow].scheduled_event_id(), task_id);
  EXPECT_EQ(tasks[persistence::TaskKind::kWorkflow].run_id(), run);

  std::map<TimerTask::Kind, persistence::TimerTaskRow> timers;
  std::map<int32_t, persistence::TimerTaskRow> activity_timeouts;  // by timeout type
  for (const auto& t : rebuilt->timers) {
    timers[t.task.kind()] = t;
    if (t.task.kind() == TimerTask::KIND_ACTIVITY_TIMEOUT) activity_timeouts[t.task.timeout_type()] = t;
  }
  EXPECT_EQ(rebuilt->timers.size(), 4u);
  ASSERT_TRUE(timers.contains(TimerTask::KIND_USER_TIMER));
  EXPECT_EQ(absl::ToUnixMillis(timers[TimerTask::KIND_USER_TIMER].fire_time),
            stored.timers().at("pt").timer().fire_time_ms());
  EXPECT_EQ(timers[TimerTask::KIND_USER_TIMER].task.timer_id(), "pt");
  // Schedule-to-start (normalised to the schedule-to-close value) and schedule-to-close,
  // as the stored activity holds them.
  ASSERT_EQ(activity_timeouts.size(), 2u);
  ASSERT_TRUE(activity_timeouts.contains(enums::TIMEOUT_TYPE_SCHEDULE_TO_START));
  ASSERT_TRUE(activity_timeouts.contains(enums::TIMEOUT_TYPE_SCHEDULE_TO_CLOSE));
  ASSERT_EQ(stored.activities().at(activity_id).timers_size(), 2);
  EXPECT_EQ(absl::ToUnixMillis(activity_timeouts[enums::TIMEOUT_TYPE_SCHEDULE_TO_START].fire_time),
            stored.activities().at(activity_id).timers(0).fire_time_ms());
  EXPECT_EQ(absl::ToUnixMillis(activity_timeouts[enums::TIMEOUT_TYPE_SCHEDULE_TO_CLOSE].fire_time),
            stored.activities().at(activity_id).timers(1).fire_time_ms());
  ASSERT_TRUE(timers.contains(TimerTask::KIND_WORKFLOW_EXECUTION_TIMEOUT));
  // (Timer rows are stored in whole milliseconds, rounded up.)
  const absl::Time expires = FromProtoTime(stored.execution().workflow_execution_expiration_time());
  EXPECT_GE(timers[TimerTask::KIND_WORKFLOW_EXECUTION_TIMEOUT].fire_time, expires);
  EXPECT_LT(timers[TimerTask::KIND_WORKFLOW_EXECUTION_TIMEOUT].fire_time,
            expires + absl::Milliseconds(1));
  for (const auto& t : rebuilt->timers) EXPECT_EQ(t.task.run_id(), run);
}

TEST_F(ReplicatedEventsTest, MalformedInputIsRefused) {
  auto started = Start("refused", "q-refused");
  ASSERT_TRUE(started.ok());
  auto wft = PollWorkflowTask("q-refused");
  ASSERT_TRUE(wft.ok()) << wft.status();
  ASSERT_TRUE(
      Complete(wft->task_token(), {ScheduleActivity("r1", "rq", absl::Seconds(10), 1)}).ok());
  const std::vector<HistoryEvent> events = History(started->run_id());
  ASSERT_EQ(events.size(), 5u);  // started, scheduled, started, completed, activity scheduled
  const MutableStateRecord stored = Stored("refused", started->run_id());

  auto apply = [&](const std::vector<HistoryEvent>& batch) {
    RunTransaction tx(Empty(stored), clock_.Now(), -1, *shards_);
    return ApplyReplicatedEvents(tx, batch);
  };
  auto expect_refused = [](const absl::Status& s, std::initializer_list<const char*> parts) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    for (const char* part : parts) EXPECT_NE(s.message().find(part), std::string::npos) << s;
  };
  ASSERT_TRUE(apply(events).ok());

  // An id gap.
  expect_refused(apply({events[0], events[1], events[3]}),
                 {"event ID mismatch", "EVENT_TYPE_WORKFLOW_TASK_COMPLETED", "4"});
  // A first event other than the start, and a second start.
  expect_refused(apply({events[1]}), {"replicated event 2", "EVENT_TYPE_WORKFLOW_TASK_SCHEDULED"});
  // An activity the run does not have.
  HistoryEvent unknown = events[4];
  unknown.set_event_type(enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
  unknown.mutable_activity_task_completed_event_attributes()->set_scheduled_event_id(99);
  expect_refused(apply({events[0], events[1], events[2], events[3], unknown}),
                 {"replicated event 5", "EVENT_TYPE_ACTIVITY_TASK_COMPLETED", "99", "not pending"});
  HistoryEvent timer = events[4];
  timer.set_event_type(enums::EVENT_TYPE_TIMER_FIRED);
  timer.mutable_timer_fired_event_attributes()->set_timer_id("nope");
  expect_refused(apply({events[0], events[1], events[2], events[3], timer}),
                 {"EVENT_TYPE_TIMER_FIRED", "nope"});
  // A workflow task completed that is not the started one.
  HistoryEvent completed = events[3];
  completed.mutable_workflow_task_completed_event_attributes()->set_scheduled_event_id(7);
  expect_refused(apply({events[0], events[1], events[2], completed}),
                 {"replicated event 4", "EVENT_TYPE_WORKFLOW_TASK_COMPLETED"});
  // An event type this server does not apply.
  HistoryEvent nexus = events[4];
  nexus.set_event_type(enums::EVENT_TYPE_NEXUS_OPERATION_SCHEDULED);
  expect_refused(apply({events[0], events[1], events[2], events[3], nexus}),
                 {"replicated event 5", "EVENT_TYPE_NEXUS_OPERATION_SCHEDULED", "not of a type"});
  HistoryEvent unnamed = events[4];
  unnamed.set_event_type(static_cast<enums::EventType>(999));
  expect_refused(apply({events[0], events[1], events[2], events[3], unnamed}), {"event type 999"});
  // A version below the run's last.
  std::vector<HistoryEvent> versions = events;
  for (auto& e : versions) e.set_version(5);
  versions[4].set_version(4);
  expect_refused(apply(versions), {"event version mismatch", "below"});
  // A higher version adds an item to the version history.
  versions[4].set_version(15);
  {
    RunTransaction tx(Empty(stored), clock_.Now(), -1, *shards_);
    ASSERT_TRUE(ApplyReplicatedEvents(tx, versions).ok());
    const auto& items = tx.state().version_histories().histories(0).items();
    ASSERT_EQ(items.size(), 2);
    EXPECT_EQ(items.at(0).event_id(), 4);
    EXPECT_EQ(items.at(0).version(), 5);
    EXPECT_EQ(items.at(1).event_id(), 5);
    EXPECT_EQ(items.at(1).version(), 15);
    EXPECT_EQ(tx.state().last_event_task_id(), versions[4].task_id());
    ASSERT_EQ(tx.new_events().size(), 5u);
    EXPECT_EQ(tx.new_events()[2].task_id(), versions[2].task_id());
    // Nothing follows a closing event.
    HistoryEvent terminated = events[4];
    terminated.set_event_id(6);
    terminated.set_version(15);
    terminated.set_event_type(enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED);
    ASSERT_TRUE(ApplyReplicatedEvents(tx, {terminated}).ok());
    EXPECT_EQ(tx.state().execution().status(), enums::WORKFLOW_EXECUTION_STATUS_TERMINATED);
    HistoryEvent after = terminated;
    after.set_event_id(7);
    after.set_event_type(enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    expect_refused(ApplyReplicatedEvents(tx, {after}), {"follows the run's closing event"});
  }
}

}  // namespace
}  // namespace tock::server::history
