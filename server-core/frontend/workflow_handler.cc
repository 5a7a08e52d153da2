#include "lib/common/version.h"
#include "server-core/frontend/handlers.h"

namespace tock::server::frontend {
namespace {

constexpr char kService[] = "temporal.api.workflowservice.v1.WorkflowService/";

std::string Method(const char* name) { return std::string(kService) + name; }

wf::GetSystemInfoResponse SystemInfo() {
  wf::GetSystemInfoResponse out;
  out.set_server_version(kTockVersion);
  // Every field, each true exactly when Tock does what it names (SDKs change what they send
  // and how they retry by them). Next to each, the test of the behaviour; the whole set is
  // pinned by grpc_server_test.cc GrpcServerTest.CapabilitiesSayExactlyWhatTockDoes, and
  // what the false ones name is checked absent by FalseCapabilitiesNameWhatTockDoesNotServe.
  auto* caps = out.mutable_capabilities();
  // Signal headers reach the event, query headers the worker: history_engine_test.cc
  // CapabilityFixture.SignalAndQueryHeadersReachTheWorkflow.
  caps->set_signal_and_query_header(true);
  // INTERNAL only for what a retry cannot mend; a busy, full or unreachable database and a
  // shard on the move are UNAVAILABLE: sqlite_in_memory_test.cc
  // SqliteInMemoryTest.AFullDatabaseSaysSoAndKeepsWhatItHad, history_engine_test.cc
  // EngineFixture.AWriteToAShardTakenByAnotherHostIsRetryableAndGivesTheShardUp,
  // postgres_backend_test.cc PostgresRecovery.
  caps->set_internal_error_differentiation(true);
  // RespondActivityTaskFailed.last_heartbeat_details reach the next attempt:
  // CapabilityFixture.AFailedAttemptsHeartbeatDetailsReachTheNextAttempt.
  caps->set_activity_failure_include_heartbeat(true);
  // Schedules: schedule_runner_test.cc, tests/cli/schedule_cli_test.cc,
  // tests/sdk/schedules.test.mjs.
  caps->set_supports_schedules(true);
  // Failures (encoded_attributes included) are stored and passed on unchanged:
  // CapabilityFixture.EncodedFailureAttributesArePassedOnUnchanged.
  caps->set_encoded_failure_attributes(true);
  // No worker-versioning by build id (its RPCs answer PERMISSION_DENIED / UNIMPLEMENTED).
  caps->set_build_id_based_versioning(false);
  // ModifyWorkflowProperties upserts the memo: CapabilityFixture.AWorkflowUpsertsItsMemo.
  caps->set_upsert_memo(true);
  // StartWorkflowExecution hands the first workflow task back when asked (unless the
  // namespace is configured not to): tests/sdk/eager.test.mjs.
  caps->set_eager_workflow_start(true);
  // WorkflowTaskCompleted keeps the SDK's metadata (its replay flags):
  // CapabilityFixture.TheSdkMetadataOfACompletionIsRecorded,
  // tests/sdk/worker-connection.test.mjs.
  caps->set_sdk_metadata(true);
  // CountWorkflowExecutions "... GROUP BY ExecutionStatus": tests/sdk/search-attributes.test.mjs
  // ("attributes set at start and upserted are found by list and count queries"),
  // postgres_backend_test.cc.
  caps->set_count_group_by_execution_status(true);
  // No Nexus (PollNexusTaskQueue and the endpoint registry are not served).
  caps->set_nexus(false);
  caps->set_server_scaled_deployments(false);
  caps->set_server_scaled_provider_cloud_run(false);
  return out;
}

}  // namespace

void RegisterWorkflowServiceHandlers(rpc::Dispatcher& dispatcher,
                                     namespaces::NamespaceEngine& namespaces,
                                     const ServerFacts& facts) {
  dispatcher.AddUnary<wf::GetSystemInfoRequest, wf::GetSystemInfoResponse>(
      Method("GetSystemInfo"),
      [](const wf::GetSystemInfoRequest&, const rpc::CallContext&) { return SystemInfo(); });

  dispatcher.AddUnary<wf::GetClusterInfoRequest, wf::GetClusterInfoResponse>(
      Method("GetClusterInfo"),
      [&namespaces, &facts](const wf::GetClusterInfoRequest&, const rpc::CallContext&) {
        const std::shared_ptr<const admin::ClusterMetadata> snapshot = namespaces.cluster();
        const admin::ClusterMetadata& cluster = *snapshot;
        wf::GetClusterInfoResponse out;
        out.set_server_version(kTockVersion);
        out.set_cluster_id(facts.cluster_id);
        out.set_cluster_name(cluster.current_cluster_name);
        out.set_history_shard_count(facts.history_shard_count);
        out.set_persistence_store(facts.persistence_engine);
        out.set_visibility_store(facts.persistence_engine);
        out.set_initial_failover_version(
            cluster.clusters.at(cluster.current_cluster_name).initial_failover_version);
        out.set_failover_version_increment(cluster.failover_version_increment);
        (*out.mutable_supported_clients())["temporal-typescript"] = ">=1.0.0";
        (*out.mutable_supported_clients())["tock"] = ">=0.1.0";
        return absl::StatusOr<wf::GetClusterInfoResponse>(out);
      });

  dispatcher.AddUnary<wf::RegisterNamespaceRequest, wf::RegisterNamespaceResponse>(
      Method("RegisterNamespace"),
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Register(req); });
  dispatcher.AddUnary<wf::DescribeNamespaceRequest, wf::DescribeNamespaceResponse>(
      Method("DescribeNamespace"),
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Describe(req); });
  dispatcher.AddUnary<wf::ListNamespacesRequest, wf::ListNamespacesResponse>(
      Method("ListNamespaces"),
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.List(req); });
  dispatcher.AddUnary<wf::UpdateNamespaceRequest, wf::UpdateNamespaceResponse>(
      Method("UpdateNamespace"),
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Update(req); });
  dispatcher.AddUnary<wf::DeprecateNamespaceRequest, wf::DeprecateNamespaceResponse>(
      Method("DeprecateNamespace"),
      [&namespaces](const auto& req, const rpc::CallContext&) { return namespaces.Deprecate(req); });
}

}  // namespace tock::server::frontend
