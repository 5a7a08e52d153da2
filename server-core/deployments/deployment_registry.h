// Worker Deployments (reference/api_2026.md §3.3): the 13 WorkflowService calls' semantics,
// the registration of versions by their pollers, drainage, and the routing snapshot matching
// reads on every task.
//
// State is one record per deployment in the database (persistence/deployment_store.h).
// Every change reads it, applies the call's rules, and writes it back by compare-and-swap
// on its revision, reading again when another host's change came first: the calls and
// registrations of every host serialise on the record as Temporal's updates serialise on its
// deployment workflow. Each host keeps every namespace's records in memory, read again every
// kRefreshInterval (and after its own writes at once), and builds from them the routing
// snapshot (deployment_routing.h) matching consults without touching the database; another
// host's routing change reaches this host's matching within that interval (Temporal
// propagates routing to task-queue user data asynchronously too).
//
// Drainage: a version that stops being current or ramping becomes DRAINING; after
// `drainage_grace`, and then every `drainage_refresh`, the open pinned runs on it are
// counted (visibility, the hook given to Start) and none makes it DRAINED.
//
// Thread safety: safe from any thread. Routing() takes only a short lock.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "lib/common/blocking_pool.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/timer_thread.h"
#include "server-core/deployments/deployment_routing.h"
#include "server-core/persistence/deployment_store.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::deployments {

namespace wf = temporal::api::workflowservice::v1;

// Temporal's rules for the names a versioned poller or a call gives (reference §3.3.3):
// both set, each at most kMaxNameBytes, neither starting with "__", no ':' or '.' in the
// deployment name.
inline constexpr size_t kMaxNameBytes = 480;  // (MaxIDLengthLimit - 39) / 2
absl::Status CheckDeploymentName(const std::string& name);
absl::Status CheckBuildId(const std::string& build_id);

struct DeploymentLimits {
  // Temporal's dynamic config defaults (reference §3.3.3).
  int max_deployments = 100;                    // matching.maxDeployments, per namespace
  int max_versions_in_deployment = 100;         // matching.maxVersionsInDeployment
  int max_task_queues_in_version = 100;         // matching.maxTaskQueuesInDeploymentVersion
  int max_task_queues_in_deployment = 1000;     // matching.maxTaskQueuesInDeployment
  int max_versions_in_task_queue = 200;         // matching.maxVersionsInTaskQueue
  absl::Duration poller_ttl = absl::Minutes(5);  // matching.PollerHistoryTTL
  absl::Duration drainage_grace = absl::Minutes(3);
  absl::Duration drainage_refresh = absl::Minutes(3);
  // With hosts sharing the database: how long a routing change (current or ramping version)
  // waits before it answers, so that every host has read it by then (each reads every
  // kRefreshInterval) and routes by it, as Temporal's answer waits for the task queues to have
  // the new routing. Zero on one host, whose routing changes with the write.
  absl::Duration routing_propagation = absl::ZeroDuration();
};

class DeploymentRegistry {
 public:
  static constexpr absl::Duration kRefreshInterval = absl::Seconds(1);
  // How often a host writes a version's last poll time (its pollers keep it alive).
  static constexpr absl::Duration kPollRecordInterval = absl::Minutes(1);
  static constexpr int kMaxPageSize = 1000;

  DeploymentRegistry(persistence::DeploymentStore& store, Clock& clock, TimerThread& timers,
                     Logger& logger, DeploymentLimits limits = {});
  ~DeploymentRegistry();

  // Counts the open runs pinned to a version ("deployment:build") in a namespace.
  using CountPinned = std::function<absl::StatusOr<int64_t>(const std::string& namespace_id,
                                                            const std::string& version)>;
  // Told (without this registry's lock) that a namespace's routing changed, so that matching
  // matches its held tasks again (MatchingEngine::Rematch). Set once, before Start.
  void OnRoutingChanged(std::function<void(const std::string& namespace_id)> hook) {
    routing_changed_ = std::move(hook);
  }
  // Reads the records, then refreshes every kRefreshInterval and checks drainage.
  void Start(CountPinned count_pinned);
  void Stop();

  // The namespace's routing (never null; empty when it has no deployments).
  std::shared_ptr<const DeploymentRouting> Routing(const std::string& namespace_id) const;

  // A versioned worker polls (queue, kind) as `deployment`/`build_id` (validated by the
  // frontend): creates the deployment and the version and adds the queue on the first poll,
  // within the limits (RESOURCE_EXHAUSTED beyond them), and keeps the version's last poll
  // time. Reads only memory once the queue is registered.
  absl::Status RegisterPoller(const std::string& namespace_id, const std::string& task_queue,
                              persistence::TaskKind kind, const std::string& deployment,
                              const std::string& build_id);

