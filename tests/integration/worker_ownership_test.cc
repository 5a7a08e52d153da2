// Review P3-3: the retention scanner runs on every host, each over the runs of the history
// shards it owns, and a run is deleted by its shard's owner only, fenced by the shard's range:
// two hosts (shard controllers and history engines) on one database (a SQLite file, or a
// database of the run's throwaway PostgreSQL server), a manual clock.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/proto_time.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/shard_controller.h"
#include "server-core/matching/matching_engine.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/persistence/persistence.h"
#include "server-core/worker/archiver.h"
#include "server-core/worker/retention_scanner.h"
#include "tests/support/postgres_server.h"
#include "tests/support/process.h"

namespace tock::server::worker {
namespace {

namespace wf = temporal::api::workflowservice::v1;
using history::HistoryEngine;
using history::NamespaceRef;
using history::ShardController;

constexpr int32_t kShards = 4;

// One host: its shard controller, matching, history engine, retention scanner and archiver.
struct Host {
  Host(persistence::Persistence& p, namespaces::NamespaceEngine& namespaces,
       archiver::ArchiveRegistry& archives, ManualClock& clock, const std::string& name,
       std::vector<int32_t> owned) {
    shards = std::make_unique<ShardController>(p.executions(), kShards, name);
    EXPECT_TRUE(shards->SetOwned(owned).ok());
    timer_thread = std::make_unique<TimerThread>(clock);
    matching = std::make_unique<matching::MatchingEngine>(clock, *timer_thread);
    engine = std::make_unique<HistoryEngine>(p.executions(), *shards, *matching, clock,
                                             *timer_thread, NullLogger());
    EXPECT_TRUE(engine->Recover().ok());
    ShardController* s = shards.get();
    const OwnsRun owns_run = [s](const std::string& ns, const std::string& wf) {
      return s->Owns(s->ShardFor(ns, wf));
    };
    scanner = std::make_unique<RetentionScanner>(namespaces, p.visibility(), *engine, clock,
                                                 owns_run);
    archiver = std::make_unique<Archiver>(namespaces, p.archival_queue(), p.executions(), *engine,
                                          archives, clock, owns_run);
  }
  ~Host() {
    archiver.reset();
    scanner.reset();
    engine->StopBackground();
    timer_thread.reset();
    engine.reset();
  }
  std::unique_ptr<ShardController> shards;
  std::unique_ptr<TimerThread> timer_thread;
  std::unique_ptr<matching::MatchingEngine> matching;
  std::unique_ptr<HistoryEngine> engine;
  std::unique_ptr<RetentionScanner> scanner;
  std::unique_ptr<Archiver> archiver;  // never started: passes are run by the test
};

// The parameter: whether the database is PostgreSQL (else SQLite).
class WorkerOwnershipTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    persistence::PersistenceConfig config;
    if (GetParam()) {
      ASSERT_TRUE(db_.Create(TOCK_POSTGRES_FIXTURE_FILE, "tock_workers")) << db_.error();
      config.engine = "postgres";
      config.postgres_url = db_.url();
      config.postgres_max_connections = 4;
    } else {
      config.sqlite_path = dir_.File("tock.db");
    }
    auto opened = persistence::OpenPersistence(config);
    ASSERT_TRUE(opened.ok()) << opened.status();
    p_ = std::move(*opened);
    namespaces_ = std::make_unique<namespaces::NamespaceEngine>(
        p_->namespaces(), admin::ClusterMetadata::SingleCluster("active", "127.0.0.1:7233"),
        clock_);
    wf::RegisterNamespaceRequest reg;
    reg.set_namespace_("ns");
    *reg.mutable_workflow_execution_retention_period() = ToProtoDuration(absl::Hours(24));
    ASSERT_TRUE(namespaces_->Register(reg).ok());
    wf::DescribeNamespaceRequest describe;
    describe.set_namespace_("ns");
    auto described = namespaces_->Describe(describe);
    ASSERT_TRUE(described.ok()) << described.status();
    ns_ = {described->namespace_info().id(), "ns", described->failover_version()};
    a_ = std::make_unique<Host>(*p_, *namespaces_, archives_, clock_, "127.0.0.1:7001",
                                std::vector{1, 2});
    b_ = std::make_unique<Host>(*p_, *namespaces_, archives_, clock_, "127.0.0.1:7002",
                                std::vector{3, 4});
  }
  void TearDown() override {
    a_.reset();
    b_.reset();
  }

  Host& OwnerOf(const std::string& workflow_id) {
    return a_->shards->Owns(a_->shards->ShardFor(ns_.id, workflow_id)) ? *a_ : *b_;
  }

  // Starts and terminates (closes) `count` runs, each through its shard's owner; the workflow
  // ids by the host that owns them.
  std::map<Host*, std::vector<std::string>> CloseRuns(int count) {
    std::map<Host*, std::vector<std::string>> by_host;
    for (int i = 0; i < count; ++i) {
      const std::string id = "wf-" + std::to_string(i);
      Host& owner = OwnerOf(id);
      wf::StartWorkflowExecutionRequest start;
      start.set_workflow_id(id);
      start.mutable_workflow_type()->set_name("flow");
      start.mutable_task_queue()->set_name("q");
      start.set_request_id("req-" + id);
      auto started = owner.engine->StartWorkflow(ns_, start);
      EXPECT_TRUE(started.ok()) << started.status();
      wf::TerminateWorkflowExecutionRequest terminate;
      terminate.mutable_workflow_execution()->set_workflow_id(id);
      EXPECT_TRUE(owner.engine->TerminateWorkflow(ns_, terminate).ok());
      by_host[&owner].push_back(id);
    }
    return by_host;
  }

