// Whether a namespace is active on this cluster, as the history service sees it: what its
// timers, follow-up work and writes may do here (SPEC §2.2, reference/replication.md §4).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace tock::server::history {

// Temporal's ErrNamespaceHandover (UNAVAILABLE): a write of a namespace in handover.
inline constexpr char kNamespaceHandoverMessage[] =
    "Namespace replication in REPLICATION_STATE_HANDOVER state.";

struct NamespaceActivity {
  bool active = true;
  int64_t failover_version = -1;  // -1: a local namespace (events keep the run's version)
  // The clusters' failover version increment: versions equal modulo it are of one cluster
  // (0: unknown).
  int64_t version_increment = 0;
  // For the NamespaceNotActive error of a write refused here.
  std::string name, active_cluster, current_cluster;
  // Replication state HANDOVER here: a graceful failover waits for the other cluster to
  // acknowledge every replication task, so no write may add one (kNamespaceHandoverMessage).
  bool handover = false;
  // The namespace's state could not be read (a store error). Then `active` is false: its
  // timers and follow-up work wait (parked) and its writes are refused with
  // NamespaceStateUnknown (UNAVAILABLE, retried) until the state is known, never done as
  // if active (which on a standby would write events under the active cluster's version).
  bool unknown = false;
};

// Where the engine learns a namespace's activity (by id). Unset: every namespace is active,
// at the version of each run's last event.
using ActivityOf = std::function<NamespaceActivity(const std::string& namespace_id)>;

// UNAVAILABLE: whether `namespace_id` is active here could not be read; retry.
absl::Status NamespaceStateUnknown(const std::string& namespace_id);

}  // namespace tock::server::history
