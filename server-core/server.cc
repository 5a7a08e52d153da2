#include "server-core/server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/common/duration.h"
#include "lib/common/ids.h"
#include "lib/common/message_size.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "lib/common/timer_thread.h"
#include "server-core/archiver/archive_registry.h"
#include "server-core/frontend/archived_reads.h"
#include "server-core/frontend/batch_operations.h"
#include "server-core/frontend/dc_redirection.h"
#include "server-core/deployments/deployment_registry.h"
#include "server-core/frontend/handlers.h"
#include "server-core/frontend/handover_gate.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/shard_controller.h"
#include "server-core/http/http_server.h"
#include "server-core/console/console_routes.h"
#include "server-core/security/whoami.h"
#include "server-core/http_api/temporal_http_api.h"
#include "server-core/matching/matching_engine.h"
#include "server-core/matching/worker_registry.h"
#include "server-core/membership/monitor.h"
#include "server-core/membership/ring_applier.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/observability/server_metrics.h"
#include "server-core/persistence/observed/observed_persistence.h"
#include "server-core/persistence/persistence.h"
#include "server-core/replication/cluster_registry.h"
#include "server-core/replication/dlq_merge_router.h"
#include "server-core/replication/history_replicator.h"
#include "server-core/replication/namespace_activity.h"
#include "server-core/replication/namespace_replicator.h"
#include "server-core/replication/reapply_events.h"
#include "server-core/replication/remote_frontends.h"
#include "server-core/replication/replication_handlers.h"
#include "server-core/routing/call_router.h"
#include "server-core/routing/host_service.h"
#include "server-core/routing/peer_credential.h"
#include "server-core/routing/queue_partitions.h"
#include "server-core/routing/routed_history.h"
#include "server-core/rpc/acceptor.h"
#include "server-core/rpc/dialer.h"
#include "server-core/rpc/dispatcher.h"
#include "server-core/rpc/tls_credentials.h"
#include "server-core/scheduler/schedules.h"
#include "server-core/security/authz_interceptor.h"
#include "server-core/security/rate_limit_interceptor.h"
#include "server-core/timers/http_api.h"
#include "server-core/timers/lazy_callback_sender.h"
#include "server-core/timers/timer_engine.h"
#include "server-core/timers/timer_handlers.h"
#include "server-core/timers/timer_service.h"
#include "server-core/worker/archiver.h"
#include "server-core/worker/retention_scanner.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::server {
namespace {

namespaces::ArchivalPolicy PolicyOf(const ArchivalKindConfig& kind) {
  namespaces::ArchivalPolicy policy;
  policy.cluster_enabled = kind.Enabled();
  policy.default_state = kind.default_state == "enabled"
                             ? temporal::api::enums::v1::ARCHIVAL_STATE_ENABLED
                             : temporal::api::enums::v1::ARCHIVAL_STATE_DISABLED;
  policy.default_uri = kind.default_uri;
  policy.schemes = kind.Schemes();
  return policy;
}

namespaces::NamespaceArchivalPolicy ArchivalPolicyOf(const ArchivalConfig& config) {
  return {PolicyOf(config.history), PolicyOf(config.visibility)};
}

archiver::ArchivalKindSetup SetupOf(const ArchivalKindConfig& kind) {
  archiver::ArchivalKindSetup setup;
  setup.enabled = kind.Enabled();
  setup.read_enabled = kind.ReadEnabled();
  setup.providers = kind.providers;
  return setup;
}

class TockServerImpl : public TockServer {
 public:
  TockServerImpl(ServerConfig config, const Env& env)
      : config_(std::move(config)),
        logger_(env.logger),
        metrics_(&env.metrics),
        clock_(env.clock) {}

  // The steps of a start, in the order the parts depend on one another: the port is bound
  // before the shards are owned (under this host's address), every handler is registered
  // before the wrappers around them, and connections are accepted only once gRPC serves and
  // the first ring's shards are owned.
  absl::Status Init() {
    if (absl::Status s = config_.Validate(); !s.ok()) return s;
    InitObservability();
    if (absl::Status s = OpenPersistence(); !s.ok()) return s;
    if (absl::Status s = InitClusterIdentity(); !s.ok()) return s;
    if (absl::Status s = InitNamespacesAndClusters(); !s.ok()) return s;
    if (absl::Status s = BindPortAndOwnShards(); !s.ok()) return s;
    if (absl::Status s = BuildEngines(); !s.ok()) return s;
    StartWorkers();
    RegisterFrontendHandlers();
    BuildReplication();
    RegisterAdminBatchAndScheduleHandlers();
    InitTimers();
    RouteCallsToOwners();
    RecordFinalHeartbeats();
    if (absl::Status s = InstallCallWrappers(); !s.ok()) return s;
    if (absl::Status s = StartHttp(); !s.ok()) return s;
    if (absl::Status s = StartTimerHttp(); !s.ok()) return s;
    if (absl::Status s = StartGrpc(); !s.ok()) return s;
    if (absl::Status s = StartMembership(shared_database_); !s.ok()) return s;
    if (timer_engine_) timer_engine_->Start();  // fires the due timers of the shards owned
    acceptor_->Start(handoff_.get(), config_.max_connections);
    StartReplication();
    StartOwnCalls();
    // Injected faults start now that the start itself can no longer be failed by them.
    if (faults_) faults_->Arm();
    logger_.Info("tock-server started",
                 {{"address", address()},
                  {"database", absl::StrCat(facts_.persistence_engine, " ",
                                            facts_.persistence_location)},
                  {"metrics", http_ ? MetricsUrl() : "off"}});
    return absl::OkStatus();
  }

  // Opens the configured database (observed: metrics and injected faults) and records its
  // shard count, which the first host to start writes.
  absl::Status OpenPersistence() {
    absl::StatusOr<std::unique_ptr<persistence::Persistence>> opened =
        persistence::OpenPersistence(config_.persistence);
    if (!opened.ok()) return opened.status();
    persistence_ = persistence::ObservePersistence(std::move(*opened), *metrics_, faults_.get());
    shared_database_ = persistence_->shared_by_hosts();
    // A shared database is remote: calls wait on its round trips, and must not hold gRPC's
    // few callback threads meanwhile (Dispatcher::RunHandlersOnThreads). Enough threads for
    // the calls of every pooled connection plus as many waiting to join a group commit.
    // On SQLite, the calls that wait for their commit (persistence.sqlite.handler_threads).
    if (shared_database_) {
      dispatcher_.RunHandlersOnThreads(std::max(32, 2 * config_.persistence.postgres_max_connections));
    } else if (const int threads = config_.persistence.sqlite_handler_threads; threads > 0) {
      dispatcher_.RunHandlersOnThreads(threads, rpc::Dispatcher::Hop::kUnary);
    }
    absl::StatusOr<int32_t> shards =
        persistence_->cluster_metadata().InitHistoryShardCount(config_.history_shards);
    if (!shards.ok()) return shards.status();
    facts_.history_shard_count = *shards;
    return absl::OkStatus();
  }

