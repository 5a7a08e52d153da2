// The whole server over real gRPC on a free port: wire behaviour the SDKs depend on.
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/client/connection.h"
#include "lib/common/status.h"
#include "server-core/server.h"
#include "temporal/api/errordetails/v1/message.pb.h"
#include "tests/support/eventually.h"
#include "tests/support/fixtures.h"
#include "tests/support/test_certificates.h"

namespace tock::server {
namespace {

namespace wf = temporal::api::workflowservice::v1;

std::unique_ptr<TockServer> StartOrDie(ServerConfig config) {
  config.port = 0;
  auto server = TockServer::Start(config, RealClock());
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? std::move(*server) : nullptr;
}

std::unique_ptr<client::Connection> Connect(const TockServer& server) {
  client::ConnectionOptions options;
  options.address = server.address();
  auto connection = client::Connection::Open(options);
  EXPECT_TRUE(connection.ok());
  return std::move(*connection);
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tock-it-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

TEST(GrpcServerTest, BannerNamesTheBoundAddress) {
  auto server = StartOrDie({});
  ASSERT_NE(server, nullptr);
  std::string first_line = server->Banner().substr(0, server->Banner().find('\n'));
  EXPECT_EQ(first_line, std::string("Tock server ") + kTockVersion + " listening on " +
                            server->address());
  EXPECT_FALSE(absl::EndsWith(server->address(), ":0"));
}

TEST(GrpcServerTest, SystemInfoAdvertisesWhatTheSdkNeeds) {
  auto server = StartOrDie({});
  auto connection = Connect(*server);
  auto info = connection->Call(&wf::WorkflowService::Stub::GetSystemInfo, connection->workflow(),
                               wf::GetSystemInfoRequest());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->capabilities().sdk_metadata());
  EXPECT_TRUE(info->capabilities().signal_and_query_header());
  EXPECT_FALSE(info->capabilities().build_id_based_versioning());
  EXPECT_TRUE(info->capabilities().eager_workflow_start());
}

// Every capability field, pinned: each is true exactly when Tock does what it names (the
// comments next to them in workflow_handler.cc and namespace_engine.cc name the test of
// each behaviour). A field flipped without its behaviour, or a new field, fails here.
TEST(GrpcServerTest, CapabilitiesSayExactlyWhatTockDoes) {
  auto server = StartOrDie({});
  auto connection = Connect(*server);
  auto info = connection->Call(&wf::WorkflowService::Stub::GetSystemInfo, connection->workflow(),
                               wf::GetSystemInfoRequest());
  ASSERT_TRUE(info.ok()) << info.status();
  wf::GetSystemInfoResponse::Capabilities system;
  system.set_signal_and_query_header(true);
  system.set_internal_error_differentiation(true);
  system.set_activity_failure_include_heartbeat(true);
  system.set_supports_schedules(true);
  system.set_encoded_failure_attributes(true);
  system.set_upsert_memo(true);
  system.set_sdk_metadata(true);
  system.set_count_group_by_execution_status(true);
  system.set_eager_workflow_start(true);
  EXPECT_EQ(info->capabilities().DebugString(), system.DebugString());

  wf::DescribeNamespaceRequest describe;
  describe.set_namespace_("default");
  auto ns = connection->Call(&wf::WorkflowService::Stub::DescribeNamespace,
                             connection->workflow(), describe);
  ASSERT_TRUE(ns.ok()) << ns.status();
  temporal::api::namespace_::v1::NamespaceInfo::Capabilities namespace_caps;
  namespace_caps.set_sync_update(true);
  namespace_caps.set_async_update(true);
  namespace_caps.set_worker_poll_complete_on_shutdown(true);
  namespace_caps.set_eager_workflow_start(true);
  namespace_caps.set_worker_heartbeats(true);
  EXPECT_EQ(ns->namespace_info().capabilities().DebugString(), namespace_caps.DebugString());
  EXPECT_TRUE(ns->namespace_info().supports_schedules());
}

// The capabilities left false name what Tock does not do: their RPCs are not served.
TEST(GrpcServerTest, FalseCapabilitiesNameWhatTockDoesNotServe) {
  auto server = StartOrDie({});
  auto connection = Connect(*server);
  auto expect_unimplemented = [](const absl::Status& s, const std::string& capability) {
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << capability << ": " << s;
  };
  wf::PauseWorkflowExecutionRequest pause;
  pause.set_namespace_("default");
  pause.set_workflow_id("any");
  expect_unimplemented(connection->Call(&wf::WorkflowService::Stub::PauseWorkflowExecution,
                                        connection->workflow(), pause).status(),
                       "workflow_pause");
  wf::StartActivityExecutionRequest activity;
  activity.set_namespace_("default");
  activity.set_activity_id("any");
  expect_unimplemented(connection->Call(&wf::WorkflowService::Stub::StartActivityExecution,
                                        connection->workflow(), activity).status(),
                       "standalone_activities");
  wf::StartNexusOperationExecutionRequest nexus;
  nexus.set_namespace_("default");
  nexus.set_operation_id("any");
  expect_unimplemented(connection->Call(&wf::WorkflowService::Stub::StartNexusOperationExecution,
                                        connection->workflow(), nexus).status(),
                       "standalone_nexus_operation");
}

// Worker heartbeats are kept per worker instance key (the last one wins) and read back by
// ListWorkers (filtered by the query, paged), CountWorkers and DescribeWorker.
TEST(GrpcServerTest, WorkersHeartbeatAndAreListedCountedAndDescribed) {
  auto server = StartOrDie({});
  auto connection = Connect(*server);
  using W = wf::WorkflowService::Stub;
  wf::RecordWorkerHeartbeatRequest record;
  record.set_namespace_("default");
  record.set_identity("process-1");
  for (int i = 0; i < 3; ++i) {
    temporal::api::worker::v1::WorkerHeartbeat* h = record.add_worker_heartbeat();
    h->set_worker_instance_key(absl::StrCat("key-", i));
    h->set_worker_identity(absl::StrCat("worker-", i));
    h->set_task_queue(i == 2 ? "payments" : "orders");
    h->set_sdk_name("temporal-typescript");
    h->set_sdk_version("1.24.0");
    h->mutable_host_info()->set_host_name("web-1");
    h->set_status(temporal::api::enums::v1::WORKER_STATUS_RUNNING);
    h->mutable_start_time()->set_seconds(1'800'000'000 + i);
  }
  ASSERT_TRUE(connection->Call(&W::RecordWorkerHeartbeat, connection->workflow(), record).ok());
  // The same worker again: its entry is replaced, not added.
  record.mutable_worker_heartbeat()->DeleteSubrange(1, 2);
  record.mutable_worker_heartbeat(0)->set_status(temporal::api::enums::v1::WORKER_STATUS_SHUTTING_DOWN);
  ASSERT_TRUE(connection->Call(&W::RecordWorkerHeartbeat, connection->workflow(), record).ok());

  wf::CountWorkersRequest count;
  count.set_namespace_("default");
  EXPECT_EQ(connection->Call(&W::CountWorkers, connection->workflow(), count)->count(), 3);
  count.set_query("TaskQueue = 'orders' AND WorkerStatus = 'Running'");
  EXPECT_EQ(connection->Call(&W::CountWorkers, connection->workflow(), count)->count(), 1);
  count.set_query("StartTime >= '2027-01-15T08:00:01Z' AND SdkName STARTS_WITH 'temporal-'");
  EXPECT_EQ(connection->Call(&W::CountWorkers, connection->workflow(), count)->count(), 2);
  count.set_query("Colour = 'red'");
  const absl::Status bad = connection->Call(&W::CountWorkers, connection->workflow(), count).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("unknown field"), std::string::npos) << bad;

  wf::ListWorkersRequest list;
  list.set_namespace_("default");
  list.set_page_size(2);
  auto first = connection->Call(&W::ListWorkers, connection->workflow(), list);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->workers_size(), 2);
  EXPECT_EQ(first->workers(0).worker_instance_key(), "key-0");
  EXPECT_EQ(first->workers(0).status(), temporal::api::enums::v1::WORKER_STATUS_SHUTTING_DOWN);
  EXPECT_EQ(first->workers(0).host_name(), "web-1");
  EXPECT_EQ(first->workers_info(1).worker_heartbeat().worker_identity(), "worker-1");
  ASSERT_FALSE(first->next_page_token().empty());
  list.set_next_page_token(first->next_page_token());
  auto second = connection->Call(&W::ListWorkers, connection->workflow(), list);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->workers_size(), 1);
  EXPECT_EQ(second->workers(0).task_queue(), "payments");
  EXPECT_TRUE(second->next_page_token().empty());

