// A global namespace active in another cluster (reference/replication.md §4.1, §4.3): the
// whole server over gRPC as cluster b of clusters {a, b}, with a namespace failed over to a.
// Every namespaced WorkflowService method this server answers is classified: writes are
// refused with NamespaceNotActive, reads are served. A method added later that is not in the
// table fails the test, so each new RPC has to choose.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/text_format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "lib/client/connection.h"
#include "lib/common/grpc_status.h"
#include "lib/common/status.h"
#include "server-core/server.h"
#include "temporal/api/errordetails/v1/message.pb.h"
#include "temporal/api/operatorservice/v1/request_response.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server {
namespace {

namespace pb = google::protobuf;
namespace wf = temporal::api::workflowservice::v1;
constexpr char kService[] = "temporal.api.workflowservice.v1.WorkflowService";
constexpr char kNamespace[] = "standby-ns";

enum class Access { kRead, kWrite };

struct Method {
  Access access;
  // Request fields besides the namespace (text format): enough to pass the checks that come
  // before the namespace's.
  const char* request = "";
};

// The classification under test.
const std::map<std::string, Method>& Classification() {
  static const auto* table = new std::map<std::string, Method>{
      // Runs: starting and changing them.
      {"StartWorkflowExecution", {Access::kWrite}},
      {"SignalWithStartWorkflowExecution", {Access::kWrite}},
      {"SignalWorkflowExecution", {Access::kWrite}},
      {"RequestCancelWorkflowExecution", {Access::kWrite}},
      {"TerminateWorkflowExecution", {Access::kWrite}},
      {"ResetWorkflowExecution", {Access::kWrite}},
      {"DeleteWorkflowExecution", {Access::kWrite}},
      {"UpdateWorkflowExecution", {Access::kWrite}},
      {"ExecuteMultiOperation", {Access::kWrite}},
      // The worker's answers (a query's answer excepted: standbys answer queries).
      {"RespondWorkflowTaskCompleted", {Access::kWrite}},
      {"RespondWorkflowTaskFailed", {Access::kWrite}},
      {"RespondActivityTaskCompleted", {Access::kWrite}},
      {"RespondActivityTaskFailed", {Access::kWrite}},
      {"RespondActivityTaskCanceled", {Access::kWrite}},
      {"RecordActivityTaskHeartbeat", {Access::kWrite}},
      {"RespondActivityTaskCompletedById", {Access::kWrite}},
      {"RespondActivityTaskFailedById", {Access::kWrite}},
      {"RespondActivityTaskCanceledById", {Access::kWrite}},
      {"RecordActivityTaskHeartbeatById", {Access::kWrite}},
      // Schedules and batches that change something.
      {"CreateSchedule", {Access::kWrite, R"(schedule_id: "s" request_id: "r")"}},
      {"UpdateSchedule", {Access::kWrite, R"(schedule_id: "s")"}},
      {"PatchSchedule", {Access::kWrite, R"(schedule_id: "s" patch { pause: "p" })"}},
      {"DeleteSchedule", {Access::kWrite, R"(schedule_id: "s")"}},
      {"StartBatchOperation",
       {Access::kWrite,
        R"(job_id: "j" reason: "r" visibility_query: "WorkflowType='x'" termination_operation {})"}},
      {"StopBatchOperation", {Access::kWrite, R"(job_id: "j" reason: "r")"}},
      // Reads, served (possibly stale) by a standby.
      {"DescribeWorkflowExecution", {Access::kRead}},
      {"GetWorkflowExecutionHistory", {Access::kRead}},
      {"GetWorkflowExecutionHistoryReverse", {Access::kRead}},
      {"QueryWorkflow", {Access::kRead}},
      {"PollWorkflowExecutionUpdate", {Access::kRead}},
      {"ListWorkflowExecutions", {Access::kRead}},
      {"ListOpenWorkflowExecutions", {Access::kRead}},
      {"ListClosedWorkflowExecutions", {Access::kRead}},
      {"ListArchivedWorkflowExecutions", {Access::kRead}},
      {"CountWorkflowExecutions", {Access::kRead}},
      {"DescribeTaskQueue", {Access::kRead, R"(task_queue { name: "q" })"}},
      {"DescribeSchedule", {Access::kRead, R"(schedule_id: "s")"}},
      {"ListSchedules", {Access::kRead}},
      {"ListScheduleMatchingTimes", {Access::kRead, R"(schedule_id: "s")"}},
      {"DescribeBatchOperation", {Access::kRead, R"(job_id: "j")"}},
      {"ListBatchOperations", {Access::kRead}},
      // The worker: polls get query tasks only, a query's answer is accepted.
      {"PollWorkflowTaskQueue", {Access::kRead, R"(task_queue { name: "q" })"}},
      {"PollActivityTaskQueue", {Access::kRead, R"(task_queue { name: "q" })"}},
      {"RespondQueryTaskCompleted", {Access::kRead}},
      {"ShutdownWorker", {Access::kRead}},
      {"ResetStickyTaskQueue", {Access::kRead}},
      {"ListTaskQueuePartitions", {Access::kRead, R"(task_queue { name: "q" })"}},
      // Nexus handlers poll and answer wherever they run.
      {"PollNexusTaskQueue", {Access::kRead, R"(task_queue { name: "q" })"}},
      {"RespondNexusTaskCompleted", {Access::kRead}},
      {"RespondNexusTaskFailed", {Access::kRead}},
      // Workers' heartbeats: kept and read wherever the workers are.
      {"RecordWorkerHeartbeat", {Access::kRead}},
      {"ListWorkers", {Access::kRead}},
      {"CountWorkers", {Access::kRead}},
      {"DescribeWorker", {Access::kRead, R"(worker_instance_key: "k")"}},
      // Worker Deployments: the routing is the active cluster's to change.
      {"DescribeWorkerDeployment", {Access::kRead}},
      {"ListWorkerDeployments", {Access::kRead}},
      {"DescribeWorkerDeploymentVersion", {Access::kRead}},
      {"SetWorkerDeploymentCurrentVersion", {Access::kWrite}},
      {"SetWorkerDeploymentRampingVersion", {Access::kWrite}},
      {"DeleteWorkerDeploymentVersion", {Access::kWrite}},
      {"DeleteWorkerDeployment", {Access::kWrite}},
      {"UpdateWorkerDeploymentVersionMetadata", {Access::kWrite}},
      {"SetWorkerDeploymentManager", {Access::kWrite}},
      {"CreateWorkerDeployment", {Access::kWrite}},
      {"CreateWorkerDeploymentVersion", {Access::kWrite}},
      // Legacy build-id versioning: refused as Temporal's server refuses it with the
      // calls off (PERMISSION_DENIED), before anything about the namespace matters.
      {"UpdateWorkerBuildIdCompatibility", {Access::kRead}},
      {"GetWorkerBuildIdCompatibility", {Access::kRead}},
      {"UpdateWorkerVersioningRules", {Access::kRead}},
      {"GetWorkerVersioningRules", {Access::kRead}},
      {"GetWorkerTaskReachability", {Access::kRead}},
  };
  return *table;
}

// Namespace calls themselves (any cluster may describe or update a global namespace).
const std::set<std::string> kNamespaceCalls = {"RegisterNamespace", "DescribeNamespace",
                                               "UpdateNamespace", "DeprecateNamespace",
                                               "ListNamespaces"};

class StandbyNamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerConfig config;
    config.port = 0;
    admin::ClusterMetadata m;
    m.current_cluster_name = "b";
    m.master_cluster_name = "b";
    m.enable_global_namespace = true;
    m.failover_version_increment = 10;
    m.clusters["a"] = {true, 1, "127.0.0.1:1"};  // never called: nothing forwards here
    m.clusters["b"] = {true, 2, "127.0.0.1:0"};
    config.cluster_metadata = m;
    auto started = TockServer::Start(config, RealClock());
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = std::move(*started);
    client::ConnectionOptions options;
    options.address = server_->address();
    auto connection = client::Connection::Open(options);
    ASSERT_TRUE(connection.ok()) << connection.status();
    connection_ = std::move(*connection);

