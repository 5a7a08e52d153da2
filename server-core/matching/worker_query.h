// The query language of ListWorkers / CountWorkers (Temporal's worker_query_engine.go), over
// the fields of a worker's last heartbeat, evaluated in memory:
//
//   TaskQueue = 'orders' AND WorkerStatus = 'Running'
//   SdkName STARTS_WITH 'temporal-' OR HeartbeatTime > '2026-11-29T08:00:00Z'
//   (HostName = 'web-1' OR HostName = 'web-2') AND BuildId IS NOT NULL
//
// Fields: WorkerInstanceKey, WorkerIdentity, HostName, TaskQueue, DeploymentName, BuildId,
// SdkName, SdkVersion, WorkerStatus (or Status: Running, ShuttingDown, Shutdown), and the
// times StartTime and HeartbeatTime. Strings take = != STARTS_WITH, NOT STARTS_WITH and
// IS [NOT] NULL (empty); times = != > >= < <= and BETWEEN x AND y, in RFC 3339. AND binds
// tighter than OR; parentheses group; keywords are case-insensitive. An empty query matches
// every worker.
//
// Bounded: at most kMaxWorkerQueryBytes of text and kMaxWorkerQueryDepth nested
// parentheses; a malformed query is INVALID_ARGUMENT naming the token and its position,
// quoting at most 64 bytes of it.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "temporal/api/worker/v1/message.pb.h"

namespace tock::server::matching {

inline constexpr size_t kMaxWorkerQueryBytes = 16 * 1024;
inline constexpr int kMaxWorkerQueryDepth = 32;

class WorkerQuery {
 public:
  struct Node;
  // The query compiled, or INVALID_ARGUMENT.
  static absl::StatusOr<WorkerQuery> Compile(absl::string_view text);

  bool Matches(const temporal::api::worker::v1::WorkerHeartbeat& worker) const;

 private:
  std::shared_ptr<const Node> root_;  // null: every worker
};

}  // namespace tock::server::matching
