// Worker Deployments in matching (deployments/deployment_routing.h): a task goes only to the
// polls of its target version (the current one, the ramping one for its share of workflow
// ids, a pinned run's own), versioned polls get nothing while no version is current, held
// tasks are matched again when the routing changes, and a sticky task of an auto-upgrade run
// whose target moved goes to its normal queue. In memory, on a manual clock: no sleeps.
#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "lib/common/clock.h"
#include "lib/common/timer_thread.h"
#include "server-core/deployments/deployment_routing.h"
#include "server-core/matching/matching_engine.h"

namespace tock::server::matching {
namespace {

namespace enums = temporal::api::enums::v1;
using deployments::DeploymentRouting;
using persistence::WorkerDeploymentRecord;

// A deployment "billing" whose versions poll queue "q" (workflow tasks); `current` and
// `ramping` ("" none) with `ramp` percent.
WorkerDeploymentRecord Billing(const std::vector<std::string>& builds, const std::string& current,
                               const std::string& ramping = "", float ramp = 0) {
  WorkerDeploymentRecord d;
  d.set_namespace_id("ns");
  d.set_name("billing");
  for (const std::string& b : builds) {
    auto* info = d.add_versions()->mutable_info();
    info->mutable_deployment_version()->set_deployment_name("billing");
    info->mutable_deployment_version()->set_build_id(b);
    auto* tq = info->add_task_queue_infos();
    tq->set_name("q");
    tq->set_type(enums::TASK_QUEUE_TYPE_WORKFLOW);
  }
  auto* rc = d.mutable_routing_config();
  if (!current.empty()) {
    rc->mutable_current_deployment_version()->set_deployment_name("billing");
    rc->mutable_current_deployment_version()->set_build_id(current);
    rc->set_current_version("billing." + current);
  }
  if (!ramping.empty()) {
    rc->mutable_ramping_deployment_version()->set_deployment_name("billing");
    rc->mutable_ramping_deployment_version()->set_build_id(ramping);
    rc->set_ramping_version("billing." + ramping);
    rc->set_ramping_version_percentage(ramp);
  }
  return d;
}

TaskQueueTask Task(int64_t id, const std::string& workflow_id, const std::string& version = "",
                   bool pinned = false) {
  TaskQueueTask t;
  t.task_id = id;
  t.namespace_id = "ns";
  t.task_queue = "q";
  t.kind = TaskKind::kWorkflow;
  t.task.set_workflow_id(workflow_id);
  t.task.set_task_queue("q");
  t.task.set_deployment_version(version);
  t.task.set_pinned(pinned);
  return t;
}

class VersionedMatchingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_.SetRouting([this](const std::string&) { return routing_; });
  }
  void TearDown() override { engine_.ReleasePolls(); }
  void Route(std::vector<WorkerDeploymentRecord> records) {
    routing_ = std::make_shared<DeploymentRouting>(records);
  }

  struct Answer {
    bool answered = false;
    std::optional<int64_t> id;
  };
  // A poll of `version` ("" unversioned): the id of the task it got at once. Otherwise it
  // is cancelled, or, with `waiting`, left to wait (its later answer lands there).
  std::optional<int64_t> Poll(const std::string& version,
                              std::shared_ptr<Answer>* waiting = nullptr,
                              const std::string& queue = "q") {
    auto answer = std::make_shared<Answer>();
    const auto id = engine_.Poll(
        "ns", queue, TaskKind::kWorkflow, clock_.Now() + absl::Hours(1), "w-" + version,
        [answer](std::optional<TaskQueueTask> t) {
          answer->answered = true;
          if (t) answer->id = t->task_id;
        },
        false, "", nullptr, version);
    if (answer->answered) return answer->id;
    if (waiting != nullptr) {
      *waiting = answer;
    } else {
      engine_.CancelPoll(id);
    }
    return std::nullopt;
  }

  ManualClock clock_;
  TimerThread timers_{clock_};
  std::shared_ptr<const DeploymentRouting> routing_ =
      std::make_shared<DeploymentRouting>(std::vector<WorkerDeploymentRecord>{});
  MatchingEngine engine_{clock_, timers_};
};

