// Worker Deployments over real gRPC (reference/api_2026.md §3.3, Temporal's
// worker_deployment_test.go and versioning_3_test.go where they fit): versions registered by
// their pollers, the routing of tasks to the current version and to pinned runs' versions,
// the routing calls with conflict tokens and the manager identity, and each call's errors.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/client/connection.h"
#include "server-core/server.h"

namespace tock::server {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace enums = temporal::api::enums::v1;
using W = wf::WorkflowService::Stub;
constexpr char kQueue[] = "billing-q";

class WorkerDeploymentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerConfig config;
    config.port = 0;
    // Workflow tasks go to the queue, never back in the start's answer.
    config.eager_dispatch.workflow_start.namespaces["default"] = false;
    auto server = TockServer::Start(config, RealClock());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    client::ConnectionOptions options;
    options.address = server_->address();
    options.timeout = absl::Milliseconds(1500);  // a poll waits 0.5 s (1 s before its deadline)
    auto connection = client::Connection::Open(options);
    ASSERT_TRUE(connection.ok());
    c_ = std::move(*connection);
  }

  // A workflow-task poll of `build` of deployment "billing" ("" unversioned): the task it
  // got, or an empty response when none came for it within its half second.
  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> Poll(const std::string& build,
                                                         const std::string& deployment = "billing") {
    wf::PollWorkflowTaskQueueRequest poll;
    poll.set_namespace_("default");
    poll.mutable_task_queue()->set_name(kQueue);
    poll.set_identity(build.empty() ? "unversioned-worker" : "worker-" + build);
    if (!build.empty()) {
      auto* options = poll.mutable_deployment_options();
      options->set_deployment_name(deployment);
      options->set_build_id(build);
      options->set_worker_versioning_mode(enums::WORKER_VERSIONING_MODE_VERSIONED);
    }
    return c_->Call(&W::PollWorkflowTaskQueue, c_->workflow(), poll);
  }

  std::string Start(const std::string& workflow_id) {
    wf::StartWorkflowExecutionRequest start;
    start.set_namespace_("default");
    start.set_workflow_id(workflow_id);
    start.mutable_workflow_type()->set_name("invoice");
    start.mutable_task_queue()->set_name(kQueue);
    start.set_request_id(workflow_id + "-request");
    auto started = c_->Call(&W::StartWorkflowExecution, c_->workflow(), start);
    EXPECT_TRUE(started.ok()) << started.status();
    return started.ok() ? started->run_id() : "";
  }

  // Completes `task` as a worker of `build` with `behavior` and `commands` (none: the run
  // stays open).
  void Complete(const wf::PollWorkflowTaskQueueResponse& task, const std::string& build,
                enums::VersioningBehavior behavior,
                const std::vector<temporal::api::command::v1::Command>& commands = {}) {
    wf::RespondWorkflowTaskCompletedRequest done;
    done.set_namespace_("default");
    done.set_task_token(task.task_token());
    done.set_identity("worker-" + build);
    for (const auto& command : commands) *done.add_commands() = command;
    auto* options = done.mutable_deployment_options();
    options->set_deployment_name("billing");
    options->set_build_id(build);
    options->set_worker_versioning_mode(enums::WORKER_VERSIONING_MODE_VERSIONED);
    done.set_versioning_behavior(behavior);
    auto answered = c_->Call(&W::RespondWorkflowTaskCompleted, c_->workflow(), done);
    ASSERT_TRUE(answered.ok()) << answered.status();
  }

  void Signal(const std::string& workflow_id) {
    wf::SignalWorkflowExecutionRequest signal;
    signal.set_namespace_("default");
    signal.mutable_workflow_execution()->set_workflow_id(workflow_id);
    signal.set_signal_name("wake");
    signal.set_request_id(absl::StrCat(workflow_id, "-", ++signals_));
    ASSERT_TRUE(c_->Call(&W::SignalWorkflowExecution, c_->workflow(), signal).ok());
  }

  absl::StatusOr<wf::DescribeWorkerDeploymentResponse> Describe() {
    wf::DescribeWorkerDeploymentRequest req;
    req.set_namespace_("default");
    req.set_deployment_name("billing");
    return c_->Call(&W::DescribeWorkerDeployment, c_->workflow(), req);
  }

  absl::StatusOr<wf::SetWorkerDeploymentCurrentVersionResponse> SetCurrent(
      const std::string& build, const std::string& token = "", const std::string& identity = "op") {
    wf::SetWorkerDeploymentCurrentVersionRequest req;
    req.set_namespace_("default");
    req.set_deployment_name("billing");
    req.set_build_id(build);
    req.set_conflict_token(token);
    req.set_identity(identity);
    return c_->Call(&W::SetWorkerDeploymentCurrentVersion, c_->workflow(), req);
  }

  std::unique_ptr<TockServer> server_;
  std::unique_ptr<client::Connection> c_;
  int signals_ = 0;
};