  // The cluster's name, id and host secret, as the database holds them (the first host to
  // start writes each), and the facts GetSystemInfo and the banner report.
  absl::Status InitClusterIdentity() {
    cluster_ = config_.EffectiveClusterMetadata();
    if (absl::Status s = persistence_->cluster_metadata().InitClusterName(
            cluster_.current_cluster_name);
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::string> cluster_id = persistence_->cluster_metadata().InitClusterId(NewUuid());
    if (!cluster_id.ok()) return cluster_id.status();
    facts_.cluster_id = *cluster_id;
    // The secret marking calls between the hosts of this database (the first host to start
    // writes it; on SQLite no other host exists and it marks nothing, but a client cannot
    // forge it either).
    absl::StatusOr<std::string> fresh_secret = routing::PeerCredential::NewSecret();
    if (!fresh_secret.ok()) return fresh_secret.status();
    absl::StatusOr<std::string> secret = persistence_->cluster_metadata().InitHostSecret(*fresh_secret);
    if (!secret.ok()) return secret.status();
    absl::StatusOr<routing::PeerCredential> credential =
        routing::PeerCredential::FromSecret(std::move(*secret));
    if (!credential.ok()) return credential.status();
    peer_credential_ = std::make_unique<routing::PeerCredential>(std::move(*credential));
    facts_.persistence_engine = persistence_->engine();
    facts_.persistence_location = persistence_->location();
    facts_.start_time = clock_.Now();
    return absl::OkStatus();
  }

  // The namespace engine, the channels to other servers, the known clusters, and the
  // namespaces this server registers at start ("default" and the configured ones).
  absl::Status InitNamespacesAndClusters() {
    namespaces_ =
        std::make_unique<namespaces::NamespaceEngine>(persistence_->namespaces(), cluster_, clock_);
    namespaces_->SetArchivalPolicy(ArchivalPolicyOf(config_.archival));
    namespaces_->SetEagerWorkflowStart(config_.eager_dispatch.workflow_start);
    // Every channel to another server (hosts, clusters, this one's own frontend) is made
    // here: TLS with tls.internode.
    dialer_ = std::make_unique<rpc::Dialer>(config_.tls.internode, config_.tls.reload_interval);
    remote_frontends_ = std::make_unique<replication::RemoteFrontends>(*dialer_);
    clusters_ = std::make_unique<replication::ClusterRegistry>(
        cluster_, facts_.cluster_id, facts_.history_shard_count, persistence_->replication(),
        persistence_->namespaces(), *namespaces_,
        [this](const std::string& address) { return remote_frontends_->Describe(address); });
    if (absl::Status s = clusters_->Refresh(); !s.ok()) return s;
    std::vector<std::string> names = {"default"};
    for (const std::string& n : config_.namespaces) {
      if (n != "default") names.push_back(n);
    }
    for (const std::string& n : names) {
      if (absl::Status s = namespaces_->EnsureRegistered(n); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat("cannot register namespace \"", n,
                                                   "\" at start: ", s.message()));
      }
    }
    registered_names_ = names;
    return absl::OkStatus();
  }

