// Nexus endpoints (reference/api_2026.md §4.2): cluster-global, one row per endpoint, keyed
// by its id (a UUID) with a unique name. The row holds Temporal's Endpoint with its version;
// a worker target names its namespace by id (rendered by name by the registry). Updates
// compare-and-swap on the version, so writers on every host serialise.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "temporal/api/nexus/v1/message.pb.h"

namespace tock::persistence {

using NexusEndpoint = temporal::api::nexus::v1::Endpoint;

class NexusEndpointStore {
 public:
  virtual ~NexusEndpointStore() = default;
  // Stores a new endpoint (its id, name and version set by the caller). ALREADY_EXISTS when
  // an endpoint has its name (or its id).
  virtual absl::Status Create(const NexusEndpoint& endpoint) = 0;
  // Replaces the endpoint of `endpoint.id()` when its stored version is still `version`.
  // NOT_FOUND when there is none; ABORTED when another change came first; ALREADY_EXISTS
  // when another endpoint has the new name.
  virtual absl::Status Update(const NexusEndpoint& endpoint, int64_t version) = 0;
  // NOT_FOUND when there is none.
  virtual absl::StatusOr<NexusEndpoint> Get(const std::string& id) = 0;
  virtual absl::StatusOr<NexusEndpoint> GetByName(const std::string& name) = 0;
  // NOT_FOUND when there is none.
  virtual absl::Status Delete(const std::string& id) = 0;
  // The endpoints by id, those after `after_id` (all with ""), at most `limit`.
  virtual absl::StatusOr<std::vector<NexusEndpoint>> List(const std::string& after_id,
                                                          int32_t limit) = 0;
};

}  // namespace tock::persistence
