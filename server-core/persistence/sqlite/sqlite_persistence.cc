#include "server-core/persistence/sqlite/sqlite_persistence.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/sqlite/sqlite_schema.h"
#include "server-core/persistence/sqlite/sqlite_stores.h"

namespace tock::persistence {
namespace {

class SqlitePersistence : public Persistence {
 public:
  explicit SqlitePersistence(std::unique_ptr<SqliteDb> db)
      : db_(std::move(db)),
        namespaces_(NewSqliteNamespaceStore(*db_)),
        cluster_metadata_(NewSqliteClusterMetadataStore(*db_)),
        executions_(NewSqliteExecutionStore(*db_)),
        visibility_(NewSqliteVisibilityStore(*db_)),
        archival_queue_(NewSqliteArchivalQueueStore(*db_)),
        membership_(NewSqliteMembershipStore(*db_)) {}

  NamespaceStore& namespaces() override { return *namespaces_; }
  ClusterMetadataStore& cluster_metadata() override { return *cluster_metadata_; }
  ExecutionStore& executions() override { return *executions_; }
  VisibilityStore& visibility() override { return *visibility_; }
  ArchivalQueueStore& archival_queue() override { return *archival_queue_; }
  MembershipStore& membership() override { return *membership_; }
  std::string engine() const override { return "sqlite"; }
  std::string location() const override { return db_->location(); }

 private:
  std::unique_ptr<SqliteDb> db_;
  std::unique_ptr<NamespaceStore> namespaces_;
  std::unique_ptr<ClusterMetadataStore> cluster_metadata_;
  std::unique_ptr<ExecutionStore> executions_;
  std::unique_ptr<VisibilityStore> visibility_;
  std::unique_ptr<ArchivalQueueStore> archival_queue_;
  std::unique_ptr<MembershipStore> membership_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Persistence>> OpenSqlitePersistence(const std::string& path) {
  if (!path.empty() && path != ":memory:") {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent)) {
      return absl::UnavailableError(absl::StrCat("cannot open the SQLite database ", path,
                                                 ": the directory ", parent.string(),
                                                 " does not exist"));
    }
  }
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  if (!db.ok()) return db.status();
  if (absl::Status s = MigrateSqlite(**db); !s.ok()) return s;
  return std::unique_ptr<Persistence>(new SqlitePersistence(std::move(*db)));
}

}  // namespace tock::persistence