  wf::DescribeWorkerRequest describe;
  describe.set_namespace_("default");
  describe.set_worker_instance_key("key-2");
  auto described = connection->Call(&W::DescribeWorker, connection->workflow(), describe);
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(described->worker_info().worker_heartbeat().sdk_version(), "1.24.0");
  describe.set_worker_instance_key("nobody");
  EXPECT_EQ(connection->Call(&W::DescribeWorker, connection->workflow(), describe).status().code(),
            absl::StatusCode::kNotFound);
}

// A versioning behaviour comes only from a versioned worker (its deployment options in
// versioned mode), as Temporal's server requires; checked before the task token is read.
TEST(GrpcServerTest, AVersioningBehaviourWithoutAVersionedWorkerIsRefused) {
  auto server = StartOrDie({});
  auto connection = Connect(*server);
  wf::RespondWorkflowTaskCompletedRequest req;
  req.set_namespace_("default");
  req.set_task_token("not a token");
  req.set_versioning_behavior(temporal::api::enums::v1::VERSIONING_BEHAVIOR_PINNED);
  req.mutable_deployment_options()->set_worker_versioning_mode(
      temporal::api::enums::v1::WORKER_VERSIONING_MODE_UNVERSIONED);
  const absl::Status s = connection->Call(&wf::WorkflowService::Stub::RespondWorkflowTaskCompleted,
                                          connection->workflow(), req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(),
            "versioning behavior cannot be specified without deployment options being set with "
            "versioned mode");
}

