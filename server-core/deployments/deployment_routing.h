// Where matching sends each task of a versioned task queue (reference/api_2026.md §3.3.4),
// read from the namespace's Worker Deployments: an immutable snapshot built from their
// records, consulted under matching's lock (nothing here reads the database or blocks).
//
// A version is named "deployment:build" (deployment names hold no ':'); "" stands for the
// unversioned workers. A queue (name, kind) is versioned when some version's pollers
// registered it. The target of a task on a versioned queue:
//   - a task of a run pinned to a version that polls the queue: that version (a pinned
//     run's activity on a queue its version does not poll is an "independent activity" and
//     routes as if unpinned);
//   - otherwise the queue's deployment's ramping version for the ramp's share of workflow
//     ids (a stable hash of the id, so every task of one workflow chooses alike), else its
//     current version; a current or ramping version that does not poll this queue, or none
//     set, sends the task to the unversioned workers.
// A sticky task stays with its sticky worker (sticky queues are not versioned) unless its
// unpinned run's target has moved to another version: it then goes to the normal queue.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "server-core/persistence/deployment_store.h"
#include "server-core/persistence/execution_store.h"

namespace tock::server::deployments {

// "deployment:build", the name matching and the runs' search attributes use.
std::string VersionName(const std::string& deployment, const std::string& build_id);
// Temporal's ramp threshold of a workflow id, in [0, 100): a ramp of P % takes the ids below
// P (FNV-1a with MurmurHash3's finalizer; any stable hash serves: reference §3.3.4).
double RampThreshold(const std::string& workflow_id);

class DeploymentRouting {
 public:
  // Built from every deployment record of one namespace.
  explicit DeploymentRouting(const std::vector<persistence::WorkerDeploymentRecord>& records);

  // Whether some version's pollers registered (queue, kind).
  bool Versioned(const std::string& task_queue, persistence::TaskKind kind) const {
    return queues_.contains({task_queue, kind});
  }
  // Whether `version` registered (queue, kind).
  bool Polls(const std::string& version, const std::string& task_queue,
             persistence::TaskKind kind) const;
  // The version `task` must go to ("" for the unversioned workers), as described above; for
  // a sticky task, the target of its normal queue.
  std::string TargetOf(const persistence::TaskQueueTask& task) const;
  // The target of an unpinned task of `workflow_id` on (queue, kind).
  std::string UnpinnedTarget(const std::string& task_queue, persistence::TaskKind kind,
                             const std::string& workflow_id) const;

 private:
  struct QueueRouting {
    std::set<std::string> versions;  // the versions that registered the queue
    std::string current;             // "" unversioned
    std::string ramping;             // "" unversioned (when ramp > 0)
    float ramp = 0;                  // percentage of workflow ids sent to `ramping`
    bool routed = false;             // a deployment's routing was applied
    int64_t changed_nanos = 0;       // the routing's last change (the latest deployment wins)
  };
  std::map<std::pair<std::string, persistence::TaskKind>, QueueRouting> queues_;
};

}  // namespace tock::server::deployments
