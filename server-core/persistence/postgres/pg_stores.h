// The PostgreSQL implementations of the persistence stores (contracts in ../*_store.h).
// Each store is built over the one pool of its Persistence and may be used from any
// thread; the schema (pg_schema.h) must have been applied to the pool's database.
#pragma once

#include <memory>

#include "server-core/persistence/archival_queue_store.h"
#include "server-core/persistence/batch_store.h"
#include "server-core/persistence/deployment_store.h"
#include "server-core/persistence/nexus_endpoint_store.h"
#include "server-core/persistence/schedule_store.h"
#include "server-core/persistence/cluster_metadata_store.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/persistence/membership_store.h"
#include "server-core/persistence/namespace_store.h"
#include "server-core/persistence/postgres/pg_db.h"
#include "server-core/persistence/replication_store.h"
#include "server-core/persistence/timer_store.h"
#include "server-core/persistence/visibility_store.h"

namespace tock::persistence {

std::unique_ptr<NamespaceStore> NewPostgresNamespaceStore(PgPool& pool);
std::unique_ptr<ClusterMetadataStore> NewPostgresClusterMetadataStore(PgPool& pool);
std::unique_ptr<ExecutionStore> NewPostgresExecutionStore(PgPool& pool);
std::unique_ptr<VisibilityStore> NewPostgresVisibilityStore(PgPool& pool);
std::unique_ptr<ArchivalQueueStore> NewPostgresArchivalQueueStore(PgPool& pool);
std::unique_ptr<BatchStore> NewPostgresBatchStore(PgPool& pool);
std::unique_ptr<ScheduleStore> NewPostgresScheduleStore(PgPool& pool);
std::unique_ptr<DeploymentStore> NewPostgresDeploymentStore(PgPool& pool);
std::unique_ptr<NexusEndpointStore> NewPostgresNexusEndpointStore(PgPool& pool);
std::unique_ptr<ReplicationStore> NewPostgresReplicationStore(PgPool& pool);
std::unique_ptr<MembershipStore> NewPostgresMembershipStore(PgPool& pool);
std::unique_ptr<TimerStore> NewPostgresTimerStore(PgPool& pool);

}  // namespace tock::persistence