enums::WorkerDeploymentVersionStatus StatusOf(const wf::DescribeWorkerDeploymentResponse& d,
                                              const std::string& build) {
  for (const auto& v : d.worker_deployment_info().version_summaries()) {
    if (v.deployment_version().build_id() == build) return v.status();
  }
  return enums::WORKER_DEPLOYMENT_VERSION_STATUS_UNSPECIFIED;
}

TEST_F(WorkerDeploymentTest, APollRegistersItsVersionAndTheQueue) {
  ASSERT_TRUE(Poll("v1").ok());
  auto d = Describe();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->conflict_token().empty());
  ASSERT_EQ(d->worker_deployment_info().version_summaries_size(), 1);
  EXPECT_EQ(StatusOf(*d, "v1"), enums::WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE);

  wf::DescribeWorkerDeploymentVersionRequest version;
  version.set_namespace_("default");
  version.set_version("billing.v1");  // v0.31's string form is read too
  auto described = c_->Call(&W::DescribeWorkerDeploymentVersion, c_->workflow(), version);
  ASSERT_TRUE(described.ok()) << described.status();
  ASSERT_EQ(described->version_task_queues_size(), 1);
  EXPECT_EQ(described->version_task_queues(0).name(), kQueue);
  EXPECT_EQ(described->version_task_queues(0).type(), enums::TASK_QUEUE_TYPE_WORKFLOW);

  // A second version, newer: listed first.
  ASSERT_TRUE(Poll("v2").ok());
  d = Describe();
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->worker_deployment_info().version_summaries_size(), 2);
  EXPECT_EQ(d->worker_deployment_info().version_summaries(0).deployment_version().build_id(), "v2");

  wf::ListWorkerDeploymentsRequest list;
  list.set_namespace_("default");
  auto listed = c_->Call(&W::ListWorkerDeployments, c_->workflow(), list);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->worker_deployments_size(), 1);
  EXPECT_EQ(listed->worker_deployments(0).name(), "billing");
  EXPECT_EQ(listed->worker_deployments(0).latest_version_summary().deployment_version().build_id(),
            "v2");
}

