// gRPC adapters of replication: OperatorService's remote-cluster calls and the AdminService
// calls other clusters make to pull.
#pragma once

#include "server-core/replication/cluster_registry.h"
#include "server-core/replication/history_replicator.h"
#include "server-core/replication/namespace_replicator.h"
#include "server-core/rpc/dispatcher.h"

namespace tock::server::replication {

void RegisterReplicationHandlers(rpc::Dispatcher& dispatcher, ClusterRegistry& clusters,
                                 NamespaceReplicator& namespaces, HistoryReplicator& histories,
                                 persistence::ReplicationStore& store, int32_t shard_count);

}  // namespace tock::server::replication