TEST_F(VersionedMatchingTest, WithNoCurrentVersionOnlyUnversionedPollsTakeTasks) {
  Route({Billing({"v1"}, "")});
  engine_.AddTask(Task(1, "wf-1"));
  EXPECT_EQ(Poll("billing:v1"), std::nullopt) << "a versioned poll gets nothing";
  EXPECT_EQ(Poll(""), 1);
}

TEST_F(VersionedMatchingTest, TasksGoToTheCurrentVersionAndPinnedOnesToTheirOwn) {
  Route({Billing({"v1", "v2"}, "v2")});
  engine_.AddTask(Task(1, "new-run"));
  engine_.AddTask(Task(2, "pinned-run", "billing:v1", /*pinned=*/true));
  engine_.AddTask(Task(3, "upgrading-run", "billing:v1", /*pinned=*/false));
  EXPECT_EQ(Poll(""), std::nullopt) << "nothing is for the unversioned workers";
  EXPECT_EQ(Poll("billing:v1"), 2);
  EXPECT_EQ(Poll("billing:v1"), std::nullopt);
  EXPECT_EQ(Poll("billing:v2"), 1);
  EXPECT_EQ(Poll("billing:v2"), 3) << "an auto-upgrade run's task goes to the current version";
}

TEST_F(VersionedMatchingTest, ARoutingChangeHandsHeldTasksToWaitingPolls) {
  Route({Billing({"v1"}, "")});
  std::shared_ptr<Answer> waiting;
  EXPECT_EQ(Poll("billing:v1", &waiting), std::nullopt);
  ASSERT_NE(waiting, nullptr);
  engine_.AddTask(Task(7, "wf-7"));
  EXPECT_FALSE(waiting->answered) << "an unversioned task is not for v1";
  Route({Billing({"v1"}, "v1")});
  engine_.Rematch("ns");
  EXPECT_EQ(waiting->id, 7) << "v1 became current: the held task goes to its waiting poll";
}

TEST_F(VersionedMatchingTest, ARampSplitsWorkflowIdsStably) {
  Route({Billing({"v1", "v2"}, "v1", "v2", 30)});
  int ramped = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = "wf-" + std::to_string(i);
    const std::string target = routing_->TargetOf(Task(i, id));
    EXPECT_EQ(target, routing_->TargetOf(Task(i + 5000, id))) << "every task of a workflow alike";
    ramped += target == "billing:v2" ? 1 : 0;
  }
  EXPECT_NEAR(ramped, 300, 60);
  Route({Billing({"v1", "v2"}, "v1", "v2", 100)});
  EXPECT_EQ(routing_->TargetOf(Task(1, "any")), "billing:v2");
}

TEST_F(VersionedMatchingTest, APinnedActivityOnAQueueItsVersionDoesNotPollRoutesAsUnpinned) {
  Route({Billing({"v1", "v2"}, "v2")});
  TaskQueueTask activity = Task(1, "wf", "billing:v9", /*pinned=*/true);
  EXPECT_EQ(routing_->TargetOf(activity), "billing:v2");
}

TEST_F(VersionedMatchingTest, AStickyTaskWhoseTargetMovedGoesToTheNormalQueue) {
  Route({Billing({"v1", "v2"}, "v2")});
  // Its sticky worker polls (seen within the sticky window) but runs v1.
  std::shared_ptr<Answer> sticky;
  EXPECT_EQ(Poll("billing:v1", &sticky, "sticky-1"), std::nullopt);
  ASSERT_NE(sticky, nullptr);
  TaskQueueTask t = Task(4, "wf", "billing:v1", /*pinned=*/false);
  t.task_queue = "sticky-1";
  t.task.set_sticky(true);
  engine_.AddTask(t);
  EXPECT_FALSE(sticky->answered) << "not for the v1 worker's sticky queue";
  EXPECT_EQ(Poll("billing:v2"), 4) << "it went to the normal queue, to the current version";

  // A pinned run's sticky task stays with its sticky worker.
  TaskQueueTask pinned = Task(5, "wf-p", "billing:v1", /*pinned=*/true);
  pinned.task_queue = "sticky-1";
  pinned.task.set_sticky(true);
  engine_.AddTask(pinned);
  EXPECT_EQ(sticky->id, 5);
}

}  // namespace
}  // namespace tock::server::matching
