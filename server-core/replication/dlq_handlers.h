// gRPC adapters of the replication DLQs (reference/replication.md §2.2, §3.8): AdminService's
// GetDLQMessages, PurgeDLQMessages and MergeDLQMessages, for operators (`tock cluster dlq`),
// on the history DLQ or (selection type namespace) the namespace DLQ; and
// GetDLQReplicationMessages, the source side of another cluster's merge.
#pragma once

#include "server-core/persistence/replication_store.h"
#include "server-core/replication/cluster_registry.h"
#include "server-core/replication/history_replicator.h"
#include "server-core/replication/namespace_replicator.h"
#include "server-core/rpc/dispatcher.h"

namespace tock::server::replication {

void RegisterDlqHandlers(rpc::Dispatcher& dispatcher, ClusterRegistry& clusters,
                         NamespaceReplicator& namespaces, HistoryReplicator& histories,
                         persistence::ReplicationStore& store);

}  // namespace tock::server::replication
