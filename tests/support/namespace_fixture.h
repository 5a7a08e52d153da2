// A namespace engine on an opened database with one namespace registered: the start of the
// in-process suites that call an engine keyed by namespace id (batches, schedules).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lib/admin/cluster_metadata.h"
#include "lib/common/clock.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/persistence/namespace_store.h"

namespace tock::testing {

// A namespace engine over `store` on a single cluster, "active".
inline std::unique_ptr<server::namespaces::NamespaceEngine> SingleClusterNamespaces(
    ::tock::persistence::NamespaceStore& store, ::tock::Clock& clock) {
  return std::make_unique<server::namespaces::NamespaceEngine>(
      store, admin::ClusterMetadata::SingleCluster("active", "127.0.0.1:7233"), clock);
}

// Registers namespace `name` and returns its id (what the stores key its records by).
inline absl::StatusOr<std::string> RegisterNamespace(server::namespaces::NamespaceEngine& engine,
                                                     const std::string& name) {
  temporal::api::workflowservice::v1::RegisterNamespaceRequest req;
  req.set_namespace_(name);
  if (auto registered = engine.Register(req); !registered.ok()) return registered.status();
  auto resolved = engine.Resolve(name, false, server::namespaces::NamespaceAccess::kRead);
  if (!resolved.ok()) return resolved.status();
  return resolved->id;
}

}  // namespace tock::testing