  // The calls, for the namespace whose id is given (requests as the client sent them).
  absl::StatusOr<wf::DescribeWorkerDeploymentResponse> Describe(
      const std::string& namespace_id, const wf::DescribeWorkerDeploymentRequest& req);
  absl::StatusOr<wf::ListWorkerDeploymentsResponse> List(
      const std::string& namespace_id, const wf::ListWorkerDeploymentsRequest& req);
  absl::StatusOr<wf::DescribeWorkerDeploymentVersionResponse> DescribeVersion(
      const std::string& namespace_id, const wf::DescribeWorkerDeploymentVersionRequest& req);
  absl::StatusOr<wf::SetWorkerDeploymentCurrentVersionResponse> SetCurrent(
      const std::string& namespace_id, const wf::SetWorkerDeploymentCurrentVersionRequest& req);
  absl::StatusOr<wf::SetWorkerDeploymentRampingVersionResponse> SetRamping(
      const std::string& namespace_id, const wf::SetWorkerDeploymentRampingVersionRequest& req);
  absl::Status DeleteVersion(const std::string& namespace_id,
                             const wf::DeleteWorkerDeploymentVersionRequest& req);
  absl::Status DeleteDeployment(const std::string& namespace_id,
                                const wf::DeleteWorkerDeploymentRequest& req);
  absl::StatusOr<wf::UpdateWorkerDeploymentVersionMetadataResponse> UpdateMetadata(
      const std::string& namespace_id,
      const wf::UpdateWorkerDeploymentVersionMetadataRequest& req);
  absl::StatusOr<wf::SetWorkerDeploymentManagerResponse> SetManager(
      const std::string& namespace_id, const wf::SetWorkerDeploymentManagerRequest& req);
  absl::StatusOr<wf::CreateWorkerDeploymentResponse> CreateDeployment(
      const std::string& namespace_id, const wf::CreateWorkerDeploymentRequest& req);
  absl::StatusOr<wf::CreateWorkerDeploymentVersionResponse> CreateVersion(
      const std::string& namespace_id, const wf::CreateWorkerDeploymentVersionRequest& req);

  // Reads every record again and rebuilds the routing of the namespaces that changed.
  absl::Status Refresh();
  // Checks the DRAINING versions whose check is due with `count` (Start runs it with the
  // refresh and its hook).
  void CheckDrainage(const CountPinned& count);

 private:
  using Record = persistence::WorkerDeploymentRecord;
  // What a change function decides: write the record, leave it (a no-op call answers
  // success without a write, as Temporal does), or delete it.
  enum class Change { kWrite, kUnchanged, kDelete };
  using ChangeFn = std::function<absl::StatusOr<Change>(Record& record, bool created)>;
  // Reads the deployment (a new empty one when missing and `create`), applies `fn`, writes
  // it by compare-and-swap, again on a lost race; the record as written (or left). A missing
  // deployment answers `missing` (by default Temporal's NOT_FOUND for a deployment).
  absl::StatusOr<Record> Apply(const std::string& namespace_id, const std::string& name,
                               bool create, const ChangeFn& fn,
                               absl::Status missing = absl::OkStatus());
  // Installs a record this host wrote (or deleted: nullptr) in memory.
  void Install(const std::string& namespace_id, const std::string& name, const Record* record,
               int64_t revision);
  void RebuildLocked(const std::string& namespace_id);
  void Tell(const std::vector<std::string>& changed) const;
  // A client's change: its identity as the last modifier, and a new conflict token.
  void Modified(Record& d, const std::string& identity);
  // A new conflict token, after `previous` (the update time in nanoseconds, big-endian).
  std::string NewToken(const std::string& previous);
  // After a routing change was written: waits limits_.routing_propagation (see there).
  void AwaitPropagation() const;
  void ScheduleTick();
  void Tick();

  persistence::DeploymentStore& store_;
  Clock& clock_;
  TimerThread& timers_;
  Logger& logger_;
  const DeploymentLimits limits_;
  CountPinned count_pinned_;
  std::function<void(const std::string&)> routing_changed_;

  mutable std::mutex mu_;
  struct Namespace {
    std::map<std::string, persistence::StoredDeployment> deployments;  // by name
    std::shared_ptr<const DeploymentRouting> routing;
  };
  std::map<std::string, Namespace> namespaces_;  // by namespace id
  // When this host last wrote each version's last poll time: (namespace id, version).
  std::map<std::pair<std::string, std::string>, absl::Time> poll_recorded_;
  TimerThread::Id tick_ = 0;
  std::atomic<bool> stopping_{false};
  BlockingPool pool_{1, 4, "deployments"};
};

}  // namespace tock::server::deployments