// With no current version the tasks go to the unversioned workers; once one is set, new
// runs go to it; a run pinned to v1 stays on v1 after v2 becomes current, while an
// auto-upgrade run moves to v2 (Temporal's TestPinnedTask_*, TestUnpinnedTask_*).
TEST_F(WorkerDeploymentTest, TasksFollowTheCurrentVersionAndPinnedRunsStay) {
  ASSERT_TRUE(Poll("v1").ok());
  ASSERT_TRUE(Poll("v2").ok());
  Start("before-current");
  auto task = Poll("v1");
  ASSERT_TRUE(task.ok());
  EXPECT_TRUE(task->task_token().empty()) << "no current version: not for a versioned worker";
  task = Poll("");
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->workflow_execution().workflow_id(), "before-current");

  auto set = SetCurrent("v1");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->previous_version(), "__unversioned__");
  Start("pinned");
  Start("upgrading");
  task = Poll("v1");
  ASSERT_TRUE(task.ok());
  ASSERT_EQ(task->workflow_execution().workflow_id(), "pinned");
  Complete(*task, "v1", enums::VERSIONING_BEHAVIOR_PINNED);
  task = Poll("v1");
  ASSERT_TRUE(task.ok());
  ASSERT_EQ(task->workflow_execution().workflow_id(), "upgrading");
  Complete(*task, "v1", enums::VERSIONING_BEHAVIOR_AUTO_UPGRADE);

  wf::DescribeWorkflowExecutionRequest describe;
  describe.set_namespace_("default");
  describe.mutable_execution()->set_workflow_id("pinned");
  auto run = c_->Call(&W::DescribeWorkflowExecution, c_->workflow(), describe);
  ASSERT_TRUE(run.ok()) << run.status();
  const auto& info = run->workflow_execution_info().versioning_info();
  EXPECT_EQ(info.behavior(), enums::VERSIONING_BEHAVIOR_PINNED);
  EXPECT_EQ(info.deployment_version().build_id(), "v1");

  // The versioning attributes are queryable: drainage counts the pinned runs this way.
  wf::CountWorkflowExecutionsRequest count;
  count.set_namespace_("default");
  count.set_query("TemporalWorkerDeploymentVersion = 'billing:v1' AND "
                  "TemporalWorkflowVersioningBehavior = 'Pinned' AND ExecutionStatus = 'Running'");
  auto counted = c_->Call(&W::CountWorkflowExecutions, c_->workflow(), count);
  ASSERT_TRUE(counted.ok()) << counted.status();
  EXPECT_EQ(counted->count(), 1);
  count.set_query("TemporalWorkflowVersioningBehavior = 'AutoUpgrade'");
  counted = c_->Call(&W::CountWorkflowExecutions, c_->workflow(), count);
  ASSERT_TRUE(counted.ok()) << counted.status();
  EXPECT_EQ(counted->count(), 1);

  auto d = Describe();
  ASSERT_TRUE(d.ok());
  set = SetCurrent("v2", d->conflict_token());
  ASSERT_TRUE(set.ok()) << set.status();
  d = Describe();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(StatusOf(*d, "v2"), enums::WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT);
  EXPECT_EQ(StatusOf(*d, "v1"), enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING);
  EXPECT_EQ(d->worker_deployment_info().routing_config().current_deployment_version().build_id(),
            "v2");

  Signal("pinned");
  Signal("upgrading");
  task = Poll("v2");
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->workflow_execution().workflow_id(), "upgrading") << "auto-upgrade moves to v2";
  task = Poll("v1");
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->workflow_execution().workflow_id(), "pinned") << "a pinned run stays on v1";
}