    // Registered active here, then failed over to a: b is now its standby.
    wf::RegisterNamespaceRequest reg;
    reg.set_namespace_(kNamespace);
    reg.set_is_global_namespace(true);
    reg.add_clusters()->set_cluster_name("a");
    reg.add_clusters()->set_cluster_name("b");
    reg.set_active_cluster_name("b");
    reg.mutable_workflow_execution_retention_period()->set_seconds(86400);
    ASSERT_TRUE(
        connection_
            ->Call(&wf::WorkflowService::Stub::RegisterNamespace, connection_->workflow(), reg)
            .ok());
    wf::UpdateNamespaceRequest failover;
    failover.set_namespace_(kNamespace);
    failover.mutable_replication_config()->set_active_cluster_name("a");
    auto updated = connection_->Call(&wf::WorkflowService::Stub::UpdateNamespace,
                                     connection_->workflow(), failover);
    ASSERT_TRUE(updated.ok()) << updated.status();
    channel_ = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
  }

  // Calls `method` with `request`'s bytes; the answer's status (details included).
  absl::Status Call(const std::string& method, const pb::Message& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
    std::string bytes = request.SerializeAsString();
    grpc::Slice slice(bytes);
    grpc::ByteBuffer in(&slice, 1), out;
    grpc::GenericStub stub(channel_);
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, absl::StrCat("/", kService, "/", method), grpc::StubOptions(), &in,
                   &out, [&done](grpc::Status s) { done.set_value(s); });
    return FromGrpcStatus(done.get_future().get());
  }

  std::unique_ptr<TockServer> server_;
  std::unique_ptr<client::Connection> connection_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(StandbyNamespaceTest, WritesAreRefusedReadsAreServed) {
  const std::string not_active =
      absl::StrCat("Namespace: ", kNamespace,
                   " is active in cluster: a, while current cluster b is a standby "
                   "cluster.");
  // Every WorkflowService method is named after its request (the service's descriptor is
  // not linked in).
  const pb::FileDescriptor* file = wf::StartWorkflowExecutionRequest::descriptor()->file();
  std::set<std::string> seen;
  for (int i = 0; i < file->message_type_count(); ++i) {
    const pb::Descriptor* input = file->message_type(i);
    if (!input->name().ends_with("Request")) continue;
    const std::string name = input->name().substr(0, input->name().size() - 7);
    const pb::FieldDescriptor* field = input->FindFieldByName("namespace");
    if (field == nullptr || kNamespaceCalls.contains(name)) continue;
    std::unique_ptr<pb::Message> request(
        pb::MessageFactory::generated_factory()->GetPrototype(input)->New());
    auto entry = Classification().find(name);
    if (entry != Classification().end()) {
      ASSERT_TRUE(pb::TextFormat::ParseFromString(entry->second.request, request.get())) << name;
    }
    request->GetReflection()->SetString(request.get(), field, kNamespace);
    absl::Status answer = Call(name, *request);
    if (answer.code() == absl::StatusCode::kUnimplemented) {
      // Not built: nothing to classify (yet).
      EXPECT_EQ(entry, Classification().end()) << name << " is classified but unimplemented";
      continue;
    }
    ASSERT_NE(entry, Classification().end())
        << name << " names a namespace and is answered, but is not classified read or write: "
        << "add it to the table (and pass NamespaceAccess to Resolve)";
    seen.insert(name);
    if (entry->second.access == Access::kWrite) {
      EXPECT_EQ(answer.code(), absl::StatusCode::kFailedPrecondition) << name << ": " << answer;
      EXPECT_EQ(answer.message(), not_active) << name;
      auto detail = GetDetail<temporal::api::errordetails::v1::NamespaceNotActiveFailure>(answer);
      ASSERT_TRUE(detail.has_value()) << name;
      EXPECT_EQ(detail->namespace_(), kNamespace) << name;
      EXPECT_EQ(detail->current_cluster(), "b") << name;
      EXPECT_EQ(detail->active_cluster(), "a") << name;
    } else {
      EXPECT_NE(answer.message(), not_active) << name << " is a read: served on a standby";
      EXPECT_NE(answer.code(), absl::StatusCode::kFailedPrecondition) << name << ": " << answer;
    }
  }
  for (const auto& [name, method] : Classification()) {
    EXPECT_TRUE(seen.contains(name)) << name << " is classified but was not called";
  }
}

