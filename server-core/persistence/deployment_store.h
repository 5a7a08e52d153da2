// Worker Deployments (reference/api_2026.md §3.3): one record per (namespace id, deployment
// name) holding its versions and routing config. Every change is a compare-and-swap on the
// row's revision, so the calls and the pollers' registrations of every host serialise:
// read, change, Update with the revision read, and on ABORTED read again
// (server-core/deployments/deployment_registry.h).
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tock/persistence/v1/deployment.pb.h"

namespace tock::persistence {

using WorkerDeploymentRecord = tock::persistence::v1::WorkerDeploymentRecord;

struct StoredDeployment {
  WorkerDeploymentRecord record;
  int64_t revision = 0;  // 1 when created, +1 by each Update
};

class DeploymentStore {
 public:
  virtual ~DeploymentStore() = default;
  // ALREADY_EXISTS when the namespace has a deployment of this name.
  virtual absl::Status Create(const WorkerDeploymentRecord& record) = 0;
  // Replaces the record when its revision is still `revision` (it becomes revision + 1).
  // NOT_FOUND when there is none; ABORTED when another change came first.
  virtual absl::Status Update(const WorkerDeploymentRecord& record, int64_t revision) = 0;
  // NOT_FOUND when there is none.
  virtual absl::StatusOr<StoredDeployment> Get(const std::string& namespace_id,
                                               const std::string& name) = 0;
  // Deletes the record when its revision is still `revision`: NOT_FOUND when there is none,
  // ABORTED when another change came first.
  virtual absl::Status Delete(const std::string& namespace_id, const std::string& name,
                              int64_t revision) = 0;
  // The namespace's deployments by name, those after `after_name` (all with ""), at most
  // `limit`.
  virtual absl::StatusOr<std::vector<StoredDeployment>> List(const std::string& namespace_id,
                                                             const std::string& after_name,
                                                             int32_t limit) = 0;
  // Every namespace's deployments ordered by (namespace id, name), those after the given
  // pair, at most `limit`: how a host refreshes the routing it holds in memory.
  virtual absl::StatusOr<std::vector<StoredDeployment>> ListAll(
      const std::string& after_namespace_id, const std::string& after_name, int32_t limit) = 0;
};

}  // namespace tock::persistence