// What a run's own version passes on (Temporal's TestPinnedCaN_*, TestChildWf_*): a pinned
// run's child and its continue-as-new start pinned to its version, though another is current;
// a continue-as-new asking for AUTO_UPGRADE starts on the current version; and a pinned run's
// workflow task says when its queue's target version is another one.
TEST_F(WorkerDeploymentTest, ChildrenAndContinuedRunsInheritAPinnedVersion) {
  namespace command = temporal::api::command::v1;
  ASSERT_TRUE(Poll("v1").ok());
  ASSERT_TRUE(Poll("v2").ok());
  ASSERT_TRUE(SetCurrent("v1").ok());
  Start("parent");
  auto task = Poll("v1");
  ASSERT_TRUE(task.ok());
  ASSERT_EQ(task->workflow_execution().workflow_id(), "parent");
  auto last_started = [](const wf::PollWorkflowTaskQueueResponse& t) {
    return t.history().events(t.history().events_size() - 1).workflow_task_started_event_attributes();
  };
  EXPECT_FALSE(last_started(*task).target_worker_deployment_version_changed());
  Complete(*task, "v1", enums::VERSIONING_BEHAVIOR_PINNED);

  auto d = Describe();
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(SetCurrent("v2", d->conflict_token()).ok());
  Signal("parent");
  task = Poll("v1");
  ASSERT_TRUE(task.ok());
  ASSERT_EQ(task->workflow_execution().workflow_id(), "parent");
  EXPECT_TRUE(last_started(*task).target_worker_deployment_version_changed())
      << "the pinned run's queue now targets v2";
  command::Command start_child;
  start_child.set_command_type(enums::COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION);
  auto* child = start_child.mutable_start_child_workflow_execution_command_attributes();
  child->set_workflow_id("child");
  child->mutable_workflow_type()->set_name("invoice-line");
  Complete(*task, "v1", enums::VERSIONING_BEHAVIOR_PINNED, {start_child});

  // The child's first task and the parent's next one (its child started) both go to v1.
  std::map<std::string, wf::PollWorkflowTaskQueueResponse> tasks;
  for (int i = 0; i < 4 && tasks.size() < 2; ++i) {
    task = Poll("v1");
    ASSERT_TRUE(task.ok());
    if (!task->task_token().empty()) tasks[task->workflow_execution().workflow_id()] = *task;
  }
  ASSERT_TRUE(tasks.contains("child") && tasks.contains("parent"));
  const auto& child_started =
      tasks["child"].history().events(0).workflow_execution_started_event_attributes();
  EXPECT_EQ(child_started.inherited_pinned_version().build_id(), "v1");
  Complete(tasks["child"], "v1", enums::VERSIONING_BEHAVIOR_PINNED);

  // Continue-as-new keeps the pinned version...
  command::Command continue_as_new;
  continue_as_new.set_command_type(enums::COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION);
  continue_as_new.mutable_continue_as_new_workflow_execution_command_attributes()
      ->mutable_workflow_type()->set_name("invoice");
  Complete(tasks["parent"], "v1", enums::VERSIONING_BEHAVIOR_PINNED, {continue_as_new});
  task = Poll("v1");
  ASSERT_TRUE(task.ok());
  ASSERT_EQ(task->workflow_execution().workflow_id(), "parent");
  EXPECT_EQ(task->history().events(0).workflow_execution_started_event_attributes()
                .inherited_pinned_version().build_id(), "v1");

  // ...unless it asks to upgrade: the next run starts auto-upgrade, on the current version.
  continue_as_new.mutable_continue_as_new_workflow_execution_command_attributes()
      ->set_initial_versioning_behavior(enums::CONTINUE_AS_NEW_VERSIONING_BEHAVIOR_AUTO_UPGRADE);
  Complete(*task, "v1", enums::VERSIONING_BEHAVIOR_PINNED, {continue_as_new});
  task = Poll("v2");
  ASSERT_TRUE(task.ok());
  ASSERT_EQ(task->workflow_execution().workflow_id(), "parent");
  const auto& upgraded = task->history().events(0).workflow_execution_started_event_attributes();
  EXPECT_FALSE(upgraded.has_inherited_pinned_version());
  EXPECT_EQ(upgraded.inherited_auto_upgrade_info().source_deployment_version().build_id(), "v1");
  EXPECT_EQ(upgraded.inherited_auto_upgrade_info().continue_as_new_initial_versioning_behavior(),
            enums::CONTINUE_AS_NEW_VERSIONING_BEHAVIOR_AUTO_UPGRADE);

  // The child's run is pinned to v1 until a worker says otherwise.
  Complete(*task, "v2", enums::VERSIONING_BEHAVIOR_PINNED);
  wf::DescribeWorkflowExecutionRequest describe;
  describe.set_namespace_("default");
  describe.mutable_execution()->set_workflow_id("child");
  auto described = c_->Call(&W::DescribeWorkflowExecution, c_->workflow(), describe);
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(described->workflow_execution_info().versioning_info().behavior(),
            enums::VERSIONING_BEHAVIOR_PINNED);
  EXPECT_EQ(described->workflow_execution_info().versioning_info().deployment_version().build_id(),
            "v1");
}

// A pinned override at start sends the run's first task to that version though another is
// current; bad overrides are refused with Temporal's messages.
TEST_F(WorkerDeploymentTest, APinnedOverrideChoosesTheVersionAtStart) {
  ASSERT_TRUE(Poll("v1").ok());
  ASSERT_TRUE(Poll("v2").ok());
  ASSERT_TRUE(SetCurrent("v2").ok());
  wf::StartWorkflowExecutionRequest start;
  start.set_namespace_("default");
  start.set_workflow_id("overridden");
  start.mutable_workflow_type()->set_name("invoice");
  start.mutable_task_queue()->set_name(kQueue);
  auto* pinned = start.mutable_versioning_override()->mutable_pinned();
  pinned->mutable_version()->set_deployment_name("billing");
  pinned->mutable_version()->set_build_id("v1");
  auto bad = c_->Call(&W::StartWorkflowExecution, c_->workflow(), start);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "must specify pinned override behavior if override is pinned.");
  pinned->set_behavior(temporal::api::workflow::v1::VersioningOverride::PINNED_OVERRIDE_BEHAVIOR_PINNED);
  ASSERT_TRUE(c_->Call(&W::StartWorkflowExecution, c_->workflow(), start).ok());
  auto task = Poll("v1");
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->workflow_execution().workflow_id(), "overridden");

  start.set_workflow_id("auto");
  start.mutable_versioning_override()->set_auto_upgrade(false);
  bad = c_->Call(&W::StartWorkflowExecution, c_->workflow(), start);
  EXPECT_EQ(bad.status().message(), "auto-upgrade override must be true");
}

