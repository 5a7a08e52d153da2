#include "server-core/security/authz_rules.h"

#include <unordered_map>

namespace tock::server::security {
namespace {

// How each method is reached, per service: the scope and the role of every method by name.
struct Access {
  Scope scope;
  Role role;
};
constexpr Access kOpen{Scope::kOpen, Role::kNone};
constexpr Access kRead{Scope::kNamespace, Role::kRead};
constexpr Access kWorker{Scope::kNamespace, Role::kWorker};
constexpr Access kWrite{Scope::kNamespace, Role::kWrite};
constexpr Access kAdmin{Scope::kNamespace, Role::kAdmin};
constexpr Access kSystemRead{Scope::kCluster, Role::kRead};
constexpr Access kSystemAdmin{Scope::kCluster, Role::kAdmin};

struct Service {
  const char* name;
  std::vector<std::pair<const char*, Access>> methods;
};

// Temporal's metadata (common/api/metadata.go) gives each WorkflowService method a scope and
// an access level; the same here, the worker calls apart.
const std::vector<Service>& Services() {
  static const auto* services = new std::vector<Service>{
      {"temporal.api.workflowservice.v1.WorkflowService",
       {
           // Namespaces. Registering one needs admin on that namespace (as in Temporal);
           // listing them all is cluster-wide.
           {"RegisterNamespace", kAdmin},
           {"DescribeNamespace", kRead},
           {"ListNamespaces", kSystemRead},
           {"UpdateNamespace", kAdmin},
           {"DeprecateNamespace", kAdmin},
           // Workflows: started, signalled, cancelled, reset, updated by clients.
           {"StartWorkflowExecution", kWrite},
           {"ExecuteMultiOperation", kWrite},
           {"SignalWorkflowExecution", kWrite},
           {"SignalWithStartWorkflowExecution", kWrite},
           {"RequestCancelWorkflowExecution", kWrite},
           {"TerminateWorkflowExecution", kWrite},
           {"ResetWorkflowExecution", kWrite},
           {"DeleteWorkflowExecution", kWrite},
           {"UpdateWorkflowExecution", kWrite},
           {"UpdateWorkflowExecutionOptions", kWrite},
           {"PauseWorkflowExecution", kWrite},
           {"UnpauseWorkflowExecution", kWrite},
           {"UpdateActivityOptions", kWrite},
           {"PauseActivity", kWrite},
           {"UnpauseActivity", kWrite},
           {"ResetActivity", kWrite},
           {"StartBatchOperation", kWrite},
           {"StopBatchOperation", kWrite},
           {"CreateSchedule", kWrite},
           {"UpdateSchedule", kWrite},
           {"PatchSchedule", kWrite},
           {"DeleteSchedule", kWrite},
           {"UpdateWorkerBuildIdCompatibility", kWrite},
           {"UpdateWorkerVersioningRules", kWrite},
           {"SetCurrentDeployment", kWrite},
           {"SetWorkerDeploymentCurrentVersion", kWrite},
           {"SetWorkerDeploymentRampingVersion", kWrite},
           {"SetWorkerDeploymentManager", kWrite},
           {"CreateWorkerDeployment", kWrite},
           {"CreateWorkerDeploymentVersion", kWrite},
           {"DeleteWorkerDeployment", kWrite},
           {"DeleteWorkerDeploymentVersion", kWrite},
           {"UpdateWorkerDeploymentVersionComputeConfig", kWrite},
           {"UpdateWorkerDeploymentVersionMetadata", kWrite},
           {"CreateWorkflowRule", kWrite},
           {"DeleteWorkflowRule", kWrite},
           {"TriggerWorkflowRule", kWrite},
           {"UpdateTaskQueueConfig", kWrite},
           {"UpdateWorkerConfig", kWrite},
           {"StartActivityExecution", kWrite},
           {"StartNexusOperationExecution", kWrite},
           {"RequestCancelActivityExecution", kWrite},
           {"RequestCancelNexusOperationExecution", kWrite},
           {"TerminateActivityExecution", kWrite},
           {"TerminateNexusOperationExecution", kWrite},
           {"DeleteActivityExecution", kWrite},
           {"DeleteNexusOperationExecution", kWrite},
           {"PauseActivityExecution", kWrite},
           {"UnpauseActivityExecution", kWrite},
           {"ResetActivityExecution", kWrite},
           {"UpdateActivityExecutionOptions", kWrite},
           // Worker calls: polls, task answers, heartbeats (Temporal: write).
           {"PollWorkflowTaskQueue", kWorker},
           {"RespondWorkflowTaskCompleted", kWorker},
           {"RespondWorkflowTaskFailed", kWorker},
           {"PollActivityTaskQueue", kWorker},
           {"RecordActivityTaskHeartbeat", kWorker},
           {"RecordActivityTaskHeartbeatById", kWorker},
           {"RespondActivityTaskCompleted", kWorker},
           {"RespondActivityTaskCompletedById", kWorker},
           {"RespondActivityTaskFailed", kWorker},
           {"RespondActivityTaskFailedById", kWorker},
           {"RespondActivityTaskCanceled", kWorker},
           {"RespondActivityTaskCanceledById", kWorker},
           {"RespondQueryTaskCompleted", kWorker},
           {"ResetStickyTaskQueue", kWorker},
           {"ShutdownWorker", kWorker},
           {"PollNexusTaskQueue", kWorker},
           {"RespondNexusTaskCompleted", kWorker},
           {"RespondNexusTaskFailed", kWorker},
           {"RecordWorkerHeartbeat", kWorker},
           // Reads.
           {"GetWorkflowExecutionHistory", kRead},
           {"GetWorkflowExecutionHistoryReverse", kRead},
           {"ListOpenWorkflowExecutions", kRead},
           {"ListClosedWorkflowExecutions", kRead},
           {"ListWorkflowExecutions", kRead},
           {"ListArchivedWorkflowExecutions", kRead},
           {"ScanWorkflowExecutions", kRead},
           {"CountWorkflowExecutions", kRead},
           {"QueryWorkflow", kRead},
           {"DescribeWorkflowExecution", kRead},
           {"DescribeTaskQueue", kRead},
           {"ListTaskQueuePartitions", kRead},
           {"DescribeSchedule", kRead},
           {"ListScheduleMatchingTimes", kRead},
           {"ListSchedules", kRead},
           {"CountSchedules", kRead},
           {"GetWorkerBuildIdCompatibility", kRead},
           {"GetWorkerVersioningRules", kRead},
           {"GetWorkerTaskReachability", kRead},
           {"DescribeDeployment", kRead},
           {"DescribeWorkerDeploymentVersion", kRead},
           {"DescribeWorkerDeployment", kRead},
           {"ListDeployments", kRead},
           {"GetDeploymentReachability", kRead},
           {"GetCurrentDeployment", kRead},
           {"ListWorkerDeployments", kRead},
           {"ValidateWorkerDeploymentVersionComputeConfig", kRead},
           {"PollWorkflowExecutionUpdate", kRead},
           {"PollWorkflowExecutionTimeSkipping", kRead},
           {"DescribeBatchOperation", kRead},
           {"ListBatchOperations", kRead},
           {"DescribeWorkflowRule", kRead},
           {"ListWorkflowRules", kRead},
           {"ListWorkers", kRead},
           {"CountWorkers", kRead},
           {"DescribeWorker", kRead},
           {"FetchWorkerConfig", kRead},
           {"DescribeActivityExecution", kRead},
           {"DescribeNexusOperationExecution", kRead},
           {"PollActivityExecution", kRead},
           {"PollNexusOperationExecution", kRead},
           {"ListActivityExecutions", kRead},
           {"ListNexusOperationExecutions", kRead},
           {"CountActivityExecutions", kRead},
           {"CountNexusOperationExecutions", kRead},
           // Cluster-wide reads.
           {"GetSearchAttributes", kSystemRead},
           {"GetClusterInfo", kSystemRead},
           // The SDKs' first call, before any namespace (Temporal: a health check).
           {"GetSystemInfo", kOpen},
       }},
      {"temporal.api.operatorservice.v1.OperatorService",
       {
           {"AddSearchAttributes", kAdmin},
           {"RemoveSearchAttributes", kAdmin},
           {"ListSearchAttributes", kRead},
           {"DeleteNamespace", kAdmin},
           {"AddOrUpdateRemoteCluster", kSystemAdmin},
           {"RemoveRemoteCluster", kSystemAdmin},
           {"ListClusters", kSystemAdmin},
           {"GetNexusEndpoint", kSystemAdmin},
           {"CreateNexusEndpoint", kSystemAdmin},
           {"UpdateNexusEndpoint", kSystemAdmin},
           {"DeleteNexusEndpoint", kSystemAdmin},
           {"ListNexusEndpoints", kSystemAdmin},
       }},
      // Tock's own administration: like Temporal's AdminService, all of it cluster admin
      // (time skipping, archival triggers, shards, replication and its DLQs).
      {"tock.admin.v1.AdminService",
       {
           {"DescribeCluster", kSystemAdmin},
           {"WhoAmI", kOpen},  // it reads the caller itself (security/whoami.h)
           {"GetNamespaceHistory", kSystemAdmin},
           {"DescribeNamespaceAsOf", kSystemAdmin},
           {"AdvanceTime", kSystemAdmin},
           {"TriggerArchival", kSystemAdmin},
           {"GetArchivalStatus", kSystemAdmin},
           {"ListClusterMembers", kSystemAdmin},
           {"ListShards", kSystemAdmin},
           {"DescribeMutableState", kSystemAdmin},
           {"GetNamespaceReplicationMessages", kSystemAdmin},
           {"GetReplicationMessages", kSystemAdmin},
           {"GetWorkflowExecutionRawHistory", kSystemAdmin},
           {"ReapplyEvents", kSystemAdmin},
           {"GetReplicationStatus", kSystemAdmin},
           {"GetDLQMessages", kSystemAdmin},
           {"PurgeDLQMessages", kSystemAdmin},
           {"MergeDLQMessages", kSystemAdmin},
           {"GetDLQReplicationMessages", kSystemAdmin},
       }},
      // Calls between hosts sharing a database (routing/host_service.h): never a client's.
      {"tock.cluster.v1.HostService",
       {
           {"AddTask", kSystemAdmin},
           {"History", kSystemAdmin},
       }},
      // Timers (issue 14) belong to a namespace.
      {"tock.timer.v1.TimerService",
       {
           {"CreateTimer", kWrite},
           {"UpdateTimer", kWrite},
           {"DeleteTimer", kWrite},
           {"GetTimer", kRead},
           {"ListTimers", kRead},
       }},
      {"grpc.health.v1.Health",
       {
           {"Check", kOpen},
           {"Watch", kOpen},
       }},
  };
  return *services;
}

struct Table {
  std::vector<MethodRule> rules;
  std::unordered_map<std::string, size_t> by_method;
};

const Table& TheTable() {
  static const auto* table = [] {
    auto* t = new Table();
    for (const Service& service : Services()) {
      for (const auto& [name, access] : service.methods) {
        std::string method = std::string(service.name) + "/" + name;
        t->by_method.emplace(method, t->rules.size());
        t->rules.push_back({std::move(method), access.scope, access.role});
      }
    }
    return t;
  }();
  return *table;
}

}  // namespace

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kRead:
      return "read";
    case Role::kWorker:
      return "worker";
    case Role::kWrite:
      return "write";
    case Role::kAdmin:
      return "admin";
    case Role::kNone:
      break;
  }
  return "none";
}

std::optional<MethodRule> RuleFor(absl::string_view method) {
  const Table& table = TheTable();
  auto it = table.by_method.find(std::string(method));
  if (it == table.by_method.end()) return std::nullopt;
  return table.rules[it->second];
}

const std::vector<MethodRule>& AllRules() { return TheTable().rules; }

absl::string_view ShortMethodName(absl::string_view method) {
  const size_t slash = method.rfind('/');
  return slash == absl::string_view::npos ? method : method.substr(slash + 1);
}

}  // namespace tock::server::security
