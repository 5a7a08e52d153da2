// The schedule runner (scheduler/schedules.h) in process: the schedule store and the namespace
// engine on an in-memory database, a ManualClock, and a frontend on a free port of 127.0.0.1
// whose StartWorkflowExecution answers what the test says (the fault), counting the calls per
// workflow id. What the SDK tests cannot time: a start that keeps failing.
#include "server-core/scheduler/schedules.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/time_format.h"
#include "server-core/persistence/persistence.h"
#include "server-core/rpc/dialer.h"
#include "tests/support/dispatcher_server.h"
#include "tests/support/eventually.h"
#include "tests/support/namespace_fixture.h"

namespace tock::server::scheduler {
namespace {

using tock::testing::Eventually;

// A frontend whose StartWorkflowExecution answers `answer` (OK: a run "run-N").
class ScriptedFrontend {
 public:
  ScriptedFrontend() {
    server_.dispatcher().AddUnary<wf::StartWorkflowExecutionRequest,
                                  wf::StartWorkflowExecutionResponse>(
        "temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution",
        [this](const wf::StartWorkflowExecutionRequest& req, const rpc::CallContext&)
            -> absl::StatusOr<wf::StartWorkflowExecutionResponse> {
          std::lock_guard lock(mu_);
          const int n = ++calls_[req.workflow_id()];
          if (!answer_.ok()) return answer_;
          wf::StartWorkflowExecutionResponse out;
          out.set_run_id(absl::StrCat("run-", n));
          return out;
        });
    EXPECT_TRUE(server_.Start());
  }
  const std::string& address() const { return server_.address(); }
  void Answer(absl::Status s) {
    std::lock_guard lock(mu_);
    answer_ = std::move(s);
  }
  int Calls(const std::string& workflow_id) {
    std::lock_guard lock(mu_);
    return calls_[workflow_id];
  }

 private:
  std::mutex mu_;
  absl::Status answer_;
  std::map<std::string, int> calls_;
  tock::testing::DispatcherServer server_;
};

class ScheduleRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = persistence::OpenPersistence({});
    ASSERT_TRUE(opened.ok()) << opened.status();
    persistence_ = std::move(*opened);
    namespaces_ = tock::testing::SingleClusterNamespaces(persistence_->namespaces(), clock_);
    absl::StatusOr<std::string> id = tock::testing::RegisterNamespace(*namespaces_, "orders");
    ASSERT_TRUE(id.ok()) << id.status();
    namespace_id_ = *id;
    schedules_ = std::make_unique<Schedules>(persistence_->schedules(), *namespaces_, clock_,
                                             NullLogger(),
                                             [](const std::string&, const std::string&) {
                                               return true;
                                             });
    schedules_->Start(frontend_.address(), rpc::Dialer());
  }
  void TearDown() override { schedules_->Shutdown(); }

  // Every hour, starting workflow "wf"; triggered once at once.
  absl::Status Create() {
    wf::CreateScheduleRequest req;
    req.set_namespace_("orders");
    req.set_schedule_id("hourly");
    req.set_request_id("create-1");
    auto* schedule = req.mutable_schedule();
    schedule->mutable_spec()->add_interval()->mutable_interval()->set_seconds(3600);
    auto* start = schedule->mutable_action()->mutable_start_workflow();
    start->set_workflow_id("wf");
    start->mutable_workflow_type()->set_name("Report");
    start->mutable_task_queue()->set_name("q");
    req.mutable_initial_patch()->mutable_trigger_immediately();
    return schedules_->Create(req).status();
  }
  absl::Status Trigger() {
    wf::PatchScheduleRequest req;
    req.set_namespace_("orders");
    req.set_schedule_id("hourly");
    req.set_request_id(absl::StrCat("trigger-", ++triggers_));
    req.mutable_patch()->mutable_trigger_immediately();
    return schedules_->Patch(req).status();
  }
  persistence::ScheduleRecord Stored() {
    auto stored = persistence_->schedules().Get(namespace_id_, "hourly");
    EXPECT_TRUE(stored.ok()) << stored.status();
    return stored.ok() ? stored->record : persistence::ScheduleRecord();
  }
  // The workflow id of a start made now ("wf-" and the nominal time).
  std::string WorkflowIdNow() {
    return absl::StrCat("wf-", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", clock_.Now(),
                                                absl::UTCTimeZone()));
  }

  ManualClock clock_;
  ScriptedFrontend frontend_;
  std::unique_ptr<persistence::Persistence> persistence_;
  std::unique_ptr<namespaces::NamespaceEngine> namespaces_;
  std::unique_ptr<Schedules> schedules_;
  std::string namespace_id_;
  int triggers_ = 0;
};

class ScheduleRetryTest : public ScheduleRunnerTest,
                          public ::testing::WithParamInterface<absl::StatusCode> {};