// A ramp sends its share of workflow ids to the ramping version, each id always alike.
TEST_F(WorkerDeploymentTest, ARampSendsItsShareOfWorkflowIds) {
  ASSERT_TRUE(Poll("v1").ok());
  ASSERT_TRUE(Poll("v2").ok());
  ASSERT_TRUE(SetCurrent("v1").ok());
  wf::SetWorkerDeploymentRampingVersionRequest ramp;
  ramp.set_namespace_("default");
  ramp.set_deployment_name("billing");
  ramp.set_build_id("v2");
  ramp.set_percentage(100);
  ramp.set_identity("op");
  ASSERT_TRUE(c_->Call(&W::SetWorkerDeploymentRampingVersion, c_->workflow(), ramp).ok());
  auto d = Describe();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(StatusOf(*d, "v2"), enums::WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING);
  Start("ramped");
  auto task = Poll("v2");
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->workflow_execution().workflow_id(), "ramped") << "a 100 % ramp takes every id";

  ramp.set_percentage(101);
  auto bad = c_->Call(&W::SetWorkerDeploymentRampingVersion, c_->workflow(), ramp);
  EXPECT_EQ(bad.status().message(), "Percentage must be between 0 and 100 (inclusive)");
  ramp.set_build_id("v1");
  ramp.set_percentage(10);
  bad = c_->Call(&W::SetWorkerDeploymentRampingVersion, c_->workflow(), ramp);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(bad.status().message(), "requested ramping version billing:v1 is already current");
  // Unset: 0 % with no build id; v2 drains.
  ramp.set_build_id("");
  ramp.set_percentage(0);
  ASSERT_TRUE(c_->Call(&W::SetWorkerDeploymentRampingVersion, c_->workflow(), ramp).ok());
  d = Describe();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(StatusOf(*d, "v2"), enums::WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING);
  EXPECT_FALSE(d->worker_deployment_info().routing_config().has_ramping_deployment_version());
}

TEST_F(WorkerDeploymentTest, ConflictTokensManagerIdentityAndDeletionRules) {
  ASSERT_TRUE(Poll("v1").ok());
  auto d = Describe();
  ASSERT_TRUE(d.ok());
  const std::string token = d->conflict_token();
  auto set = SetCurrent("v1", token);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_NE(set->conflict_token(), token);
  // The same change again by the same identity is a no-op: success, token unchanged.
  auto again = SetCurrent("v1", "stale-token");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->conflict_token(), set->conflict_token());
  EXPECT_EQ(SetCurrent("", token).status().message(), "conflict token mismatch");
  EXPECT_EQ(SetCurrent("v9").status().message(), "build ID 'v9' not found in Worker Deployment 'billing'");

  wf::SetWorkerDeploymentManagerRequest manager;
  manager.set_namespace_("default");
  manager.set_deployment_name("billing");
  manager.set_self(true);
  EXPECT_EQ(c_->Call(&W::SetWorkerDeploymentManager, c_->workflow(), manager).status().message(),
            "Identity is required");
  manager.set_identity("release-bot");
  auto managed = c_->Call(&W::SetWorkerDeploymentManager, c_->workflow(), manager);
  ASSERT_TRUE(managed.ok()) << managed.status();
  auto refused = SetCurrent("", "", "someone-else");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(),
            "ManagerIdentity 'release-bot' is set and does not match user identity "
            "'someone-else'; to proceed, set your own identity as the ManagerIdentity, remove "
            "the ManagerIdentity, or wait for the other client to do so");

  wf::DeleteWorkerDeploymentVersionRequest del;
  del.set_namespace_("default");
  del.mutable_deployment_version()->set_deployment_name("billing");
  del.mutable_deployment_version()->set_build_id("v1");
  del.set_identity("release-bot");
  EXPECT_EQ(c_->Call(&W::DeleteWorkerDeploymentVersion, c_->workflow(), del).status().message(),
            "version 'billing:v1' cannot be deleted since it is current or ramping");
  ASSERT_TRUE(SetCurrent("", "", "release-bot").ok());  // back to unversioned: v1 drains
  EXPECT_EQ(c_->Call(&W::DeleteWorkerDeploymentVersion, c_->workflow(), del).status().message(),
            "version 'billing:v1' cannot be deleted since it is draining");
  del.set_skip_drainage(true);
  EXPECT_EQ(c_->Call(&W::DeleteWorkerDeploymentVersion, c_->workflow(), del).status().message(),
            "version 'billing:v1' cannot be deleted since it has active pollers");

  wf::DeleteWorkerDeploymentRequest drop;
  drop.set_namespace_("default");
  drop.set_deployment_name("billing");
  EXPECT_EQ(c_->Call(&W::DeleteWorkerDeployment, c_->workflow(), drop).status().message(),
            "deployment has versions, can't be deleted");
}

