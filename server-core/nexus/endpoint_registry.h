// The Nexus endpoint registry (reference/api_2026.md §4.2): OperatorService's Create, Update,
// Delete, Get and ListNexusEndpoints with Temporal's validation and messages, over the
// cluster-global NexusEndpointStore. Every read goes to the store, so a write is visible at
// once on every host sharing the database (read-your-writes, as the temporal dev server sets
// system.forceNexusEndpointRefreshOnRead); the Nexus dispatch (issue 37 §2) finds endpoints by
// name through Find.
//
// Thread safety: safe from many threads (the store serialises; updates compare-and-swap).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "lib/common/clock.h"
#include "server-core/persistence/namespace_store.h"
#include "server-core/persistence/nexus_endpoint_store.h"
#include "temporal/api/operatorservice/v1/request_response.pb.h"

namespace tock::server::nexus {

namespace op = temporal::api::operatorservice::v1;

// Temporal's limits (limit.endpoint*): name length, description size, external URL length,
// and list page sizes.
struct EndpointLimits {
  size_t max_name_length = 200;
  size_t max_description_bytes = 20000;
  size_t max_url_length = 4096;
  size_t max_task_queue_length = 1000;
  int32_t default_page_size = 100;
  int32_t max_page_size = 1000;
};

class EndpointRegistry {
 public:
  EndpointRegistry(persistence::NexusEndpointStore& store, persistence::NamespaceStore& namespaces,
                   Clock& clock, EndpointLimits limits = {});

  absl::StatusOr<op::CreateNexusEndpointResponse> Create(const op::CreateNexusEndpointRequest& req);
  absl::StatusOr<op::UpdateNexusEndpointResponse> Update(const op::UpdateNexusEndpointRequest& req);
  absl::StatusOr<op::DeleteNexusEndpointResponse> Delete(const op::DeleteNexusEndpointRequest& req);
  absl::StatusOr<op::GetNexusEndpointResponse> Get(const op::GetNexusEndpointRequest& req);
  absl::StatusOr<op::ListNexusEndpointsResponse> List(const op::ListNexusEndpointsRequest& req);

  // The endpoint of `name` as clients see it (its worker target by namespace name); NOT_FOUND.
  absl::StatusOr<persistence::NexusEndpoint> Find(const std::string& name);

 private:
  // Temporal's validateUpsertSpec: the spec to store (its worker target by namespace id), or
  // INVALID_ARGUMENT with every issue, or FAILED_PRECONDITION for an unknown namespace.
  absl::StatusOr<temporal::api::nexus::v1::EndpointSpec> Validated(
      const temporal::api::nexus::v1::EndpointSpec& spec);
  // A stored endpoint as clients see it: the namespace by name, its URL prefix. `names`
  // (namespace id -> name) keeps the lookups of one page to one read per namespace.
  persistence::NexusEndpoint Rendered(persistence::NexusEndpoint stored,
                                      std::map<std::string, std::string>* names = nullptr);

  persistence::NexusEndpointStore& store_;
  persistence::NamespaceStore& namespaces_;
  Clock& clock_;
  const EndpointLimits limits_;
};

}  // namespace tock::server::nexus
