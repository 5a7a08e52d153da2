// Graceful failover of a global namespace (reference/replication.md §4.6, Temporal's
// namespace-handover workflow done from the client with public calls): on the namespace's
// active cluster, set replication state HANDOVER (new writes wait, then fail UNAVAILABLE),
// let every host see it, read the last replication task id of each shard, wait until the
// target cluster has acknowledged them all (AdminService.GetReplicationStatus), then make
// the target active (which also sets the state back to NORMAL; the change replicates). A
// target that does not catch up within the timeout, a failed switch or a stop request puts
// the namespace back to NORMAL, still active where it was.
//
// Thread safety: as the Connection.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/client/connection.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::admin {

struct GracefulFailoverOptions {
  std::string name;        // the namespace
  std::string to_cluster;  // the cluster to make active
  // From HANDOVER to the switch (Temporal's handover timeout is at most 30 s: writes wait
  // meanwhile).
  absl::Duration timeout = absl::Seconds(30);
  // How long the hosts of the active cluster take to see a namespace change (the history
  // engine's namespace cache lives 500 ms): the task ids are read after it.
  absl::Duration settle = absl::Seconds(1);
  absl::Duration poll_interval = absl::Milliseconds(200);
  // Called with each status while waiting (may be empty).
  std::function<void(const std::string& line)> progress;
  // Asked between polls; true stops the handover (the namespace goes back to NORMAL).
  std::function<bool()> stop;
};

// The shards of `status` (one remote) whose acked task id is below `targets` (shard ->
// task id), as "shard 1: acked 12 of 40"; empty when all are acknowledged. Pure.
std::string UnacknowledgedShards(const tock::admin::v1::RemoteReplicationStatus& status,
                                 const std::map<int32_t, int64_t>& targets);

// Errors: INVALID_ARGUMENT for an empty target, a local namespace or a target not among
// its clusters; FAILED_PRECONDITION when the connection is not to the namespace's active
// cluster (the handover must be set where the writes are); DEADLINE_EXCEEDED when the
// target did not acknowledge in time; CANCELLED when stopped; the server's error otherwise.
// Failing over to the active cluster changes nothing.
absl::StatusOr<temporal::api::workflowservice::v1::DescribeNamespaceResponse>
GracefulFailoverNamespace(client::Connection& connection, const GracefulFailoverOptions& options);

}  // namespace tock::admin