// The calls Temporal's server keeps off by default get its answers, word for word
// (reference/api_2026.md §3.1, §3.2, §3.3.9, §4.7, §7.3, §8.2).
TEST(GrpcServerTest, CallsTemporalKeepsOffAnswerAsItsServerDoes) {
  auto server = StartOrDie({});
  auto connection = Connect(*server);
  auto expect = [&](auto method, auto request, absl::StatusCode code, const std::string& message) {
    request.set_namespace_("default");
    const absl::Status s = connection->Call(method, connection->workflow(), request).status();
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_EQ(s.message(), message);
  };
  using W = wf::WorkflowService::Stub;
  const auto denied = absl::StatusCode::kPermissionDenied;
  const auto unimplemented = absl::StatusCode::kUnimplemented;
  const std::string v1 = "Worker versioning v0.1 (Version Set-based, deprecated) is disabled on this namespace.";
  const std::string v2 = "Worker versioning v0.2 (Rules-based, deprecated) is disabled on this namespace.";
  expect(&W::UpdateWorkerBuildIdCompatibility, wf::UpdateWorkerBuildIdCompatibilityRequest(), denied, v1);
  expect(&W::GetWorkerBuildIdCompatibility, wf::GetWorkerBuildIdCompatibilityRequest(), denied, v1);
  expect(&W::UpdateWorkerVersioningRules, wf::UpdateWorkerVersioningRulesRequest(), denied, v2);
  expect(&W::GetWorkerVersioningRules, wf::GetWorkerVersioningRulesRequest(), denied, v2);
  expect(&W::GetWorkerTaskReachability, wf::GetWorkerTaskReachabilityRequest(), denied, v2);
  const std::string removed =
      "Deployments are deprecated and no longer supported, use Worker Deployments instead";
  expect(&W::DescribeDeployment, wf::DescribeDeploymentRequest(), unimplemented, removed);
  expect(&W::ListDeployments, wf::ListDeploymentsRequest(), unimplemented, removed);
  expect(&W::GetDeploymentReachability, wf::GetDeploymentReachabilityRequest(), unimplemented, removed);
  expect(&W::GetCurrentDeployment, wf::GetCurrentDeploymentRequest(), unimplemented, removed);
  expect(&W::SetCurrentDeployment, wf::SetCurrentDeploymentRequest(), unimplemented, removed);
  expect(&W::UpdateWorkerDeploymentVersionComputeConfig,
         wf::UpdateWorkerDeploymentVersionComputeConfigRequest(), unimplemented,
         "server-scaled deployments are not supported");
  expect(&W::FetchWorkerConfig, wf::FetchWorkerConfigRequest(), unimplemented,
         "FetchWorkerConfig command is not enabled.");
  expect(&W::UpdateWorkerConfig, wf::UpdateWorkerConfigRequest(), unimplemented,
         "UpdateWorkerConfig command is not enabled.");
  const std::string nexus = "Standalone Nexus operation is disabled";
  expect(&W::StartNexusOperationExecution, wf::StartNexusOperationExecutionRequest(), unimplemented, nexus);
  expect(&W::PollNexusOperationExecution, wf::PollNexusOperationExecutionRequest(), unimplemented, nexus);
  expect(&W::CountNexusOperationExecutions, wf::CountNexusOperationExecutionsRequest(), unimplemented, nexus);
  expect(&W::DeleteNexusOperationExecution, wf::DeleteNexusOperationExecutionRequest(), unimplemented, nexus);
  expect(&W::CreateWorkflowRule, wf::CreateWorkflowRuleRequest(), unimplemented,
         "method CreateWorkflowRule not supported");
  expect(&W::ListWorkflowRules, wf::ListWorkflowRulesRequest(), unimplemented,
         "method ListWorkflowRules not supported");
  expect(&W::TriggerWorkflowRule, wf::TriggerWorkflowRuleRequest(), unimplemented,
         "method TriggerWorkflowRule not supported");
}

wf::StartWorkflowExecutionRequest EagerStart(const std::string& workflow_id) {
  wf::StartWorkflowExecutionRequest start;
  start.set_namespace_("default");
  start.set_workflow_id(workflow_id);
  start.mutable_workflow_type()->set_name("flow");
  start.mutable_task_queue()->set_name("eager-q");
  start.set_request_id(workflow_id + "-request");
  start.set_identity("starter-and-worker");
  start.set_request_eager_execution(true);
  return start;
}