TEST_P(ScheduleRetryTest, AStartThatKeepsFailingIsRetriedWithBackoffThenRecordedAsFailed) {
  frontend_.Answer(absl::Status(GetParam(), "the history service is unwell"));
  const std::string first = WorkflowIdNow();
  ASSERT_TRUE(Create().ok());
  // Each failed attempt is written with its retry time before the next; the clock moves to
  // that time only then, so no attempt can be missed or made early.
  absl::Duration backoff = absl::Seconds(1);
  for (int attempt = 1; attempt < 5; ++attempt) {
    SCOPED_TRACE(attempt);
    ASSERT_TRUE(Eventually([&] {
      persistence::ScheduleRecord r = Stored();
      return r.starting_size() == 1 && r.starting(0).attempts() == attempt;
    }, absl::Seconds(10)));
    EXPECT_EQ(frontend_.Calls(first), attempt);
    const absl::Time retry_at = FromProtoTime(Stored().starting(0).retry_time());
    EXPECT_EQ(retry_at - clock_.Now(), backoff) << "the backoff doubles";
    backoff *= 2;
    clock_.Set(retry_at);
    schedules_->Wake();
  }
  // The fifth failure is the last: recorded as a failed action, no longer starting.
  ASSERT_TRUE(Eventually([&] { return Stored().info().recent_actions_size() == 1; },
                         absl::Seconds(10)));
  persistence::ScheduleRecord r = Stored();
  EXPECT_EQ(r.starting_size(), 0);
  EXPECT_EQ(r.info().recent_actions(0).start_workflow_result().workflow_id(), first);
  EXPECT_EQ(r.info().recent_actions(0).start_workflow_result().run_id(), "");
  EXPECT_EQ(r.info().recent_actions(0).start_workflow_status(),
            enums::WORKFLOW_EXECUTION_STATUS_FAILED);
  EXPECT_EQ(r.info().action_count(), 0) << "no action was taken";
  EXPECT_EQ(r.info().running_workflows_size(), 0);

  // A later start works. The look that makes it makes every start still noted, so had the
  // failed one been kept, it would have been tried again by then.
  frontend_.Answer(absl::OkStatus());
  clock_.Advance(absl::Minutes(1));
  const std::string second = WorkflowIdNow();
  ASSERT_TRUE(Trigger().ok());
  ASSERT_TRUE(Eventually([&] { return Stored().info().recent_actions_size() == 2; },
                         absl::Seconds(10)));
  r = Stored();
  EXPECT_EQ(r.info().recent_actions(1).start_workflow_result().workflow_id(), second);
  EXPECT_EQ(r.info().recent_actions(1).start_workflow_status(),
            enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
  EXPECT_EQ(frontend_.Calls(first), 5) << "given up after five attempts";
  EXPECT_EQ(frontend_.Calls(second), 1);
}

INSTANTIATE_TEST_SUITE_P(RetryableAndInternal, ScheduleRetryTest,
                         ::testing::Values(absl::StatusCode::kUnavailable,
                                           absl::StatusCode::kInternal),
                         [](const auto& info) {
                           return std::string(absl::StatusCodeToString(info.param));
                         });

TEST_F(ScheduleRunnerTest, AStartRefusedForGoodIsRecordedAsFailedAtOnce) {
  frontend_.Answer(absl::InvalidArgumentError("WorkflowType is not registered here"));
  const std::string first = WorkflowIdNow();
  ASSERT_TRUE(Create().ok());
  ASSERT_TRUE(Eventually([&] { return Stored().info().recent_actions_size() == 1; },
                         absl::Seconds(10)));
  persistence::ScheduleRecord r = Stored();
  EXPECT_EQ(r.starting_size(), 0);
  EXPECT_EQ(r.info().recent_actions(0).start_workflow_status(),
            enums::WORKFLOW_EXECUTION_STATUS_FAILED);
  EXPECT_EQ(frontend_.Calls(first), 1);
}

// WaitForDue (what AdvanceTime waits on) answers once every look due by the clock's now has
// been made and recorded, so a check that the runner has NOT acted can follow it at once,
// with no sleep: here, that a failed start is not retried before its backoff.
TEST_F(ScheduleRunnerTest, WaitForDueAnswersOnceTheLooksDueAreRecorded) {
  frontend_.Answer(absl::UnavailableError("the history service is unwell"));
  const std::string first = WorkflowIdNow();
  ASSERT_TRUE(Create().ok());
  // The trigger is due at once: its attempt is made and written by the answer.
  ASSERT_TRUE(schedules_->WaitForDue(absl::Seconds(10)));
  EXPECT_EQ(frontend_.Calls(first), 1);
  ASSERT_EQ(Stored().starting_size(), 1);
  EXPECT_EQ(Stored().starting(0).attempts(), 1);

  clock_.Advance(absl::Seconds(1) - absl::Milliseconds(1));
  ASSERT_TRUE(schedules_->WaitForDue(absl::Seconds(10)));
  EXPECT_EQ(frontend_.Calls(first), 1) << "retried before its backoff (1 s)";

  clock_.Advance(absl::Milliseconds(1));
  ASSERT_TRUE(schedules_->WaitForDue(absl::Seconds(10)));
  EXPECT_EQ(frontend_.Calls(first), 2) << "not retried at its backoff";
  ASSERT_EQ(Stored().starting_size(), 1);
  EXPECT_EQ(Stored().starting(0).attempts(), 2);
}

TEST_F(ScheduleRunnerTest, WaitForDueIsFalseOnceTheRunnerIsStopped) {
  schedules_->Shutdown();
  EXPECT_FALSE(schedules_->WaitForDue(absl::Seconds(10)));
}

}  // namespace
}  // namespace tock::server::scheduler