TEST_F(WorkerDeploymentTest, CreateMetadataAndErrorsOfEachCall) {
  wf::CreateWorkerDeploymentRequest create;
  create.set_namespace_("default");
  create.set_deployment_name("billing");
  create.set_request_id("r1");
  ASSERT_TRUE(c_->Call(&W::CreateWorkerDeployment, c_->workflow(), create).ok());
  ASSERT_TRUE(c_->Call(&W::CreateWorkerDeployment, c_->workflow(), create).ok()) << "a retry";
  create.set_request_id("r2");
  EXPECT_EQ(c_->Call(&W::CreateWorkerDeployment, c_->workflow(), create).status().message(),
            "Worker Deployment with name \"billing\" already exists");
  create.set_deployment_name("a.b");
  EXPECT_EQ(c_->Call(&W::CreateWorkerDeployment, c_->workflow(), create).status().message(),
            "deployment name cannot contain ':' or '.'");

  wf::CreateWorkerDeploymentVersionRequest version;
  version.set_namespace_("default");
  version.mutable_deployment_version()->set_deployment_name("billing");
  version.mutable_deployment_version()->set_build_id("v3");
  ASSERT_TRUE(c_->Call(&W::CreateWorkerDeploymentVersion, c_->workflow(), version).ok());
  auto d = Describe();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(StatusOf(*d, "v3"), enums::WORKER_DEPLOYMENT_VERSION_STATUS_CREATED);
  ASSERT_TRUE(Poll("v3").ok());
  d = Describe();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(StatusOf(*d, "v3"), enums::WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE)
      << "its first poller makes a created version inactive";

  wf::UpdateWorkerDeploymentVersionMetadataRequest meta;
  meta.set_namespace_("default");
  *meta.mutable_deployment_version() = version.deployment_version();
  EXPECT_EQ(c_->Call(&W::UpdateWorkerDeploymentVersionMetadata, c_->workflow(), meta).status().message(),
            "At least one of remove_entries or upsert_entries must be provided");
  (*meta.mutable_upsert_entries())["ticket"].set_data("\"OPS-12\"");
  auto updated = c_->Call(&W::UpdateWorkerDeploymentVersionMetadata, c_->workflow(), meta);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->metadata().entries().at("ticket").data(), "\"OPS-12\"");

  wf::DescribeWorkerDeploymentVersionRequest missing;
  missing.set_namespace_("default");
  EXPECT_EQ(c_->Call(&W::DescribeWorkerDeploymentVersion, c_->workflow(), missing).status().message(),
            "deployment version cannot be empty");
  missing.set_version("nodot");
  EXPECT_EQ(c_->Call(&W::DescribeWorkerDeploymentVersion, c_->workflow(), missing).status().message(),
            "invalid version string \"nodot\", expected format is \"<deployment_name>.<build_id>\"");
  missing.set_version("billing.v9");
  auto none = c_->Call(&W::DescribeWorkerDeploymentVersion, c_->workflow(), missing);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(none.status().message(), "Worker Deployment Version not found");

  wf::DescribeWorkerDeploymentRequest nobody;
  nobody.set_namespace_("default");
  nobody.set_deployment_name("shipping");
  EXPECT_EQ(c_->Call(&W::DescribeWorkerDeployment, c_->workflow(), nobody).status().message(),
            "no Worker Deployment found with name 'shipping'; does your Worker Deployment have "
            "pollers?");

  // A versioned poll's options are checked before it waits.
  EXPECT_EQ(Poll("v1", "").status().message(), "Deployment name and build id must be set together.");
  EXPECT_EQ(Poll("v1", "a:b").status().message(), "deployment name cannot contain ':' or '.'");
  EXPECT_EQ(Poll("__v1").status().message(), "build ID cannot start with '__'");
}

}  // namespace
}  // namespace tock::server