// Eager workflow start: the first workflow task comes back in the start's answer, started
// by the starter (events 1-3), and its completion closes the run like a polled task's.
TEST(GrpcServerTest, AnEagerStartHandsBackTheFirstWorkflowTask) {
  auto server = StartOrDie({});
  auto connection = Connect(*server);
  auto started = connection->Call(&wf::WorkflowService::Stub::StartWorkflowExecution,
                                  connection->workflow(), EagerStart("eager"));
  ASSERT_TRUE(started.ok()) << started.status();
  ASSERT_TRUE(started->has_eager_workflow_task());
  const wf::PollWorkflowTaskQueueResponse& task = started->eager_workflow_task();
  EXPECT_EQ(task.workflow_execution().run_id(), started->run_id());
  EXPECT_EQ(task.workflow_type().name(), "flow");
  EXPECT_EQ(task.started_event_id(), 3);
  EXPECT_EQ(task.previous_started_event_id(), 0);
  EXPECT_EQ(task.attempt(), 1);
  EXPECT_EQ(task.workflow_execution_task_queue().name(), "eager-q");
  ASSERT_EQ(task.history().events_size(), 3);
  EXPECT_EQ(task.history().events(0).event_type(),
            temporal::api::enums::v1::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  EXPECT_EQ(task.history().events(1).event_type(),
            temporal::api::enums::v1::EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
  EXPECT_EQ(task.history().events(2).event_type(),
            temporal::api::enums::v1::EVENT_TYPE_WORKFLOW_TASK_STARTED);
  EXPECT_EQ(task.history().events(2).workflow_task_started_event_attributes().identity(),
            "starter-and-worker");

  wf::RespondWorkflowTaskCompletedRequest complete;
  complete.set_namespace_("default");
  complete.set_task_token(task.task_token());
  auto* command = complete.add_commands();
  command->set_command_type(temporal::api::enums::v1::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION);
  command->mutable_complete_workflow_execution_command_attributes();
  auto completed = connection->Call(&wf::WorkflowService::Stub::RespondWorkflowTaskCompleted,
                                    connection->workflow(), complete);
  ASSERT_TRUE(completed.ok()) << completed.status();
  wf::DescribeWorkflowExecutionRequest describe;
  describe.set_namespace_("default");
  describe.mutable_execution()->set_workflow_id("eager");
  auto described = connection->Call(&wf::WorkflowService::Stub::DescribeWorkflowExecution,
                                    connection->workflow(), describe);
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(described->workflow_execution_info().status(),
            temporal::api::enums::v1::WORKFLOW_EXECUTION_STATUS_COMPLETED);

  // A start that waits (a start delay) gets its first task through a poll, as in Temporal.
  wf::StartWorkflowExecutionRequest delayed = EagerStart("eager-delayed");
  delayed.mutable_workflow_start_delay()->set_nanos(1000000);
  auto later = connection->Call(&wf::WorkflowService::Stub::StartWorkflowExecution,
                                connection->workflow(), delayed);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_FALSE(later->has_eager_workflow_task());
}

// A namespace configured without eager start (history.eager_workflow_start) says so in its
// capabilities, and a start asking for it gets its first workflow task through a poll.
TEST(GrpcServerTest, ANamespaceWithoutEagerStartQueuesTheFirstWorkflowTask) {
  ServerConfig config;
  config.eager_dispatch.workflow_start.namespaces["default"] = false;
  auto server = StartOrDie(config);
  auto connection = Connect(*server);
  wf::DescribeNamespaceRequest describe;
  describe.set_namespace_("default");
  auto ns = connection->Call(&wf::WorkflowService::Stub::DescribeNamespace,
                             connection->workflow(), describe);
  ASSERT_TRUE(ns.ok()) << ns.status();
  EXPECT_FALSE(ns->namespace_info().capabilities().eager_workflow_start());

  auto started = connection->Call(&wf::WorkflowService::Stub::StartWorkflowExecution,
                                  connection->workflow(), EagerStart("not-eager"));
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_FALSE(started->has_eager_workflow_task());
  wf::PollWorkflowTaskQueueRequest poll;
  poll.set_namespace_("default");
  poll.mutable_task_queue()->set_name("eager-q");
  auto task = connection->Call(&wf::WorkflowService::Stub::PollWorkflowTaskQueue,
                               connection->workflow(), poll);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ(task->workflow_execution().run_id(), started->run_id());
}

// A poll in flight on a connection whose calls may last 30 s (the poll itself waits 29 s).
template <typename Request, typename Response>
struct PollInFlight {
  absl::StatusOr<Response> answer = absl::UnknownError("not answered");
  absl::Duration took;
  std::thread thread;

  PollInFlight(client::Connection& connection,
               grpc::Status (wf::WorkflowService::Stub::*method)(grpc::ClientContext*,
                                                                 const Request&, Response*),
               Request request) {
    thread = std::thread([this, &connection, method, request] {
      const absl::Time start = absl::Now();
      answer = connection.Call(method, connection.workflow(), request);
      took = absl::Now() - start;
    });
  }
  void Join() { thread.join(); }
};

std::unique_ptr<client::Connection> ConnectForPolls(const TockServer& server) {
  client::ConnectionOptions options;
  options.address = server.address();
  options.timeout = absl::Seconds(30);
  auto connection = client::Connection::Open(options);
  EXPECT_TRUE(connection.ok());
  return std::move(*connection);
}

// Whether `identity` polls `queue` (DescribeTaskQueue lists it once its poll arrived).
bool Polling(client::Connection& connection, const std::string& queue,
             temporal::api::enums::v1::TaskQueueType type, const std::string& identity) {
  wf::DescribeTaskQueueRequest req;
  req.set_namespace_("default");
  req.mutable_task_queue()->set_name(queue);
  req.set_task_queue_type(type);
  auto out = connection.Call(&wf::WorkflowService::Stub::DescribeTaskQueue,
                             connection.workflow(), req);
  if (!out.ok()) return false;
  for (const auto& p : out->pollers()) {
    if (p.identity() == identity) return true;
  }
  return false;
}

// ShutdownWorker (namespace capability worker_poll_complete_on_shutdown): the worker's polls
// waiting on its queue answer empty at once, not at their deadline; its polls that arrive
// afterwards answer empty at once and take nothing; the task that comes next goes to
// another worker, so none is lost.
TEST(GrpcServerTest, ShutdownWorkerEndsTheWorkersPollsAndLosesNoTask) {
  namespace enums = temporal::api::enums::v1;
  auto server = StartOrDie({});
  auto connection = ConnectForPolls(*server);
  wf::PollWorkflowTaskQueueRequest workflow_poll;
  workflow_poll.set_namespace_("default");
  workflow_poll.mutable_task_queue()->set_name("closing");
  workflow_poll.set_identity("leaving-worker");
  workflow_poll.set_worker_instance_key("instance-1");
  wf::PollActivityTaskQueueRequest activity_poll;
  activity_poll.set_namespace_("default");
  activity_poll.mutable_task_queue()->set_name("closing");
  activity_poll.set_identity("leaving-worker");
  activity_poll.set_worker_instance_key("instance-1");
  PollInFlight workflow(*connection, &wf::WorkflowService::Stub::PollWorkflowTaskQueue,
                        workflow_poll);
  PollInFlight activity(*connection, &wf::WorkflowService::Stub::PollActivityTaskQueue,
                        activity_poll);
  ASSERT_TRUE(tock::testing::Eventually([&] {
    return Polling(*connection, "closing", enums::TASK_QUEUE_TYPE_WORKFLOW, "leaving-worker") &&
           Polling(*connection, "closing", enums::TASK_QUEUE_TYPE_ACTIVITY, "leaving-worker");
  }));

  wf::ShutdownWorkerRequest shutdown;
  shutdown.set_namespace_("default");
  shutdown.set_identity("leaving-worker");
  shutdown.set_worker_instance_key("instance-1");
  shutdown.set_task_queue("closing");
  ASSERT_TRUE(connection->Call(&wf::WorkflowService::Stub::ShutdownWorker,
                               connection->workflow(), shutdown).ok());
  workflow.Join();
  activity.Join();
  ASSERT_TRUE(workflow.answer.ok()) << workflow.answer.status();
  ASSERT_TRUE(activity.answer.ok()) << activity.answer.status();
  EXPECT_TRUE(workflow.answer->task_token().empty());
  EXPECT_TRUE(activity.answer->task_token().empty());
  // Well before the polls' own deadline (29 s).
  EXPECT_LT(workflow.took, absl::Seconds(10));
  EXPECT_LT(activity.took, absl::Seconds(10));

  wf::StartWorkflowExecutionRequest start;
  start.set_namespace_("default");
  start.set_workflow_id("after-shutdown");
  start.mutable_workflow_type()->set_name("flow");
  start.mutable_task_queue()->set_name("closing");
  start.set_request_id("after-shutdown-1");
  auto started = connection->Call(&wf::WorkflowService::Stub::StartWorkflowExecution,
                                  connection->workflow(), start);
  ASSERT_TRUE(started.ok()) << started.status();
  // The worker that left polls again (a poll it had already sent): nothing, at once.
  const absl::Time again = absl::Now();
  auto late = connection->Call(&wf::WorkflowService::Stub::PollWorkflowTaskQueue,
                               connection->workflow(), workflow_poll);
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_TRUE(late->task_token().empty());
  EXPECT_LT(absl::Now() - again, absl::Seconds(10));
  // The task waits for the next worker.
  wf::PollWorkflowTaskQueueRequest next = workflow_poll;
  next.set_identity("next-worker");
  next.set_worker_instance_key("instance-2");
  auto taken = connection->Call(&wf::WorkflowService::Stub::PollWorkflowTaskQueue,
                                connection->workflow(), next);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_FALSE(taken->task_token().empty());
  EXPECT_EQ(taken->workflow_execution().run_id(), started->run_id());
}

// Stopping the server ends the polls waiting (with their empty answers) before it closes
// the connections: workers stop polling without waiting out their polls.
TEST(GrpcServerTest, StoppingTheServerEndsWaitingPollsPromptly) {
  auto server = StartOrDie({});
  auto connection = ConnectForPolls(*server);
  wf::PollActivityTaskQueueRequest poll;
  poll.set_namespace_("default");
  poll.mutable_task_queue()->set_name("stopping");
  poll.set_identity("staying-worker");
  PollInFlight activity(*connection, &wf::WorkflowService::Stub::PollActivityTaskQueue, poll);
  ASSERT_TRUE(tock::testing::Eventually([&] {
    return Polling(*connection, "stopping", temporal::api::enums::v1::TASK_QUEUE_TYPE_ACTIVITY,
                   "staying-worker");
  }));
  server->Shutdown();
  activity.Join();
  ASSERT_TRUE(activity.answer.ok()) << activity.answer.status();
  EXPECT_TRUE(activity.answer->task_token().empty());
  EXPECT_LT(activity.took, absl::Seconds(10));
}

TEST(GrpcServerTest, UnbuiltMethodsAnswerUnimplementedWithTheirName) {
  auto server = StartOrDie({});
  auto connection = Connect(*server);
  wf::PauseActivityRequest req;
  req.set_namespace_("default");
  auto out = connection->Call(&wf::WorkflowService::Stub::PauseActivity, connection->workflow(), req);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(out.status().message(),
            "Method temporal.api.workflowservice.v1.WorkflowService/PauseActivity "
            "is unimplemented");
}

TEST(GrpcServerTest, ErrorDetailsTravelInTheTrailer) {
  auto server = StartOrDie({});
  auto connection = Connect(*server);
  wf::DescribeNamespaceRequest req;
  req.set_namespace_("missing");
  auto out = connection->Call(&wf::WorkflowService::Stub::DescribeNamespace,
                              connection->workflow(), req);
  ASSERT_EQ(out.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(out.status().message(), "Namespace missing is not found.");
  auto detail =
      GetDetail<temporal::api::errordetails::v1::NamespaceNotFoundFailure>(out.status());
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->namespace_(), "missing");
}

TEST(GrpcServerTest, DefaultAndConfiguredNamespacesExistAtStart) {
  ServerConfig config;
  config.namespaces = {"orders", "default"};
  auto server = StartOrDie(config);
  auto connection = Connect(*server);
  for (const char* name : {"default", "orders"}) {
    wf::DescribeNamespaceRequest req;
    req.set_namespace_(name);
    auto out = connection->Call(&wf::WorkflowService::Stub::DescribeNamespace,
                                connection->workflow(), req);
    ASSERT_TRUE(out.ok()) << name << ": " << out.status();
    EXPECT_EQ(out->config().workflow_execution_retention_ttl().seconds(), 2 * 86400);
  }
}

TEST(GrpcServerTest, DataSurvivesRestartAndShardCountIsFixed) {
  TempDir dir;
  ServerConfig config;
  config.persistence.sqlite_path = dir.file("tock.db");
  {
    auto server = StartOrDie(config);
    auto connection = Connect(*server);
    wf::RegisterNamespaceRequest req;
    req.set_namespace_("kept");
    req.set_description("survives");
    ASSERT_TRUE(connection
                    ->Call(&wf::WorkflowService::Stub::RegisterNamespace, connection->workflow(),
                           req)
                    .ok());
    server->Shutdown();
  }
  {
    auto server = StartOrDie(config);
    auto connection = Connect(*server);
    wf::DescribeNamespaceRequest req;
    req.set_namespace_("kept");
    auto out = connection->Call(&wf::WorkflowService::Stub::DescribeNamespace,
                                connection->workflow(), req);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->namespace_info().description(), "survives");
  }
  config.history_shards = 8;
  config.port = 0;
  auto refused = TockServer::Start(config, RealClock());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find('8'), std::string::npos);
  EXPECT_NE(refused.status().message().find('4'), std::string::npos);
}

