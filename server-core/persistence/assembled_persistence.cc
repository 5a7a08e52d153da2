#include "server-core/persistence/assembled_persistence.h"

namespace tock::persistence {
namespace {

class AssembledPersistence final : public Persistence {
 public:
  AssembledPersistence(std::shared_ptr<void> db, Stores stores, std::string engine,
                       std::string location)
      : db_(std::move(db)),
        stores_(std::move(stores)),
        engine_(std::move(engine)),
        location_(std::move(location)) {}
  ~AssembledPersistence() override { stores_ = Stores(); }  // the stores before db_

  NamespaceStore& namespaces() override { return *stores_.namespaces; }
  ClusterMetadataStore& cluster_metadata() override { return *stores_.cluster_metadata; }
  ExecutionStore& executions() override { return *stores_.executions; }
  VisibilityStore& visibility() override { return *stores_.visibility; }
  ArchivalQueueStore& archival_queue() override { return *stores_.archival_queue; }
  MembershipStore& membership() override { return *stores_.membership; }
  std::string engine() const override { return engine_; }
  std::string location() const override { return location_; }

 private:
  std::shared_ptr<void> db_;
  Stores stores_;
  const std::string engine_;
  const std::string location_;
};

}  // namespace

std::unique_ptr<Persistence> AssemblePersistence(std::shared_ptr<void> db, Stores stores,
                                                 std::string engine, std::string location) {
  return std::make_unique<AssembledPersistence>(std::move(db), std::move(stores),
                                                std::move(engine), std::move(location));
}

}  // namespace tock::persistence
