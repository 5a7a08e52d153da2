// The SQLite implementations of the persistence stores (contracts in ../*_store.h).
#pragma once

#include <memory>

#include "server-core/persistence/archival_queue_store.h"
#include "server-core/persistence/batch_store.h"
#include "server-core/persistence/deployment_store.h"
#include "server-core/persistence/schedule_store.h"
#include "server-core/persistence/cluster_metadata_store.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/membership_store.h"
#include "server-core/persistence/nexus_endpoint_store.h"
#include "server-core/persistence/visibility_store.h"
#include "server-core/persistence/namespace_store.h"
#include "server-core/persistence/replication_store.h"
#include "server-core/persistence/timer_store.h"
#include "server-core/persistence/sqlite/sqlite_db.h"

namespace tock::persistence {

std::unique_ptr<NamespaceStore> NewSqliteNamespaceStore(SqliteDb& db);
std::unique_ptr<ClusterMetadataStore> NewSqliteClusterMetadataStore(SqliteDb& db);
std::unique_ptr<ExecutionStore> NewSqliteExecutionStore(SqliteDb& db);
std::unique_ptr<VisibilityStore> NewSqliteVisibilityStore(SqliteDb& db);
std::unique_ptr<ArchivalQueueStore> NewSqliteArchivalQueueStore(SqliteDb& db);
std::unique_ptr<MembershipStore> NewSqliteMembershipStore(SqliteDb& db);
std::unique_ptr<BatchStore> NewSqliteBatchStore(SqliteDb& db);
std::unique_ptr<ScheduleStore> NewSqliteScheduleStore(SqliteDb& db);
std::unique_ptr<DeploymentStore> NewSqliteDeploymentStore(SqliteDb& db);
std::unique_ptr<NexusEndpointStore> NewSqliteNexusEndpointStore(SqliteDb& db);
std::unique_ptr<ReplicationStore> NewSqliteReplicationStore(SqliteDb& db);
std::unique_ptr<TimerStore> NewSqliteTimerStore(SqliteDb& db);

}  // namespace tock::persistence