TEST(GrpcServerTest, BadClusterConfigNamesTheField) {
  std::string yaml = testing::kTwoClusterConfigYaml;
  yaml.replace(yaml.find("initial_failover_version: 1,"), 28, "initial_failover_version: 10,");
  auto parsed = ParseServerConfig(yaml);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto started = TockServer::Start(*parsed, RealClock());
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(started.status().message().find("clusters.a.initial_failover_version"),
            std::string::npos)
      << started.status().message();

  auto typo = ParseServerConfig("listen: {prot: 7233}\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("listen.prot"), std::string::npos);
}

TEST(GrpcServerTest, PortInUseIsUnavailable) {
  auto first = StartOrDie({});
  ServerConfig config;
  config.port = std::stoi(first->address().substr(first->address().rfind(':') + 1));
  auto second = TockServer::Start(config, RealClock());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tock::server

namespace tock::server {
namespace {

TEST(ServerConfigTest, EagerDispatchSwitchesParsedPerNamespace) {
  auto defaults = ParseServerConfig("");
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->eager_dispatch.activities.On("default"));
  EXPECT_TRUE(defaults->eager_dispatch.workflow_start.On("default"));
  auto parsed = ParseServerConfig(
      "history:\n"
      "  eager_activities: false\n"
      "  eager_workflow_start: {default: true, namespaces: {nightly: false}}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->eager_dispatch.activities.On("default"));
  EXPECT_TRUE(parsed->eager_dispatch.workflow_start.On("default"));
  EXPECT_FALSE(parsed->eager_dispatch.workflow_start.On("nightly"));
  for (const auto& [yaml, message] : std::vector<std::pair<std::string, std::string>>{
           {"history: {eager_activities: often}\n",
            "history.eager_activities: must be true, false or a mapping"},
           {"history: {eager_activities: {on: true}}\n",
            "history.eager_activities.on: unknown key; allowed: default, namespaces"},
           {"history: {eager_workflow_start: {namespaces: [a]}}\n",
            "history.eager_workflow_start.namespaces: must be a mapping of namespace names to "
            "true or false"},
       }) {
    auto bad = ParseServerConfig(yaml);
    ASSERT_FALSE(bad.ok()) << yaml;
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << bad.status();
  }
}

TEST(ServerConfigTest, MembershipAndAdvertiseAddressParsedAndValidated) {
  auto good = ParseServerConfig(
      "listen: {advertise_address: \"10.0.0.7:7233\"}\n"
      "membership: {heartbeat: 1s, cutoff: 3s, partition_wait: 0s}\n");
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(good->Validate().ok()) << good->Validate();
  EXPECT_EQ(good->advertise_address, "10.0.0.7:7233");
  EXPECT_EQ(good->membership.heartbeat, absl::Seconds(1));
  EXPECT_EQ(good->membership.cutoff, absl::Seconds(3));
  EXPECT_EQ(good->membership.partition_wait, absl::ZeroDuration());
  auto defaults = ParseServerConfig("");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->membership.heartbeat, absl::Seconds(10));
  EXPECT_EQ(defaults->membership.cutoff, absl::Seconds(20));
  EXPECT_EQ(defaults->membership.partition_wait, absl::Milliseconds(200));

  struct Case {
    std::string yaml;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"membership: {heartbeat: soon}\n",
            "membership.heartbeat: must be a duration such as 10s, 1m or 1m30s"},
           {"membership: {beat: 1s}\n", "membership.beat: unknown key"},
       }) {
    auto parsed = ParseServerConfig(c.yaml);
    ASSERT_FALSE(parsed.ok()) << c.yaml;
    EXPECT_NE(parsed.status().message().find(c.message), std::string::npos) << parsed.status();
  }
  for (const Case& c : std::vector<Case>{
           {"membership: {heartbeat: 10ms}\n",
            "membership.heartbeat: must be between 100ms and 5m; got 10ms"},
           {"membership: {heartbeat: 2s, cutoff: 3s}\n",
            "membership.cutoff: must be at least twice membership.heartbeat (4s) and at most 1h; "
            "got 3s"},
           {"membership: {partition_wait: 2m}\n",
            "membership.partition_wait: must be between 0s and 1m; got 2m"},
           {"listen: {advertise_address: nocolon}\n", "listen.advertise_address: must be HOST:PORT"},
       }) {
    auto parsed = ParseServerConfig(c.yaml);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    absl::Status s = parsed->Validate();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s;
  }
}

TEST(ServerConfigTest, ArchivalSectionParsedAndValidated) {
  auto good = ParseServerConfig(
      "archival:\n"
      "  history:\n"
      "    state: enabled\n"
      "    enable_read: true\n"
      "    provider:\n"
      "      filestore: {file_mode: \"0640\", dir_mode: \"0750\"}\n"
      "      s3store: {region: us-east-1, endpoint: \"http://127.0.0.1:9000\", force_path_style: true}\n"
      "namespace_defaults:\n"
      "  archival:\n"
      "    history: {state: enabled, uri: \"file:///var/tock/archive\"}\n");
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(good->Validate().ok()) << good->Validate();
  EXPECT_TRUE(good->archival.history.ReadEnabled());
  EXPECT_EQ(good->archival.history.providers.file->file_mode, 0640u);
  EXPECT_EQ(good->archival.history.providers.s3->endpoint, "http://127.0.0.1:9000");
  EXPECT_FALSE(good->archival.visibility.Enabled()) << "disabled unless configured";

  struct Case {
    std::string yaml;
    std::string message_part;
  };
  for (const Case& c : std::vector<Case>{
           {"archival: {history: {state: on}}\n", "archival.history.state: invalid archival state \"on\""},
           {"archival: {history: {stat: enabled}}\n", "archival.history.stat: unknown key"},
           {"archival: {history: {state: enabled, provider: {filestore: {file_mode: rw}}}}\n",
            "invalid file mode \"rw\""},
       }) {
    auto parsed = ParseServerConfig(c.yaml);
    ASSERT_FALSE(parsed.ok()) << c.yaml;
    EXPECT_NE(parsed.status().message().find(c.message_part), std::string::npos) << parsed.status();
  }
  for (const Case& c : std::vector<Case>{
           {"archival: {history: {state: enabled, provider: {filestore: {}}}}\n",
            "enabled needs namespace_defaults.archival.history.uri"},
           {"archival: {visibility: {state: enabled}}\n"
            "namespace_defaults: {archival: {visibility: {uri: \"file:///v\"}}}\n",
            "enabled needs a provider"},
           {"archival: {history: {state: disabled, enable_read: true}}\n",
            "with the state not enabled"},
           {"archival: {history: {state: enabled, provider: {filestore: {}}}}\n"
            "namespace_defaults: {archival: {history: {uri: \"s3://b\"}}}\n",
            "unable to find archiver config"},
       }) {
    auto parsed = ParseServerConfig(c.yaml);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    absl::Status s = parsed->Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.yaml;
    EXPECT_NE(s.message().find(c.message_part), std::string::npos) << s;
  }
}

// Hosts of a shared database call each other with a secret that skips authorization: with
// `authorization:` on PostgreSQL the server refuses to start unless tls.internode carries
// it, or the config says the hosts' network is private (review P2-4).
TEST(ServerConfigTest, AuthorizationOnASharedDatabaseNeedsInternodeTls) {
  const std::string postgres =
      "persistence: {engine: postgres, postgres: {url: \"postgresql://tock@db:5432/tock\"}}\n";
  const std::string authz = "authorization: {jwks: /etc/tock/jwks.json}\n";
  auto validate = [](const std::string& yaml) {
    absl::StatusOr<ServerConfig> parsed = ParseServerConfig(yaml);
    return parsed.ok() ? parsed->Validate() : parsed.status();
  };
  const absl::Status refused = validate(postgres + authz);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(),
            "config tls.internode: is required with authorization: on a shared database "
            "(persistence.engine: postgres): the hosts' calls to each other carry a secret that "
            "skips authorization. Add tls.internode (cert_file, key_file, ca_file) and "
            "tls.frontend, or, only where no one else can read the network between the hosts, "
            "authorization.plaintext_host_calls: true");
  // Allowed: said to be private; one host on SQLite; PostgreSQL without authorization.
  EXPECT_TRUE(validate(postgres +
                       "authorization: {jwks: /etc/tock/jwks.json, plaintext_host_calls: true}\n")
                  .ok());
  EXPECT_TRUE(validate(authz).ok());
  EXPECT_TRUE(validate(postgres).ok());
  EXPECT_EQ(
      validate(postgres + "authorization: {jwks: j, plaintext_host_calls: maybe}\n").message(),
      "config authorization.plaintext_host_calls: must be true or false");
  // With tls.internode (and the frontend's TLS, which goes with it).
  TempDir dir;
  tock::testing::TestCertificates certs(dir.file(""));
  ASSERT_TRUE(certs.MakeStandardSet()) << certs.error();
  const std::string tls = "tls:\n  frontend: {cert_file: " + certs.Pem("server") +
                          ", key_file: " + certs.Key("server") + "}\n  internode: {ca_file: " +
                          certs.Pem("ca") + "}\n";
  const absl::Status with_tls = validate(postgres + authz + tls);
  EXPECT_TRUE(with_tls.ok()) << with_tls;
}

