#include "server-core/persistence/assembled_persistence.h"

namespace tock::persistence {
namespace {

class AssembledPersistence final : public Persistence {
 public:
  AssembledPersistence(std::shared_ptr<void> db, Stores stores, BackendFacts facts)
      : db_(std::move(db)), stores_(std::move(stores)), facts_(std::move(facts)) {}
  ~AssembledPersistence() override { stores_ = Stores(); }  // the stores before db_

  NamespaceStore& namespaces() override { return *stores_.namespaces; }
  ClusterMetadataStore& cluster_metadata() override { return *stores_.cluster_metadata; }
  ExecutionStore& executions() override { return *stores_.executions; }
  VisibilityStore& visibility() override { return *stores_.visibility; }
  ArchivalQueueStore& archival_queue() override { return *stores_.archival_queue; }
  BatchStore& batches() override { return *stores_.batches; }
  ScheduleStore& schedules() override { return *stores_.schedules; }
  DeploymentStore& deployments() override { return *stores_.deployments; }
  ReplicationStore& replication() override { return *stores_.replication; }
  MembershipStore& membership() override { return *stores_.membership; }
  TimerStore& timers() override { return *stores_.timers; }
  NexusEndpointStore& nexus_endpoints() override { return *stores_.nexus_endpoints; }
  std::string engine() const override { return facts_.engine; }
  std::string location() const override { return facts_.location; }
  bool shared_by_hosts() const override { return facts_.shared_by_hosts; }
  std::string durability() const override { return facts_.durability; }

 private:
  std::shared_ptr<void> db_;
  Stores stores_;
  const BackendFacts facts_;
};

}  // namespace

std::unique_ptr<Persistence> AssemblePersistence(std::shared_ptr<void> db, Stores stores,
                                                 BackendFacts facts) {
  return std::make_unique<AssembledPersistence>(std::move(db), std::move(stores),
                                                std::move(facts));
}

}  // namespace tock::persistence
