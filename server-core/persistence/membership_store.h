// Which hosts serve this database, and which host owns which history shard.
//
// Membership lives in the database the hosts already share (seed 003's "instances claim
// shards"; Temporal seeds its ring from a cluster_membership table the same way): each host
// upserts a row on a period, and a host is alive while its last heartbeat is newer than a
// cutoff. Heartbeat ages are measured on the DATABASE's clock, so hosts whose clocks differ
// still agree on who is alive.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tock::persistence {

struct HostRecord {
  std::string host_id;         // unique per process start
  std::string address;         // host:port where peers and clients reach it
  absl::Time session_start;    // when the process started
  absl::Time last_heartbeat;   // database time of its last heartbeat
  absl::Duration heartbeat_age;  // database now - last_heartbeat, when listed
};

struct ShardRecord {
  int32_t shard_id = 0;
  int64_t range_id = 0;
  std::string owner;           // the owner string given to ExecutionStore::AcquireShard
  absl::Time claimed;          // when that owner took it
};

class MembershipStore {
 public:
  virtual ~MembershipStore() = default;

  // Writes this host's row (creating it) with last_heartbeat = the database's now.
  virtual absl::Status Heartbeat(const std::string& host_id, const std::string& address,
                                 absl::Time session_start) = 0;
  // Every row with its heartbeat age, freshest first. Rows whose heartbeat is older than
  // `forget_after` are deleted first (a dead host's row is kept for a while so an operator
  // sees it in `tock cluster members`).
  virtual absl::StatusOr<std::vector<HostRecord>> ListHosts(absl::Duration forget_after) = 0;
  // Removes this host's row (a graceful stop: the others take its shards without waiting
  // for the cutoff).
  virtual absl::Status Leave(const std::string& host_id) = 0;
  // Every shard row, by shard id.
  virtual absl::StatusOr<std::vector<ShardRecord>> ListShards() = 0;
};

}  // namespace tock::persistence