// A payload limit at or over the largest request tock-server accepts (4 MiB) could never
// refuse anything with its own message.
TEST(ServerConfigTest, PayloadLimitsStayBelowTheRequestLimit) {
  auto parsed = ParseServerConfig("limits: {blob_size_error: 4194304}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->Validate().message(),
            "config limits.blob_size_error: must be below 4194304 bytes, the largest request "
            "tock-server accepts; got 4194304");
  parsed = ParseServerConfig("limits: {blob_size_error: 3000000, memo_size_error: 3000000}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->Validate().ok()) << parsed->Validate();
}

TEST(ServerConfigTest, ConsoleSectionParsedAndItsCodecEndpointChecked) {
  auto parsed = ParseServerConfig(
      "console: {enabled: false, read_only: true, codec_endpoint: \"https://codec.example:8888/x\"}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->console.enabled);
  EXPECT_TRUE(parsed->console.read_only);
  EXPECT_EQ(parsed->console.codec_endpoint, "https://codec.example:8888/x");
  EXPECT_TRUE(parsed->Validate().ok()) << parsed->Validate();
  EXPECT_TRUE(ParseServerConfig("").value().console.enabled);  // on by default
  for (const char* bad : {"codec.example", "https://codec.example; script-src *",
                          "https://a.example 'unsafe-inline'"}) {
    parsed = ParseServerConfig(absl::StrCat("console: {codec_endpoint: \"", bad, "\"}\n"));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->Validate().message(),
              "config console.codec_endpoint: must be an http:// or https:// URL of at most 2048 "
              "characters, without spaces, quotes, commas or semicolons")
        << bad;
  }
  const auto unknown = ParseServerConfig("console: {theme: dark}\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("console.theme"), std::string::npos) << unknown.status();
}

TEST(ServerConfigTest, ConsolePublicPathAndOwnListenerChecked) {
  const std::string http = "timers: {http: {ip: 127.0.0.1, port: 0}}\n";
  auto parsed = ParseServerConfig(http + "console: {public_path: /ops/tock/, port: 8233, ip: 127.0.0.2}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->console.public_path, "/ops/tock");  // the trailing '/' dropped
  EXPECT_EQ(parsed->console.port, 8233);
  EXPECT_EQ(parsed->console.ip, "127.0.0.2");
  EXPECT_TRUE(parsed->Validate().ok()) << parsed->Validate();
  EXPECT_EQ(ParseServerConfig("console: {public_path: /}\n").value().console.public_path, "");
  for (const char* bad : {"tock", "/a b", "/../x", "/a//b", "/.hidden", "/x?y=1"}) {
    parsed = ParseServerConfig(absl::StrCat(http, "console: {public_path: \"", bad, "\"}\n"));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->Validate().message(),
              "config console.public_path: must be a path such as /tock or /ops/tock: at most 200 "
              "characters, starting with '/', of letters, digits, '-', '_', '.', '~' and '/', no "
              "segment starting with '.', no trailing '/'")
        << bad;
  }
  parsed = ParseServerConfig("console: {port: 8233}\n");
  EXPECT_EQ(parsed->Validate().message(),
            "config console.port: needs the HTTP port (--http-port, timers.http), whose API the "
            "console serves beside it");
  parsed = ParseServerConfig(http + "console: {port: 8233, enabled: false}\n");
  EXPECT_EQ(parsed->Validate().message(),
            "config console.port: is set but the console is off (console.enabled: false, --headless)");
  parsed = ParseServerConfig(http + "console: {port: 70000}\n");
  EXPECT_EQ(parsed->Validate().message(), "config console.port: must be between 0 and 65535; got 70000");
}

}  // namespace
}  // namespace tock::server