  // Binds the port, then makes the shard controller that names this host's address.
  absl::Status BindPortAndOwnShards() {
    // The port is bound first (connections wait in its backlog until the acceptor starts),
    // so that the shards are owned under this host's reachable address.
    acceptor_ = std::make_unique<rpc::Acceptor>(logger_);
    absl::StatusOr<int> port = acceptor_->Listen(config_.ip, config_.port);
    if (!port.ok()) return port.status();
    bound_port_ = *port;
    // The shard rows name this process (address#host id), not only its address: another
    // process advertising the same address never passes for this one (shard_controller.h).
    shards_ = std::make_unique<history::ShardController>(
        persistence_->executions(), facts_.history_shard_count, advertise_address(),
        history::ShardController::kMaxBlockSize, host_id_);
    // One process on an embedded database owns every shard; hosts sharing a database own
    // what the ring of the alive ones gives them (StartMembership, once the engines exist).
    if (!shared_database_) {
      if (absl::Status s = shards_->AcquireAll(); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // The matching and history engines (with the routing to other hosts on a shared
  // database), then the recovery of the owned shards' runs.
  absl::Status BuildEngines() {
    timer_thread_ = std::make_unique<TimerThread>(clock_);
    matching_ = std::make_unique<matching::MatchingEngine>(clock_, *timer_thread_);
    matching_->SetMetrics(*server_metrics_);
    // Worker Deployments: their routing steers matching; a change (here or read from another
    // host's) matches the namespace's held tasks again.
    deployments::DeploymentLimits deployment_limits;
    if (shared_database_) {
      // Two refreshes: one that began just before the write reads the old routing.
      deployment_limits.routing_propagation = 2 * deployments::DeploymentRegistry::kRefreshInterval;
    }
    deployments_ = std::make_unique<deployments::DeploymentRegistry>(
        persistence_->deployments(), clock_, *timer_thread_, logger_, deployment_limits);
    matching_->SetRouting([this](const std::string& namespace_id) {
      return deployments_->Routing(namespace_id);
    });
    deployments_->OnRoutingChanged(
        [this](const std::string& namespace_id) { matching_->Rematch(namespace_id); });
    // Drainage: the open runs pinned to a version, counted by visibility as Temporal counts
    // them (reference/api_2026.md §3.3.6).
    deployments_->Start([this](const std::string& namespace_id,
                               const std::string& version) -> absl::StatusOr<int64_t> {
      using persistence::VisibilityField;
      using persistence::VisibilityOp;
      using persistence::VisibilityPredicate;
      const VisibilityPredicate pinned = VisibilityPredicate::And(
          {VisibilityPredicate::Of(VisibilityField::kWorkerDeploymentVersion, VisibilityOp::kEqual,
                                   {version}),
           VisibilityPredicate::Of(VisibilityField::kVersioningBehavior, VisibilityOp::kEqual,
                                   {std::string("Pinned")}),
           VisibilityPredicate::Of(VisibilityField::kExecutionStatus, VisibilityOp::kEqual,
                                   {int64_t{temporal::api::enums::v1::WORKFLOW_EXECUTION_STATUS_RUNNING}})});
      return persistence_->visibility().Count(namespace_id, pinned);
    });
    history_ = std::make_unique<history::HistoryEngine>(persistence_->executions(), *shards_,
                                                        *matching_, clock_, *timer_thread_,
                                                        logger_);
    history_->SetMetrics(*server_metrics_);
    // On a shared (remote) database what follows a commit waits on round trips too (the
    // history read of a started task's response): as many completion threads as handlers.
    if (shared_database_) {
      history_->SetCompletionThreads(std::max(32, 2 * config_.persistence.postgres_max_connections));
    }
    history_->SetLimits(config_.limits);
    history_->SetEagerDispatch(config_.eager_dispatch);
    history_->SetArchivalCheck(
        [this](const std::string& namespace_id) { return namespaces_->ArchivesById(namespace_id); });
    history_->SetSearchAttributeSchemas(*namespaces_);
    history_->SetVersionRouting(
        {.polls = [this](const std::string& namespace_id, const std::string& version,
                         const std::string& task_queue) {
           return deployments_->Routing(namespace_id)
               ->Polls(version, task_queue, persistence::TaskKind::kWorkflow);
         },
         .target = [this](const std::string& namespace_id, const std::string& task_queue,
                          const std::string& workflow_id) {
           return deployments_->Routing(namespace_id)
               ->UnpinnedTarget(task_queue, persistence::TaskKind::kWorkflow, workflow_id);
         }});
    namespace_activity_ = std::make_unique<replication::NamespaceActivity>(
        persistence_->namespaces(), *namespaces_, RealClock());  // its cache ages in real time
    history_->SetNamespaceActivity(
        [this](const std::string& namespace_id) { return namespace_activity_->Of(namespace_id); });
    history_->SetOwnsVersion([this](int64_t version) {
      const std::shared_ptr<const admin::ClusterMetadata> cluster = namespaces_->cluster();
      auto own = cluster->clusters.find(cluster->current_cluster_name);
      const int64_t increment = cluster->failover_version_increment;
      return own != cluster->clusters.end() && increment > 0 &&
             version % increment == own->second.initial_failover_version % increment;
    });
    if (shared_database_) {
      // Other hosts change namespaces too: what this one resolved is read again after a
      // while (Temporal's namespace cache refreshes every 10 s).
      namespaces_->SetCacheLifetime(absl::Seconds(10));
      // Hosts sharing the database: the engine's work on runs and queues of other hosts goes
      // to them.
      placement_ = std::make_unique<routing::Placement>(advertise_address(),
                                                        facts_.history_shard_count);
      peers_ = std::make_unique<routing::Peers>(*dialer_, *peer_credential_, advertise_address());
      peers_->CountCallsWith(metrics_->Counter(
          "host_calls_total", "Calls this host made to other hosts sharing the database."));
      routed_history_ =
          std::make_unique<routing::RoutedHistory>(*history_, *shards_, *placement_, *peers_);
      history_->SetAnyShard(*routed_history_);
      // Ready tasks stay in this host's partition of their queue (routing/queue_partitions.h),
      // waiting for its polls as long as a poll waits there (at most Temporal's 200 ms).
      queue_partitions_ = std::make_unique<routing::QueuePartitions>(
          *matching_, persistence_->executions(), *shards_, *placement_, *peers_, clock_,
          *timer_thread_, logger_,
          std::min(config_.membership.partition_wait, absl::Milliseconds(200)));
      const std::string offers_help =
          "Tasks of this host's partitions offered to their queue's host, by whether taken.";
      queue_partitions_->CountOffersWith(
          metrics_->Counter("partition_offers_total", offers_help, {{"result", "taken"}}),
          metrics_->Counter("partition_offers_total", offers_help, {{"result", "refused"}}));
      history_->SetTaskSink([partitions = queue_partitions_.get()](persistence::TaskQueueTask task) {
        partitions->AddTask(std::move(task));
      });
      history_->SetQueueShards([partitions = queue_partitions_.get()](
                                   const std::string& namespace_id, const std::string& queue) {
        return partitions->ShardsFor(namespace_id, queue);
      });
    }
    absl::Status recovered = history_->Recover();
    if (recovered.ok() && queue_partitions_) queue_partitions_->Start();
    return recovered;
  }

  // The retention scanner and the archiver, started, and the admin calls that drive them.
  void StartWorkers() {
    // Both workers handle the runs of the shards this host owns (all of them with one host).
    const worker::OwnsRun owns_run = [this](const std::string& ns, const std::string& wf) {
      return shards_->Owns(shards_->ShardFor(ns, wf));
    };
    retention_ = std::make_unique<worker::RetentionScanner>(
        *namespaces_, persistence_->visibility(), *history_, clock_, owns_run);
    retention_->Start(logger_, *server_metrics_);
    archives_ = std::make_unique<archiver::ArchiveRegistry>(SetupOf(config_.archival.history),
                                                           SetupOf(config_.archival.visibility));
    archiver_ = std::make_unique<worker::Archiver>(*namespaces_, persistence_->archival_queue(),
                                                   persistence_->executions(), *history_,
                                                   *archives_, clock_, owns_run);
    archiver_->SetAfterHistoryUpload(config_.fault_points.after_history_upload);
    archiver_->Start(logger_, *server_metrics_);
    RegisterAdvanceTime();
    RegisterArchival();
    RegisterMembership();
  }

  // WorkflowService and OperatorService: runs, task queues, visibility (archived too).
  void RegisterFrontendHandlers() {
    frontend::RegisterWorkflowServiceHandlers(dispatcher_, *namespaces_, facts_);
    nexus_tasks_ = std::make_unique<nexus::NexusTaskQueues>(clock_, *timer_thread_);
    frontend::RegisterWorkflowRpcHandlers(dispatcher_, *namespaces_, *history_, *matching_, clock_,
                                          archives_.get(), deployments_.get(), nexus_tasks_.get());
    frontend::RegisterWorkerDeploymentHandlers(dispatcher_, *namespaces_, *deployments_, clock_);
    frontend::RegisterArchivedVisibilityHandlers(dispatcher_, *namespaces_, *archives_, clock_);
    frontend::RegisterVisibilityHandlers(dispatcher_, *namespaces_, persistence_->visibility());
    nexus_endpoints_ = std::make_unique<nexus::EndpointRegistry>(
        persistence_->nexus_endpoints(), persistence_->namespaces(), clock_);
    frontend::RegisterOperatorServiceHandlers(dispatcher_, *namespaces_, *nexus_endpoints_);
    frontend::RegisterNexusTaskHandlers(dispatcher_, *namespaces_, *nexus_tasks_, clock_);
    frontend::RegisterGatedOffHandlers(dispatcher_);
    worker_registry_ = std::make_unique<matching::WorkerRegistry>(clock_);
    frontend::RegisterWorkerRegistryHandlers(dispatcher_, *namespaces_, *worker_registry_);
  }

  // Namespace and history replication with other clusters and their calls (started by
  // StartReplication once the server serves), the DLQ merge routing and the reapply of
  // events to the active cluster.
  void BuildReplication() {
    const int32_t shards = facts_.history_shard_count;
    namespace_replicator_ = std::make_unique<replication::NamespaceReplicator>(
        *clusters_, persistence_->replication(), *namespaces_, *remote_frontends_, logger_);
    history_replicator_ = std::make_unique<replication::HistoryReplicator>(
        *clusters_, persistence_->replication(), persistence_->executions(),
        persistence_->namespaces(), *remote_frontends_,
        replication::HistoryReplicator::Shards{
            shards, [this](int32_t shard) { return shards_->Owns(shard); }},
        logger_);
    if (!config_.replication_faults_file.empty()) {
      replication_faults_ = std::make_unique<replication::ReplicationFaults>(
          config_.replication_faults_file, *metrics_, logger_);
      history_replicator_->SetFaults(replication_faults_.get());
      namespace_replicator_->SetFaults(replication_faults_.get());
      logger_.Warn("replication faults can be injected (tests only)",
                   {{"file", config_.replication_faults_file}});
    }
    replication::RegisterReplicationHandlers(dispatcher_, *clusters_, *namespace_replicator_,
                                             *history_replicator_, persistence_->replication(),
                                             shards);
    if (shared_database_) {
      // A history DLQ merge runs on the host that owns each source shard's local shard.
      dlq_merge_router_ = std::make_unique<replication::DlqMergeRouter>(
          *history_replicator_, persistence_->replication(), *placement_, *peers_,
          [this](int32_t shard) { return shards_->Owns(shard); }, shards);
      dlq_merge_router_->Install(dispatcher_);
    }
    history_->SetReapplyForwarder(replication::ForwardReapplyTo(*clusters_, *remote_frontends_));
    replication::RegisterReapplyEventsHandler(dispatcher_, *history_);
  }

  // AdminService, and the batch operations and schedules (started by StartOwnCalls).
  void RegisterAdminBatchAndScheduleHandlers() {
    frontend::RegisterAdminServiceHandlers(dispatcher_, *namespaces_, facts_);
    security::RegisterWhoAmI(dispatcher_, [this] { return authorizer_.get(); });
    frontend::RegisterMutableStateHandler(dispatcher_, *namespaces_, *history_);
    // A batch runs on the host that owns its shard (all of them with one host).
    batches_ = std::make_unique<frontend::BatchOperations>(
        persistence_->batches(), persistence_->visibility(), *namespaces_, clock_, logger_,
        [this](const std::string& namespace_id, const std::string& job_id) {
          return shards_->Owns(shards_->ShardFor(namespace_id, job_id));
        });
    frontend::RegisterBatchHandlers(dispatcher_, *batches_);
    // A schedule runs on the host that owns its shard too.
    schedules_ = std::make_unique<scheduler::Schedules>(
        persistence_->schedules(), *namespaces_, clock_, logger_,
        [this](const std::string& namespace_id, const std::string& schedule_id) {
          return shards_->Owns(shards_->ShardFor(namespace_id, schedule_id));
        });
    scheduler::RegisterScheduleHandlers(dispatcher_, *schedules_);
  }

  // On a shared database, the host-to-host calls and the routing of calls to their owner.
  void RouteCallsToOwners() {
    if (!shared_database_) return;
    // Any host accepts any call: those about a run or a task queue go to its owner.
    routing::RegisterHostService(dispatcher_, *history_, *matching_, *placement_);
    call_router_ = std::make_unique<routing::CallRouter>(*placement_, *peers_, *shards_,
                                                         *namespaces_, clock_, *timer_thread_,
                                                         config_.membership.partition_wait);
    call_router_->Install(dispatcher_);
    timers::RouteTimerCalls(*call_router_, dispatcher_, *timer_service_);
  }

  // A worker's last heartbeat (status Shutdown) comes with its ShutdownWorker, which goes to
  // its queue's owner: the host that took the call keeps the heartbeat in the namespace's
  // worker registry, or sends it to the host holding that registry. Around the routing, on
  // the receiving host only.
  void RecordFinalHeartbeats() {
    dispatcher_.Wrap(
        "temporal.api.workflowservice.v1.WorkflowService/ShutdownWorker",
        [this](rpc::RawHandler handler) -> rpc::RawHandler {
          return [this, handler = std::move(handler)](const rpc::CallContext& ctx,
                                                      const grpc::ByteBuffer& payload,
                                                      rpc::RawResponder respond) {
            if (peers_ == nullptr || !peers_->FromPeer(ctx)) RecordFinalHeartbeat(payload);
            handler(ctx, payload, std::move(respond));
          };
        });
  }

  void RecordFinalHeartbeat(const grpc::ByteBuffer& payload) {
    namespace wf = temporal::api::workflowservice::v1;
    wf::ShutdownWorkerRequest req;
    grpc::ByteBuffer copy(payload);
    if (!grpc::SerializationTraits<wf::ShutdownWorkerRequest>::Deserialize(&copy, &req).ok() ||
        !req.has_worker_heartbeat()) {
      return;
    }
    auto ns = namespaces_->Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
    if (!ns.ok()) return;  // the handler answers the error
    const std::optional<std::string> owner =
        placement_ != nullptr ? placement_->QueueOwner(ns->id, matching::WorkerRegistry::kRegistryQueue)
                              : std::nullopt;
    if (!owner.has_value()) {
      worker_registry_->Record(ns->id, req.worker_heartbeat());
      return;
    }
    wf::RecordWorkerHeartbeatRequest forward;
    forward.set_namespace_(req.namespace_());
    *forward.add_worker_heartbeat() = req.worker_heartbeat();
    grpc::ByteBuffer buffer;
    bool own = false;
    if (!grpc::SerializationTraits<wf::RecordWorkerHeartbeatRequest>::Serialize(forward, &buffer, &own).ok()) return;
    // Best effort: a heartbeat lost here is replaced by the entry's TTL running out.
    peers_->Forward(*owner, "temporal.api.workflowservice.v1.WorkflowService/RecordWorkerHeartbeat",
                    buffer, absl::Now() + absl::Seconds(5), [](const grpc::Status&, grpc::ByteBuffer*) {});
  }

  // The dispatcher's wrappers, each installed around those before it: a call meets them in
  // the reverse order (authorization first, then rate limits, redirection, the handover
  // gate and the routing).
  absl::Status InstallCallWrappers() {
    // A namespace in handover holds its calls here, on this host, before they are routed.
    handover_gate_ = std::make_unique<frontend::HandoverGate>(*namespaces_, clock_);
    handover_gate_->Install(dispatcher_);
    // In front of the routing: a call forwarded to the active cluster is routed there.
    absl::StatusOr<frontend::DcRedirectionPolicy> redirection =
        frontend::ParseDcRedirectionPolicy(config_.dc_redirection_policy);
    if (!redirection.ok()) return redirection.status();
    dc_redirection_ = std::make_unique<frontend::DcRedirection>(*redirection, *namespaces_, *dialer_);
    dc_redirection_->Install(dispatcher_);
    // Rate limits (`limits:` rate keys, off unless configured), around everything above: a
    // call over its limit is refused here, before it is held, routed or forwarded.
    if (config_.rate_limits.enabled) {
      rate_limits_ = std::make_unique<security::RateLimitInterceptor>(config_.rate_limits, RealClock(),
                                                                      *peer_credential_);
      rate_limits_->Install(dispatcher_);
    }
    // Authorization (`authorization:`, off unless configured), the dispatcher's admission: it
    // runs before every wrapper above, so nothing is counted, held, routed or forwarded for a
    // caller it refuses, nor queued for a handler thread.
    if (config_.authorization.has_value()) {
      absl::StatusOr<std::unique_ptr<security::Authorizer>> authorizer =
          security::Authorizer::Create(*config_.authorization, RealClock(), logger_);
      if (!authorizer.ok()) return authorizer.status();
      authorizer_ = std::move(*authorizer);
      if (absl::Status s = authorizer_->Install(dispatcher_, peer_credential_.get()); !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  // The gRPC server, serving the dispatcher on the connections the acceptor hands it (the
  // acceptor itself starts later, after the membership).
  absl::Status StartGrpc() {
    grpc::ServerBuilder builder;
    // The SDKs ping every 30 s, also without calls (reference/sdk_protocol.md §1.1); gRPC's
    // defaults would answer with GOAWAY "too_many_pings".
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
    // Without this a second server could bind the same port (SO_REUSEPORT) and split calls.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    // Requests up to Temporal's frontend limit, answers as large as the clients accept
    // (lib/common/message_size.h). gRPC checks a request's length against the limit itself
    // and answers RESOURCE_EXHAUSTED: a larger request never reaches the dispatcher, so it is
    // neither queued for the handler threads, authorized, nor parsed.
    builder.SetMaxReceiveMessageSize(kMaxRequestBytes);
    builder.SetMaxSendMessageSize(kMaxMessageBytes);
    // The port is ours (rpc/acceptor.h: gRPC 1.51's listener dies on EMFILE); gRPC serves
    // each connection the acceptor hands it, with the arguments above.
    builder.RegisterCallbackGenericService(&dispatcher_);
    // Connections reach gRPC through this, with the frontend's credentials: TLS with
    // tls.frontend (its files watched and reloaded), plaintext otherwise.
    handoff_ = builder.experimental().AddExternalConnectionAcceptor(
        grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
        rpc::FrontendCredentials(config_.tls.frontend, config_.tls.reload_interval));
    server_ = builder.BuildAndStart();
    if (server_ == nullptr) return absl::InternalError("the gRPC server could not be started");
    return absl::OkStatus();
  }

  // Once the server serves: this cluster's own address, and the pulls from remote clusters.
  void StartReplication() {
    // A server without cluster metadata, or whose own rpc_address has port 0, is reached at
    // the address it bound.
    if (std::string& own = cluster_.clusters[cluster_.current_cluster_name].rpc_address;
        !config_.cluster_metadata.has_value() || own.empty() || own.ends_with(":0")) {
      own = address();
      clusters_->SetCurrentClusterAddress(address());
    }
    // Other hosts of the database may connect remotes; one host pulls namespace changes
    // from them: the owner of shard 1 (the only host on SQLite).
    clusters_->Start(logger_);
    namespace_replicator_->Start([this] { return shards_->Owns(1); });
    history_replicator_->SetSyncActivityApply([this](const tock::admin::v1::HistoryReplicationTask& t) {
      return history_->ApplySyncActivity(
          t.namespace_id(), t.workflow_id(), t.run_id(),
          {t.version_history_items().begin(), t.version_history_items().end()},
          t.sync_activity().version(), t.sync_activity().activity());
    });
    history_replicator_->Start([this](const std::string& namespace_id,
                                      const std::string& workflow_id, const std::string& run_id,
                                      const std::vector<tock::persistence::v1::VersionHistoryItem>& items,
                                      const std::vector<persistence::HistoryEvent>& events) {
      return history_->ApplyReplicated(namespace_id, workflow_id, run_id, items, events);
    });
  }

  // Batches and schedules call this server's frontend like a client. Their calls are marked
  // as the server's own: routed and rate limited, not authorized again
  // (routing/peer_credential.h).
  void StartOwnCalls() {
    own_calls_dialer_ =
        std::make_unique<rpc::Dialer>(peer_credential_->OwnCallsDialer(*dialer_));
    batches_->Start(own_frontend_address(), *own_calls_dialer_);
    schedules_->Start(own_frontend_address(), *own_calls_dialer_);
  }

  // Joins the hosts of the database: heartbeats (so `tock cluster members` lists this host)
  // and, on a shared database, owns the shards the ring of the alive hosts gives this one,
  // before the first call is served. (On SQLite this process is the only host and owns
  // every shard already.)
  absl::Status StartMembership(bool shared_database) {
    membership::MembershipConfig mc;
    mc.heartbeat = config_.membership.heartbeat;
    mc.cutoff = config_.membership.cutoff;
    membership_ = std::make_unique<membership::MembershipMonitor>(
        persistence_->membership(), mc, host_id_, advertise_address(), RealClock().Now(), RealClock(),
        logger_);
    if (shared_database) {
      shards_->SetOnLost([this](int32_t) { membership_->HandAgainAtNextHeartbeat(); });
    }
    // Rings after the first are applied on a thread of their own (membership/ring_applier.h):
    // taking shards can be slow, and the heartbeat thread must keep heartbeating meanwhile.
    ring_applier_ = std::make_unique<membership::RingApplier>(
        [this, shared_database](std::shared_ptr<const membership::HashRing> ring) {
          ApplyRing(std::move(ring), shared_database);
        });
    return membership_->Start(
        [this, shared_database, first = true](std::shared_ptr<const membership::HashRing> ring) mutable {
          if (!first) return ring_applier_->Offer(std::move(ring));
          first = false;  // the first ring is applied before the first call is served
          ApplyRing(std::move(ring), shared_database);
        });
  }

  // Acts on the alive hosts' ring: routing follows it, queues that moved leave memory, and
  // this host takes the shards the ring gives it and releases the others.
  void ApplyRing(std::shared_ptr<const membership::HashRing> ring, bool shared_database) {
    if (!shared_database) return;
    placement_->SetRing(ring);
    // Queues that moved to another host leave memory here (their polls are answered empty
    // and come back through the new owner, which reads the queues from the database).
    matching_->ForgetQueues([this](const std::string& namespace_id, const std::string& queue,
                                   persistence::TaskKind) {
      return placement_->QueueOwner(namespace_id, queue).has_value();
    });
    const std::vector<int32_t> mine = ring->ShardsOf(advertise_address(), shards_->shard_count());
    const std::vector<int32_t> owned_before = shards_->OwnedShards();
    if (absl::Status s = shards_->SetOwned(mine); !s.ok()) {
      // Calls for the shards not taken are answered "not owned" until then: retry soon.
      logger_.Warn("taking history shards failed; retried at the next heartbeat",
                   {{"error", s.ToString()}});
      membership_->HandAgainAtNextHeartbeat();
    }
    // The partitions' tasks are those of the shards owned now (a ring applied again after a
    // failed take, with nothing moved, leaves the queues and their polls alone).
    if (queue_partitions_ && shards_->OwnedShards() != owned_before) queue_partitions_->Reshard();
    logger_.Info("history shards owned",
                 {{"count", absl::StrCat(shards_->OwnedShards().size())},
                  {"hosts", absl::StrCat(ring->hosts().size())}});
  }

  // The timer service (issue 14): its timers are rows of the history shards, written through
  // the fenced owner of theirs and fired by it through one libcurl multi sender, made at the
  // first callback (lazy_callback_sender.h: a server that fires none never loads libcurl;
  // without libcurl, each callback fails with that reason and is retried by its policy).
  void InitTimers() {
    timer_service_ = std::make_unique<timers::TimerService>(persistence_->timers(), *shards_,
                                                            *namespaces_, clock_);
    timers::RegisterTimerHandlers(dispatcher_, *timer_service_);
    // Which addresses callbacks may reach, at create and at each connection (review P2-2);
    // checked by Validate, and the default (every restricted range refused) if not.
    const timers::CallbackAddressPolicy policy =
        timers::CallbackAddressPolicy::Parse(config_.timer_callbacks.allow)
            .value_or(timers::CallbackAddressPolicy());
    timer_service_->SetCallbackPolicy(policy);
    timers::HttpCallbackSenderOptions sender_options;
    sender_options.address_policy = policy;
    sender_options.signing_secrets = config_.timer_callbacks.signing_secrets;
    callback_sender_ = std::make_unique<timers::LazyCallbackSender>(
        [sender_options] { return timers::LazyCallbackSender::MakeHttpSenderWith(sender_options); },
        logger_);
    // Finished timers are removed after their namespace's retention, like closed runs.
    timer_retention_ = std::make_unique<timers::TimerRetention>(
        [this](const std::string& namespace_id) -> absl::StatusOr<absl::Duration> {
          absl::StatusOr<persistence::NamespaceVersion> ns =
              persistence_->namespaces().GetNamespaceById(namespace_id);
          if (!ns.ok()) return ns.status();
          return FromProtoDuration(ns->record.config().workflow_execution_retention_ttl());
        },
        clock_);
    timer_service_->SetRetention(timer_retention_.get());
    timers::TimerEngine::Options options;
    options.retention = timer_retention_.get();
    timer_engine_ = std::make_unique<timers::TimerEngine>(persistence_->timers(), *shards_,
                                                          *callback_sender_, clock_, logger_,
                                                          options);
    timer_service_->SetOnWritten(
        [engine = timer_engine_.get()](const persistence::StoredTimer& t) { engine->OnWritten(t); });
  }

  // The metrics registry, the dispatcher's and the engines' handles, the fault injector.
  void InitObservability() {
    // The console's charts read this host's metrics, so serving it turns them on.
    const bool console = config_.timer_http.has_value() && config_.console.enabled;
    if ((config_.metrics.has_value() || console) && !metrics_->enabled()) {
      own_metrics_ = std::make_unique<MetricsRegistry>();
      metrics_ = own_metrics_.get();
    }
    dispatcher_.Observe(logger_, *metrics_);
    server_metrics_ = std::make_unique<ServerMetrics>(*metrics_);
    const std::string backlog = "Tasks waiting in this host's task queues (the part in memory), by task type.";
    workflow_backlog_ = metrics_->Gauge("task_backlog", backlog, {{"task_type", "Workflow"}});
    activity_backlog_ = metrics_->Gauge("task_backlog", backlog, {{"task_type", "Activity"}});
    if (config_.persistence.fault_injection.rate > 0) {
      faults_ = std::make_unique<persistence::FaultInjector>(config_.persistence.fault_injection,
                                                              *metrics_, logger_);
      logger_.Warn("persistence fault injection is on (testing only)",
                   {{"rate", absl::StrCat(config_.persistence.fault_injection.rate)},
                    {"seed", absl::StrCat(faults_->seed())}});
    }
    if (config_.persistence.fault_injection.sync_delay > absl::ZeroDuration()) {
      logger_.Warn("a slower disk is simulated: each sync of the database waits first (testing only)",
                   {{"sync_delay", FormatHumanDuration(config_.persistence.fault_injection.sync_delay)}});
    }
  }

  // GET /metrics on the configured address, when metrics are on.
  absl::Status StartHttp() {
    if (!config_.metrics.has_value()) return absl::OkStatus();
    http_ = std::make_unique<http::HttpServer>();
    http::RouteMetrics(*http_, [this] { return MetricsText(); });
    return http_->Start(config_.metrics->ip, config_.metrics->port);
  }

  // The metrics exposition, with the gauges read when asked (matching's backlog) set first.
  std::string MetricsText() {
    if (matching_) {
      workflow_backlog_.Set(static_cast<double>(matching_->TotalBacklog(persistence::TaskKind::kWorkflow)));
      activity_backlog_.Set(static_cast<double>(matching_->TotalBacklog(persistence::TaskKind::kActivity)));
    }
    return metrics_->TextExposition();
  }

  // The HTTP port, when configured (timers.http, --http-port): Temporal's HTTP API
  // (http_api/), the timer service's HTTP/JSON API (timers/http_api.h) and the web console,
  // on a server of its own (NewHttpServer). The timer API's writes are forwarded to the owner
  // of a shard through this server's own gRPC port when another host owns it.
  absl::Status StartTimerHttp() {
    if (!config_.timer_http.has_value()) return absl::OkStatus();
    timer_http_api_ = std::make_unique<timers::TimerHttpApi>(
        *timer_service_, clock_, [this] { return dialer_->Dial(own_frontend_address()); });
    absl::StatusOr<http_api::RouteTable> routes = http_api::RouteTable::Served();
    if (!routes.ok()) return routes.status();
    temporal_http_api_ = std::make_unique<http_api::TemporalHttpApi>(
        std::move(*routes), [this] { return InProcessChannel(); });
    temporal_http_api_->set_read_only(config_.console.read_only);
    if (metrics_->enabled()) temporal_http_api_->set_metrics([this] { return MetricsText(); });
    // The console on the HTTP port, or on a listener of its own (console.port) that serves
    // the APIs beside it (its page calls them relative to itself).
    const bool own_listener = config_.console.enabled && config_.console.port.has_value();
    timer_http_ = NewHttpServer(config_.console.enabled && !own_listener);
    absl::Status started = timer_http_->Start(config_.timer_http->ip, config_.timer_http->port);
    if (!started.ok() && config_.timer_http->any_port_if_taken) {
      started = timer_http_->Start(config_.timer_http->ip, 0);
    }
    if (!started.ok()) return started;
    if (own_listener) {
      ui_http_ = NewHttpServer(true);
      if (absl::Status s = ui_http_->Start(ConsoleIp(), *config_.console.port); !s.ok()) return s;
    }
    if (config_.console.enabled) facts_.console_url = ConsoleUrl();
    return absl::OkStatus();
  }

  // An HTTP server with the timer API and Temporal's HTTP API, and the console when
  // `console`, under console.public_path too. Threads for clients that keep their
  // connections (cpp-httplib holds a thread per kept-alive connection) and for the long
  // polls, bodies up to Temporal's 4 MiB, 5 s to write a large history to a slow reader, the
  // frontend's TLS files when it serves TLS.
  std::unique_ptr<http::HttpServer> NewHttpServer(bool console) {
    http::HttpServerOptions options{http_api::TemporalHttpApi::kMaxLongPolls + 16, 256,
                                    static_cast<size_t>(kMaxRequestBytes), 5};
    if (const std::optional<rpc::FrontendTls>& tls = config_.tls.frontend; tls.has_value()) {
      options.tls = http::HttpTls{tls->cert_file, tls->key_file, tls->client_ca_file,
                                  tls->RequiresClientCertificate()};
    }
    options.path_prefix = config_.console.public_path;
    auto server = std::make_unique<http::HttpServer>(options);
    timer_http_api_->Register(*server, config_.authorization.has_value());
    temporal_http_api_->Register(*server);
    if (console) {
      console::ConsoleOptions o;
      o.codec_endpoint = config_.console.codec_endpoint;
      o.read_only = config_.console.read_only;
      o.auth_enabled = config_.authorization.has_value();
      o.server_version = kTockVersion;
      o.public_path = config_.console.public_path;
      console::RegisterConsole(*server, o);
    }
    return server;
  }

  // A channel to this server's own gRPC service without a socket (null before it is built):
  // Temporal's HTTP API calls through it, so its calls meet the same authorizer and limits.
  std::shared_ptr<grpc::Channel> InProcessChannel() {
    std::lock_guard lock(in_process_mu_);
    if (in_process_channel_ == nullptr && server_ != nullptr) {
      grpc::ChannelArguments args;
      args.SetMaxReceiveMessageSize(kMaxMessageBytes);
      args.SetMaxSendMessageSize(kMaxRequestBytes);
      in_process_channel_ = server_->InProcessChannel(args);
    }
    return in_process_channel_;
  }

  std::string TimerHttpUrl() const {
    return absl::StrCat(HttpScheme(), config_.timer_http->ip, ":", timer_http_->port(), "/api/v1/timers");
  }

  std::string ConsoleIp() const {
    return config_.console.ip.empty() ? config_.timer_http->ip : config_.console.ip;
  }

  std::string ConsoleUrl() const {
    return ui_http_ ? absl::StrCat(HttpScheme(), ConsoleIp(), ":", ui_http_->port(), config_.console.public_path, "/")
                    : absl::StrCat(HttpScheme(), config_.timer_http->ip, ":", timer_http_->port(),
                                   config_.console.public_path, "/");
  }

  std::string HttpScheme() const {
    return config_.tls.frontend.has_value() ? "https://" : "http://";
  }

  // "  tls: ..." when the frontend serves TLS (what a client must bring), else nothing.
  std::string TlsBannerLine() const {
    if (!config_.tls.frontend.has_value()) return "";
    const rpc::FrontendTls& f = *config_.tls.frontend;
    return absl::StrCat("  tls:        frontend and internode, TLS 1.2+; client certificates ",
                        f.client_ca_file.empty()              ? "not asked for"
                        : f.RequiresClientCertificate() ? "required"
                                                        : "checked when sent",
                        "; files reloaded every ", absl::FormatDuration(config_.tls.reload_interval),
                        "\n");
  }

  std::string MetricsUrl() const {
    return absl::StrCat("http://", config_.metrics->ip, ":", http_->port(), "/metrics");
  }

  // AdminService.AdvanceTime: the dev server's time skipping.
  void RegisterAdvanceTime() {
    dispatcher_.AddUnary<tock::admin::v1::AdvanceTimeRequest, tock::admin::v1::AdvanceTimeResponse>(
        "tock.admin.v1.AdminService/AdvanceTime",
        [this](const tock::admin::v1::AdvanceTimeRequest& req,
               const rpc::CallContext&) -> absl::StatusOr<tock::admin::v1::AdvanceTimeResponse> {
          if (!config_.time_skipping) {
            return absl::FailedPreconditionError(
                "time skipping is disabled on this server; start tock-server with "
                "--enable-time-skipping (development and tests only)");
          }
          const absl::Duration d = FromProtoDuration(req.duration());
          if (d <= absl::ZeroDuration()) {
            return absl::InvalidArgumentError("the duration must be positive, e.g. 25h");
          }
          absl::StatusOr<int64_t> deleted = retention_->ScanAfter([&] { clock_.Advance(d); });
          history_->WakeTimers();  // timers now due fire without waiting
          archiver_->Wake();      // so do archival steps (retention passed, retries due)
          if (schedules_) schedules_->Wake();  // and schedules' actions
          // The timer service's callbacks due fire before the answer, so that a test can
          // check right after it that one not due has not fired (no sleep that proves nothing).
          const bool timers_settled =
              timer_engine_ != nullptr && timer_engine_->WaitForDue(absl::Seconds(10));
          // So do the schedules' actions due: a test checks right after that one has not acted.
          const bool schedules_settled =
              schedules_ != nullptr && schedules_->WaitForDue(absl::Seconds(10));
          if (!deleted.ok()) return deleted.status();
          tock::admin::v1::AdvanceTimeResponse out;
          *out.mutable_server_time() = ToProtoTime(clock_.Now());
          out.set_runs_deleted_by_retention(*deleted);
          out.set_timers_settled(timers_settled);
          out.set_schedules_settled(schedules_settled);
          return out;
        });
  }

  // `tock cluster members` and `tock cluster shards`: what the membership table and the
  // shard rows say, as every host of the database sees it; and a queue's partitions.
  void RegisterMembership() {
    namespace pb = tock::admin::v1;
    namespace wf = temporal::api::workflowservice::v1;
    dispatcher_.AddUnary<pb::ListClusterMembersRequest, pb::ListClusterMembersResponse>(
        "tock.admin.v1.AdminService/ListClusterMembers",
        [this](const pb::ListClusterMembersRequest&,
               const rpc::CallContext&) -> absl::StatusOr<pb::ListClusterMembersResponse> {
          auto hosts = persistence_->membership().ListHosts(membership_->config().forget_after);
          if (!hosts.ok()) return hosts.status();
          auto shards = persistence_->membership().ListShards();
          if (!shards.ok()) return shards.status();
          pb::ListClusterMembersResponse out;
          *out.mutable_cutoff() = ToProtoDuration(config_.membership.cutoff);
          for (const persistence::HostRecord& h : *hosts) {
            pb::HostMember* m = out.add_members();
            m->set_host_id(h.host_id);
            m->set_address(h.address);
            *m->mutable_session_start() = ToProtoTime(h.session_start);
            *m->mutable_heartbeat_age() = ToProtoDuration(h.heartbeat_age);
            const bool alive = h.heartbeat_age < config_.membership.cutoff;
            m->set_alive(alive);
            int32_t owned = 0;
            // A restarted host has a new row at the same address: the shards count for the
            // process that owns them (the rows name its host id).
            const std::string owner = history::ShardOwner(h.address, h.host_id);
            for (const persistence::ShardRecord& r : *shards) owned += alive && r.owner == owner;
            m->set_shards_owned(owned);
          }
          return out;
        });
    // A queue's partitions: on hosts sharing a database every alive host on the ring holds
    // the tasks of its own shards (routing/queue_partitions.h) and the ring names the root,
    // which the polls that find nothing elsewhere reach. Temporal's keys: the root is the queue's name,
    // the others /_sys/QUEUE/N (N from 1, hosts in address order). One host: the root only.
    dispatcher_.AddUnary<wf::ListTaskQueuePartitionsRequest, wf::ListTaskQueuePartitionsResponse>(
        "temporal.api.workflowservice.v1.WorkflowService/ListTaskQueuePartitions",
        [this](const wf::ListTaskQueuePartitionsRequest& req,
               const rpc::CallContext&) -> absl::StatusOr<wf::ListTaskQueuePartitionsResponse> {
          const std::string& queue = req.task_queue().name();
          if (queue.empty()) return absl::InvalidArgumentError("TaskQueue is not set on request.");
          if (queue.size() > 1000) return absl::InvalidArgumentError("TaskQueue length exceeds limit.");
          auto ns = namespaces_->Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
          if (!ns.ok()) return ns.status();
          std::string root = advertise_address();
          std::vector<std::string> others;
          if (placement_ != nullptr) {
            root = placement_->QueueOwner(ns->id, queue).value_or(advertise_address());
            for (std::string& host : placement_->Hosts()) {
              if (host != root) others.push_back(std::move(host));
            }
          }
          wf::ListTaskQueuePartitionsResponse out;
          for (auto* list : {out.mutable_workflow_task_queue_partitions(),
                             out.mutable_activity_task_queue_partitions()}) {
            auto* first = list->Add();
            first->set_key(queue);
            first->set_owner_host_name(root);
            for (size_t i = 0; i < others.size(); ++i) {
              auto* p = list->Add();
              p->set_key(absl::StrCat("/_sys/", queue, "/", i + 1));
              p->set_owner_host_name(others[i]);
            }
          }
          return out;
        });
    dispatcher_.AddUnary<pb::ListShardsRequest, pb::ListShardsResponse>(
        "tock.admin.v1.AdminService/ListShards",
        [this](const pb::ListShardsRequest&,
               const rpc::CallContext&) -> absl::StatusOr<pb::ListShardsResponse> {
          auto shards = persistence_->membership().ListShards();
          if (!shards.ok()) return shards.status();
          pb::ListShardsResponse out;
          for (const persistence::ShardRecord& r : *shards) {
            pb::ShardOwnership* s = out.add_shards();
            s->set_shard_id(r.shard_id);
            s->set_owner(std::string(history::ShardOwnerAddress(r.owner)));  // where it is reached
            s->set_range_id(r.range_id);
            *s->mutable_claimed() = ToProtoTime(r.claimed);
          }
          return out;
        });
  }

  // AdminService.TriggerArchival and GetArchivalStatus.
  void RegisterArchival() {
    namespace pb = tock::admin::v1;
    // Archiving writes to the store: on the archives' threads, not gRPC's.
    dispatcher_.AddAsync<pb::TriggerArchivalRequest, pb::TriggerArchivalResponse>(
        "tock.admin.v1.AdminService/TriggerArchival",
        [this](const pb::TriggerArchivalRequest& req, const rpc::CallContext&,
               rpc::Responder<pb::TriggerArchivalResponse> respond) {
          absl::Status queued =
              archives_->RunBlocking([this, req, respond] { respond(archiver_->Trigger(req)); });
          if (!queued.ok()) respond(queued);
        });
    dispatcher_.AddUnary<pb::GetArchivalStatusRequest, pb::GetArchivalStatusResponse>(
        "tock.admin.v1.AdminService/GetArchivalStatus",
        [this](const pb::GetArchivalStatusRequest& req, const rpc::CallContext&) {
          return archiver_->Status(req);
        });
  }

  std::string address() const override { return absl::StrCat(config_.ip, ":", bound_port_); }
  // Where this server calls its own frontend (batches, schedules, the timer HTTP API's
  // forwarding): the loopback address when it listens on every address.
  std::string own_frontend_address() const {
    return config_.ip == "0.0.0.0" || config_.ip.empty() ? absl::StrCat("127.0.0.1:", bound_port_)
                                                         : address();
  }
  // Where other hosts reach this one: listen.advertise_address, or the bound address.
  std::string advertise_address() const {
    return config_.advertise_address.empty() ? address() : config_.advertise_address;
  }

  std::string Banner() const override {
    std::string clusters;
    for (const auto& [name, info] : cluster_.clusters) {
      if (!clusters.empty()) clusters += ", ";
      absl::StrAppend(&clusters, name, " (initial version ", info.initial_failover_version, ")");
    }
    return absl::StrCat("Tock server ", kTockVersion, " listening on ", address(), "\n",
                        "  database:   ", facts_.persistence_engine, " ",
                        facts_.persistence_location, "\n",
                        "  durability: ", persistence_->durability(), "\n",
                        "  cluster:    ", cluster_.current_cluster_name, " of ", clusters,
                        "; ", facts_.history_shard_count, " history shards\n",
                        "  namespaces: ", absl::StrJoin(registered_names_, ", "), "\n",
                        config_.source.empty() ? "" : absl::StrCat("  config:     ", config_.source, "\n"),
                        http_ ? absl::StrCat("  metrics:    ", MetricsUrl(), "\n") : "",
                        timer_http_ ? absl::StrCat("  timers:     ", TimerHttpUrl(), "\n") : "",
                        timer_http_ ? absl::StrCat("  http api:   ", HttpScheme(), config_.timer_http->ip, ":",
                                                   timer_http_->port(), "/api/v1\n")
                                    : "",
                        timer_http_ && config_.console.enabled
                            ? absl::StrCat("  console:    ", ConsoleUrl(),
                                           config_.console.read_only ? " (read-only)" : "", "\n")
                            : "",
                        TlsBannerLine(),
                        rate_limits_ ? absl::StrCat("  limits:     ", config_.rate_limits.Summary(), "\n") : "",
                        authorizer_ ? "  authz:      on (authorization:)\n" : "");
  }

  void Shutdown() override {
    std::lock_guard lock(mu_);
    if (shut_down_) return;
    // Long polls answer now (empty), so the calls in flight end at once and gRPC's shutdown
    // does not wait out their 20-60 s; new calls until the listener closes do not wait.
    // Work for other hosts stops being retried: a call blocked on it would hold the
    // shutdown of gRPC below.
    // Batches first: their calls in flight go to this server, which still answers them.
    if (batches_) batches_->Shutdown();
    namespace_replicator_.reset();  // its pulls write namespaces
    history_replicator_.reset();    // and this one's, runs
    clusters_.reset();
    if (schedules_) schedules_->Shutdown();
    // No new timer requests over HTTP (the API uses the timer service, reset below), nor
    // Temporal HTTP API calls: its long polls and event streams are ended first, since the
    // HTTP server's Stop waits for its requests.
    if (temporal_http_api_) temporal_http_api_->Stop();
    if (timer_http_) timer_http_->Stop();
    if (ui_http_) ui_http_->Stop();
    if (http_) http_->Stop();  // its exposition reads matching's backlog
    // No new timer attempts; callbacks in flight are answered "stopped" and their FIRING
    // rows sent again by the shards' next owner.
    if (timer_engine_) timer_engine_->Stop();
    if (callback_sender_) callback_sender_->Stop();
    if (call_router_) call_router_->Stop();
    if (routed_history_) routed_history_->Stop();
    if (queue_partitions_) queue_partitions_->Stop();
    if (deployments_) deployments_->Stop();
    if (matching_) matching_->ReleasePolls();
    if (nexus_tasks_) nexus_tasks_->ReleasePolls();
    if (handover_gate_) handover_gate_->Release();
    if (history_) history_->ReleaseWaiters();
    if (acceptor_) acceptor_->Stop();  // no new connections
    // Leaving the membership first lets the other hosts take this one's shards at once.
    if (membership_) membership_->Stop();
    ring_applier_.reset();  // after the apply in progress, if any: it uses the shards
    // Calls in flight get a second to finish; then gRPC cancels what is left and drops the
    // connections, including idle ones whose clients keep them open after GOAWAY (gRPC's
    // shutdown otherwise waits for every connection to close).
    if (server_ != nullptr) server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
    {
      std::lock_guard in_process(in_process_mu_);
      in_process_channel_.reset();  // (the HTTP API that used it stopped above)
    }
    server_.reset();
    handover_gate_.reset();  // its timer thread looks namespaces up
    // Requests' archive jobs first: they use the archiver and the engines.
    if (archives_) archives_->StopBlocking();
    // Timers next: their callbacks use the history engine, and the engine's timer queue
    // uses the timer thread.
    if (history_) history_->StopBackground();
    nexus_tasks_.reset();  // its expiries run on the timer thread; polls were answered above
    timer_thread_.reset();
    retention_.reset();
    batches_.reset();
    schedules_.reset();
    timer_engine_.reset();
    callback_sender_.reset();
    timer_service_.reset();
    archiver_.reset();
    archives_.reset();
    history_.reset();
    matching_.reset();
    membership_.reset();
    shards_.reset();
    namespaces_.reset();
    call_router_.reset();
    routed_history_.reset();
    queue_partitions_.reset();
    peers_.reset();
    placement_.reset();
    persistence_.reset();
    if (bound_port_ != 0) logger_.Info("tock-server stopped", {{"address", address()}});
    shut_down_ = true;
    done_.notify_all();
  }

  void Wait() override {
    std::unique_lock lock(mu_);
    done_.wait(lock, [this] { return shut_down_; });
  }

  ~TockServerImpl() override { Shutdown(); }

 private:
  ServerConfig config_;
  Logger& logger_;
  // env.metrics, or own_metrics_ when that one is disabled and config_.metrics asks for
  // metrics. Declared before everything holding handles into it.
  MetricsRegistry* metrics_;
  std::unique_ptr<MetricsRegistry> own_metrics_;
  std::unique_ptr<ServerMetrics> server_metrics_;  // handed to the engines
  std::unique_ptr<matching::WorkerRegistry> worker_registry_;  // workers' last heartbeats
  metrics::Gauge workflow_backlog_, activity_backlog_;  // set from matching by MetricsText
  std::unique_ptr<persistence::FaultInjector> faults_;  // null: no fault injection
  // The given clock, moved forward only by AdvanceTime (with config_.time_skipping).
  OffsetClock clock_;
  admin::ClusterMetadata cluster_;
  frontend::ServerFacts facts_;
  std::unique_ptr<persistence::Persistence> persistence_;
  bool shared_database_ = false;  // persistence_->shared_by_hosts(), read once at start
  std::unique_ptr<namespaces::NamespaceEngine> namespaces_;
  // Multi-cluster replication (server-core/replication): the known clusters, the calls to
  // remote ones, and namespace replication with them.
  std::unique_ptr<rpc::Dialer> dialer_;  // declared first: used by everything below
  std::unique_ptr<routing::PeerCredential> peer_credential_;  // the database's host secret
  std::unique_ptr<rpc::Dialer> own_calls_dialer_;  // batches' and schedules' (marked) calls
  std::unique_ptr<replication::RemoteFrontends> remote_frontends_;
  std::unique_ptr<replication::ClusterRegistry> clusters_;
  std::unique_ptr<replication::NamespaceReplicator> namespace_replicator_;
  std::unique_ptr<replication::ReplicationFaults> replication_faults_;  // tests only
  std::unique_ptr<replication::HistoryReplicator> history_replicator_;
  std::unique_ptr<replication::DlqMergeRouter> dlq_merge_router_;  // hosts sharing a database
  std::unique_ptr<replication::NamespaceActivity> namespace_activity_;
  // This process: its membership row and the owner its shard rows name. New at every start.
  const std::string host_id_ = NewUuid();
  std::unique_ptr<history::ShardController> shards_;
  std::unique_ptr<membership::MembershipMonitor> membership_;  // on a shared database only
  std::unique_ptr<membership::RingApplier> ring_applier_;      // with membership_
  std::unique_ptr<TimerThread> timer_thread_;
  std::unique_ptr<matching::MatchingEngine> matching_;
  std::unique_ptr<deployments::DeploymentRegistry> deployments_;  // Worker Deployments
  std::unique_ptr<nexus::EndpointRegistry> nexus_endpoints_;      // cluster-global
  std::unique_ptr<nexus::NexusTaskQueues> nexus_tasks_;           // never stored
  std::unique_ptr<history::HistoryEngine> history_;
  // Which host owns what; with hosts sharing the database, the connections to the others,
  // the engine's reach to them and the routing of calls to the owner (server-core/routing).
  std::unique_ptr<routing::Placement> placement_;
  std::unique_ptr<routing::Peers> peers_;
  std::unique_ptr<routing::RoutedHistory> routed_history_;
  std::unique_ptr<routing::QueuePartitions> queue_partitions_;
  std::unique_ptr<routing::CallRouter> call_router_;
  std::unique_ptr<frontend::DcRedirection> dc_redirection_;
  std::unique_ptr<frontend::HandoverGate> handover_gate_;
  std::unique_ptr<security::RateLimitInterceptor> rate_limits_;  // null: no rate limits
  std::unique_ptr<security::Authorizer> authorizer_;  // null: no authorization
  std::unique_ptr<worker::RetentionScanner> retention_;
  std::unique_ptr<archiver::ArchiveRegistry> archives_;
  std::unique_ptr<worker::Archiver> archiver_;
  std::unique_ptr<frontend::BatchOperations> batches_;
  std::unique_ptr<scheduler::Schedules> schedules_;
  // The timer service; the sender before the engine that sends through it.
  std::unique_ptr<timers::TimerService> timer_service_;
  std::unique_ptr<timers::LazyCallbackSender> callback_sender_;
  std::unique_ptr<timers::TimerRetention> timer_retention_;
  std::unique_ptr<timers::TimerEngine> timer_engine_;
  std::vector<std::string> registered_names_;
  rpc::Dispatcher dispatcher_;
  std::unique_ptr<grpc::Server> server_;
  int bound_port_ = 0;
  // Where the acceptor hands connections to gRPC; declared first: it outlives the acceptor.
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> handoff_;
  std::unique_ptr<rpc::Acceptor> acceptor_;
  std::unique_ptr<http::HttpServer> http_;  // null: metrics off
  std::unique_ptr<timers::TimerHttpApi> timer_http_api_;
  std::unique_ptr<http::HttpServer> timer_http_;  // null: no timers.http
  std::unique_ptr<http::HttpServer> ui_http_;     // the console's own listener (console.port)
  std::unique_ptr<http_api::TemporalHttpApi> temporal_http_api_;
  std::mutex in_process_mu_;
  std::shared_ptr<grpc::Channel> in_process_channel_;

  std::mutex mu_;
  std::condition_variable done_;
  bool shut_down_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<TockServer>> TockServer::Start(const ServerConfig& config,
                                                               const Env& env) {
  auto server = std::make_unique<TockServerImpl>(config, env);
  if (absl::Status s = server->Init(); !s.ok()) return s;
  return std::unique_ptr<TockServer>(std::move(server));
}

absl::StatusOr<std::unique_ptr<TockServer>> TockServer::Start(const ServerConfig& config,
                                                               Clock& clock) {
  return Start(config, QuietEnv(clock));
}

}  // namespace tock::server