TEST_F(StandbyNamespaceTest, ReadsOfUnknownRunsAnswerNotFound) {
  wf::DescribeWorkflowExecutionRequest describe;
  describe.set_namespace_(kNamespace);
  describe.mutable_execution()->set_workflow_id("nope");
  EXPECT_EQ(Call("DescribeWorkflowExecution", describe).code(), absl::StatusCode::kNotFound);
  wf::GetWorkflowExecutionHistoryRequest history;
  history.set_namespace_(kNamespace);
  history.mutable_execution()->set_workflow_id("nope");
  EXPECT_EQ(Call("GetWorkflowExecutionHistory", history).code(), absl::StatusCode::kNotFound);
}

// Tock's AdminService.DescribeMutableState is a read too: a standby describes its copy.
TEST_F(StandbyNamespaceTest, DescribeMutableStateIsServedOnAStandby) {
  tock::admin::v1::DescribeMutableStateRequest req;
  req.set_namespace_(kNamespace);
  req.set_workflow_id("nope");
  auto out = connection_->Call(&tock::admin::v1::AdminService::Stub::DescribeMutableState,
                               connection_->admin(), req);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound) << out.status();
  EXPECT_EQ(out.status().message(), "Workflow execution not found. WorkflowId: nope, RunId: .");
}

TEST_F(StandbyNamespaceTest, LocalNamespacesAreNeverStandby) {
  wf::StartWorkflowExecutionRequest start;
  start.set_namespace_("default");
  start.set_workflow_id("w");
  start.mutable_workflow_type()->set_name("T");
  start.mutable_task_queue()->set_name("q");
  start.set_request_id("r");
  EXPECT_TRUE(Call("StartWorkflowExecution", start).ok());
}

TEST_F(StandbyNamespaceTest, DeleteNamespaceOnThePassiveSideIsRefused) {
  temporal::api::operatorservice::v1::DeleteNamespaceRequest req;
  req.set_namespace_(kNamespace);
  auto out =
      connection_->Call(&temporal::api::operatorservice::v1::OperatorService::Stub::DeleteNamespace,
                        connection_->operator_service(), req);
  ASSERT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition) << out.status();
  EXPECT_EQ(out.status().message(),
            absl::StrCat("namespace ", kNamespace,
                         " is passive in current cluster b: remove cluster b from cluster list or "
                         "make namespace active in this cluster and retry"));
}

}  // namespace
}  // namespace tock::server
