#include "server-core/persistence/postgres/postgres_persistence.h"

#include "server-core/persistence/postgres/pg_schema.h"
#include "server-core/persistence/postgres/pg_stores.h"

namespace tock::persistence {
namespace {

class PostgresPersistence : public Persistence {
 public:
  explicit PostgresPersistence(std::unique_ptr<PgPool> pool)
      : pool_(std::move(pool)),
        namespaces_(NewPostgresNamespaceStore(*pool_)),
        cluster_metadata_(NewPostgresClusterMetadataStore(*pool_)),
        executions_(NewPostgresExecutionStore(*pool_)),
        visibility_(NewPostgresVisibilityStore(*pool_)),
        archival_queue_(NewPostgresArchivalQueueStore(*pool_)),
        membership_(NewPostgresMembershipStore(*pool_)) {}

  NamespaceStore& namespaces() override { return *namespaces_; }
  ClusterMetadataStore& cluster_metadata() override { return *cluster_metadata_; }
  ExecutionStore& executions() override { return *executions_; }
  VisibilityStore& visibility() override { return *visibility_; }
  ArchivalQueueStore& archival_queue() override { return *archival_queue_; }
  MembershipStore& membership() override { return *membership_; }
  std::string engine() const override { return "postgres"; }
  // postgresql://USER@HOST:PORT/DB: never the password.
  std::string location() const override { return pool_->location(); }

 private:
  // Declared first: destroyed last, after every store that uses it.
  std::unique_ptr<PgPool> pool_;
  std::unique_ptr<NamespaceStore> namespaces_;
  std::unique_ptr<ClusterMetadataStore> cluster_metadata_;
  std::unique_ptr<ExecutionStore> executions_;
  std::unique_ptr<VisibilityStore> visibility_;
  std::unique_ptr<ArchivalQueueStore> archival_queue_;
  std::unique_ptr<MembershipStore> membership_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Persistence>> OpenPostgresPersistence(const std::string& url,
                                                                     int max_connections) {
  PgPoolOptions options;
  options.max_connections = max_connections;
  absl::StatusOr<std::unique_ptr<PgPool>> pool = PgPool::Open(url, options);
  if (!pool.ok()) return pool.status();
  if (absl::Status s = MigratePostgres(**pool); !s.ok()) return s;
  return std::unique_ptr<Persistence>(new PostgresPersistence(std::move(*pool)));
}

}  // namespace tock::persistence
