// gRPC adapters of the replication DLQ (reference/replication.md §3.8): AdminService's
// GetDLQMessages, PurgeDLQMessages and MergeDLQMessages, for operators (`tock cluster dlq`).
#pragma once

#include "server-core/persistence/replication_store.h"
#include "server-core/replication/cluster_registry.h"
#include "server-core/replication/history_replicator.h"
#include "server-core/rpc/dispatcher.h"

namespace tock::server::replication {

void RegisterDlqHandlers(rpc::Dispatcher& dispatcher, ClusterRegistry& clusters,
                         HistoryReplicator& histories, persistence::ReplicationStore& store);

}  // namespace tock::server::replication