  bool Exists(const std::string& workflow_id) {
    return p_->executions().GetCurrentRun(ns_.id, workflow_id).ok();
  }

  tock::testing::FreshPostgresDatabase db_;  // first: dropped after everything that uses it
  tock::testing::TempDir dir_;
  ManualClock clock_;
  std::unique_ptr<persistence::Persistence> p_;
  std::unique_ptr<namespaces::NamespaceEngine> namespaces_;
  archiver::ArchiveRegistry archives_{{}, {}};  // the cluster archives nothing: steps skip
  NamespaceRef ns_;
  std::unique_ptr<Host> a_, b_;
};

TEST_P(WorkerOwnershipTest, EachHostsScannerDeletesOnlyTheRunsOfItsShards) {
  std::map<Host*, std::vector<std::string>> runs = CloseRuns(12);
  ASSERT_FALSE(runs[a_.get()].empty());
  ASSERT_FALSE(runs[b_.get()].empty());
  clock_.Advance(absl::Hours(25));

  absl::StatusOr<int64_t> deleted = a_->scanner->ScanNow();
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, static_cast<int64_t>(runs[a_.get()].size()));
  for (const std::string& id : runs[a_.get()]) EXPECT_FALSE(Exists(id)) << id;
  for (const std::string& id : runs[b_.get()]) EXPECT_TRUE(Exists(id)) << id << " is B's";

  deleted = b_->scanner->ScanNow();
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, static_cast<int64_t>(runs[b_.get()].size()));
  for (const std::string& id : runs[b_.get()]) EXPECT_FALSE(Exists(id)) << id;
}

TEST_P(WorkerOwnershipTest, ADeleteByAHostThatLostTheShardIsRefusedByTheFence) {
  std::map<Host*, std::vector<std::string>> runs = CloseRuns(12);
  ASSERT_FALSE(runs[a_.get()].empty());
  clock_.Advance(absl::Hours(25));
  // B takes every shard; A is not told (its view is stale, as before its next heartbeat).
  ASSERT_TRUE(b_->shards->SetOwned({1, 2, 3, 4}).ok());

  const std::string& id = runs[a_.get()].front();
  wf::DeleteWorkflowExecutionRequest req;
  req.set_namespace_("ns");
  req.mutable_workflow_execution()->set_workflow_id(id);
  absl::Status s = a_->engine->DeleteWorkflow(ns_, req);
  EXPECT_TRUE(history::IsNotOwnedHere(s.code(), s.message())) << s;
  EXPECT_TRUE(Exists(id)) << "the fence refused the stale owner's delete";
  EXPECT_FALSE(a_->shards->Owns(a_->shards->ShardFor(ns_.id, id)))
      << "the refused delete told A it lost the shard";

  absl::StatusOr<int64_t> deleted = a_->scanner->ScanNow();
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 0);
  for (const std::string& each : runs[a_.get()]) EXPECT_TRUE(Exists(each)) << each;

  deleted = b_->scanner->ScanNow();
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 12);
  for (const std::string& each : runs[a_.get()]) EXPECT_FALSE(Exists(each)) << each;
}

// The archiver too: each host moves the queued runs of its own shards only (N hosts used to
// upload every run N times and all delete it).
TEST_P(WorkerOwnershipTest, EachHostsArchiverHandlesOnlyTheRunsOfItsShards) {
  std::map<Host*, std::vector<std::string>> runs = CloseRuns(12);
  ASSERT_FALSE(runs[a_.get()].empty());
  ASSERT_FALSE(runs[b_.get()].empty());
  std::map<std::string, std::string> run_ids;  // by workflow id
  for (const auto& [host, ids] : runs) {
    for (const std::string& id : ids) {
      absl::StatusOr<persistence::CurrentRun> current =
          p_->executions().GetCurrentRun(ns_.id, id);
      ASSERT_TRUE(current.ok()) << current.status();
      run_ids[id] = current->run_id;
      persistence::ArchivalQueueRow row;
      row.namespace_id = ns_.id;
      row.workflow_id = id;
      row.run_id = current->run_id;
      row.close_time = clock_.Now();
      ASSERT_TRUE(p_->archival_queue().Put(row).ok());
    }
  }
  auto step_of = [&](const std::string& id) {
    auto row = p_->archival_queue().Get(ns_.id, run_ids[id]);
    EXPECT_TRUE(row.ok() && row->has_value());
    return row.ok() && row->has_value() ? (*row)->visibility : persistence::ArchivalStep::kPending;
  };

  absl::StatusOr<int64_t> steps = a_->archiver->RunOnce();
  ASSERT_TRUE(steps.ok()) << steps.status();
  EXPECT_EQ(*steps, static_cast<int64_t>(runs[a_.get()].size()));
  for (const std::string& id : runs[a_.get()]) {
    EXPECT_EQ(step_of(id), persistence::ArchivalStep::kSkipped) << id;
  }
  for (const std::string& id : runs[b_.get()]) {
    EXPECT_EQ(step_of(id), persistence::ArchivalStep::kPending) << id << " is B's";
  }

  clock_.Advance(absl::Hours(25));
  ASSERT_TRUE(a_->archiver->RunOnce().ok());
  for (const std::string& id : runs[a_.get()]) EXPECT_FALSE(Exists(id)) << id;
  for (const std::string& id : runs[b_.get()]) EXPECT_TRUE(Exists(id)) << id << " is B's";

  ASSERT_TRUE(b_->archiver->RunOnce().ok());
  for (const std::string& id : runs[b_.get()]) {
    EXPECT_EQ(step_of(id), persistence::ArchivalStep::kSkipped) << id;
    EXPECT_FALSE(Exists(id)) << id;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, WorkerOwnershipTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Postgres" : "Sqlite";
                         });

}  // namespace
}  // namespace tock::server::worker
