#include "lib/admin/graceful_failover.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/admin/cluster_ops.h"
#include "lib/admin/namespace_ops.h"

namespace tock::admin {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace enums = temporal::api::enums::v1;
using WorkflowStub = wf::WorkflowService::Stub;

absl::Status SetReplicationState(client::Connection& connection, const std::string& name,
                                 enums::ReplicationState state) {
  wf::UpdateNamespaceRequest req;
  req.set_namespace_(name);
  req.mutable_replication_config()->set_state(state);
  return connection.Call(&WorkflowStub::UpdateNamespace, connection.workflow(), req, name)
      .status();
}

// The remote's row of a status answer for one remote.
absl::StatusOr<tock::admin::v1::RemoteReplicationStatus> RemoteStatus(
    client::Connection& connection, const std::string& remote) {
  absl::StatusOr<tock::admin::v1::GetReplicationStatusResponse> status =
      GetReplicationStatus(connection, remote);
  if (!status.ok()) return status.status();
  for (const auto& r : status->remotes()) {
    if (r.cluster_name() == remote) return r;
  }
  return absl::NotFoundError(absl::StrCat("no remote cluster is named \"", remote,
                                          "\" (tock cluster list shows them)"));
}

// Sleeps `d` in slices, so that a stop request is seen at once; true when stopped.
bool SleepUnlessStopped(absl::Duration d, const GracefulFailoverOptions& o) {
  const absl::Time until = absl::Now() + d;
  while (absl::Now() < until) {
    if (o.stop && o.stop()) return true;
    absl::SleepFor(std::min(absl::Milliseconds(25), until - absl::Now()));
  }
  return o.stop && o.stop();
}

// Waits until `to` acknowledged every task this cluster had when the handover began.
absl::Status WaitForAcks(client::Connection& connection, const GracefulFailoverOptions& o,
                         absl::Time deadline) {
  if (SleepUnlessStopped(o.settle, o)) {
    return absl::CancelledError("stopped");
  }
  absl::StatusOr<tock::admin::v1::RemoteReplicationStatus> first =
      RemoteStatus(connection, o.to_cluster);
  if (!first.ok()) return first.status();
  std::map<int32_t, int64_t> targets;
  for (const auto& shard : first->outbound()) targets[shard.shard_id()] = shard.max_task_id();
  tock::admin::v1::RemoteReplicationStatus now = *first;
  for (;;) {
    const std::string behind = UnacknowledgedShards(now, targets);
    if (behind.empty()) return absl::OkStatus();
    if (o.progress) o.progress(absl::StrCat("waiting for cluster ", o.to_cluster, ": ", behind));
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "cluster ", o.to_cluster, " did not acknowledge every replication task within ",
          absl::FormatDuration(o.timeout), " (", behind, ")"));
    }
    if (SleepUnlessStopped(std::min(o.poll_interval, deadline - absl::Now()), o)) {
      return absl::CancelledError("stopped");
    }
    absl::StatusOr<tock::admin::v1::RemoteReplicationStatus> next =
        RemoteStatus(connection, o.to_cluster);
    if (!next.ok()) return next.status();
    now = *std::move(next);
  }
}

}  // namespace

std::string UnacknowledgedShards(const tock::admin::v1::RemoteReplicationStatus& status,
                                 const std::map<int32_t, int64_t>& targets) {
  std::vector<std::string> behind;
  for (const auto& [shard, target] : targets) {
    int64_t acked = -1;
    for (const auto& s : status.outbound()) {
      if (s.shard_id() == shard) acked = s.acked_task_id();
    }
    if (acked < target) behind.push_back(absl::StrCat("shard ", shard, ": acked ", acked, " of ", target));
  }
  return absl::StrJoin(behind, ", ");
}

absl::StatusOr<wf::DescribeNamespaceResponse> GracefulFailoverNamespace(
    client::Connection& connection, const GracefulFailoverOptions& o) {
  if (o.to_cluster.empty()) {
    return absl::InvalidArgumentError("the target cluster is empty; use --to CLUSTER");
  }
  absl::StatusOr<wf::DescribeNamespaceResponse> ns = DescribeNamespace(connection, o.name);
  if (!ns.ok()) return ns.status();
  if (!ns->is_global_namespace()) {
    return absl::InvalidArgumentError(
        absl::StrCat("namespace ", o.name, " is local: only a global namespace fails over"));
  }
  const auto& replication = ns->replication_config();
  const std::string& active = replication.active_cluster_name();
  if (active == o.to_cluster) return ns;  // nothing to hand over
  std::vector<std::string> clusters;
  for (const auto& c : replication.clusters()) clusters.push_back(c.cluster_name());
  if (std::find(clusters.begin(), clusters.end(), o.to_cluster) == clusters.end()) {
    return absl::InvalidArgumentError(absl::StrCat("cluster ", o.to_cluster,
                                                   " is not a cluster of namespace ", o.name, " (",
                                                   absl::StrJoin(clusters, ", "), ")"));
  }
  auto info = connection.Call(&WorkflowStub::GetClusterInfo, connection.workflow(),
                              wf::GetClusterInfoRequest());
  if (!info.ok()) return info.status();
  if (info->cluster_name() != active) {
    return absl::FailedPreconditionError(absl::StrCat(
        "namespace ", o.name, " is active in cluster ", active, ", and this is cluster ",
        info->cluster_name(), ": a graceful failover holds the writes where they are made, so "
        "run it against cluster ", active, " (--address)"));
  }

  const absl::Time deadline = absl::Now() + o.settle + o.timeout;
  if (absl::Status s = SetReplicationState(connection, o.name, enums::REPLICATION_STATE_HANDOVER);
      !s.ok()) {
    return s;
  }
  absl::Status waited = WaitForAcks(connection, o, deadline);
  if (waited.ok()) {
    absl::StatusOr<wf::DescribeNamespaceResponse> switched =
        FailoverNamespace(connection, o.name, o.to_cluster);
    if (switched.ok()) return switched;
    waited = switched.status();
  }
  // Back to NORMAL where it was, whatever went wrong (Temporal's deferred reset).
  absl::Status reset = SetReplicationState(connection, o.name, enums::REPLICATION_STATE_NORMAL);
  const std::string after =
      reset.ok() ? absl::StrCat("namespace ", o.name, " stays active in cluster ", active,
                                ", replication state NORMAL again")
                 : absl::StrCat("namespace ", o.name, " may still be in HANDOVER on cluster ",
                                active, " (setting it back to NORMAL failed: ", reset.message(),
                                "; tock namespace update ", o.name,
                                " --replication-state normal does it)");
  if (absl::IsCancelled(waited)) {
    return absl::CancelledError(absl::StrCat("graceful failover stopped; ", after));
  }
  return absl::Status(waited.code(), absl::StrCat(waited.message(), "; ", after));
}

}  // namespace tock::admin
