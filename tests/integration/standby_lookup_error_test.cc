// Whether a namespace is active here is read from the namespace store
// (replication::NamespaceActivity). When that read fails, the state is unknown, and a
// standby must not guess "active": its timers wait (parked) and its writes are refused as
// UNAVAILABLE, so no event is written under the active cluster's version (split brain). Once
// the store answers again, the parked timer stays parked while the namespace is a standby
// here and fires when it becomes active, with the new failover version.
//
// The real engines (history, namespaces) on SQLite in memory and a ManualClock; the namespace
// store's by-id lookups fail on demand.
#include <gtest/gtest.h>

#include "lib/common/proto_time.h"
#include "server-core/history/history_engine.h"
#include "server-core/replication/namespace_activity.h"
#include "tests/integration/engine_fixture.h"
#include "tests/support/eventually.h"
#include "tests/support/forwarding_stores.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::history::v1::HistoryEvent;
using tock::testing::FailingNamespaceStore;

const absl::Time kStart = absl::FromUnixMicros(1'800'000'000'000'000);
constexpr absl::Duration kWait = absl::Seconds(10);  // bound on every wait in these tests
constexpr char kName[] = "standby-ns";

// Cluster b of clusters {a, b}; the namespace is registered active here.
class StandbyLookupErrorTest : public HistoryEngineTest {
 protected:
  StandbyLookupErrorTest() : HistoryEngineTest(kStart, "worker") {}
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenStore());
    admin::ClusterMetadata m;
    m.current_cluster_name = "b";
    m.master_cluster_name = "b";
    m.enable_global_namespace = true;
    m.failover_version_increment = 10;
    m.clusters["a"] = {true, 1, "127.0.0.1:1"};  // never called
    m.clusters["b"] = {true, 2, "127.0.0.1:2"};
    namespaces_ =
        std::make_unique<namespaces::NamespaceEngine>(persistence_->namespaces(), m, clock_);
    wf::RegisterNamespaceRequest reg;
    reg.set_namespace_(kName);
    reg.set_is_global_namespace(true);
    reg.add_clusters()->set_cluster_name("a");
    reg.add_clusters()->set_cluster_name("b");
    reg.set_active_cluster_name("b");
    *reg.mutable_workflow_execution_retention_period() = ToProtoDuration(absl::Hours(24));
    auto registered = namespaces_->Register(reg);
    ASSERT_TRUE(registered.ok()) << registered.status();
    auto stored = persistence_->namespaces().GetNamespaceByName(kName);
    ASSERT_TRUE(stored.ok()) << stored.status();
    ns_ = NamespaceRef{stored->record.info().id(), kName, stored->record.failover_version()};
    ASSERT_EQ(ns_.failover_version, 2);

    lookups_ = std::make_unique<FailingNamespaceStore>(persistence_->namespaces());
    activity_ = std::make_unique<replication::NamespaceActivity>(*lookups_, *namespaces_, clock_);
    ASSERT_NO_FATAL_FAILURE(StartEngine(persistence_->executions(), [this](HistoryEngine& engine) {
      engine.SetNamespaceActivity(
          [this](const std::string& namespace_id) { return activity_->Of(namespace_id); });
    }));
  }

  // Makes `cluster` the namespace's active cluster (a forced failover); its new version.
  int64_t FailOverTo(const std::string& cluster) {
    wf::UpdateNamespaceRequest update;
    update.set_namespace_(kName);
    update.mutable_replication_config()->set_active_cluster_name(cluster);
    auto updated = namespaces_->Update(update);
    EXPECT_TRUE(updated.ok()) << updated.status();
    return updated.ok() ? updated->failover_version() : -1;
  }

  std::vector<HistoryEvent> Events(const std::string& run_id, enums::EventType type) {
    std::vector<HistoryEvent> out;
    for (const HistoryEvent& e : History(run_id)) {
      if (e.event_type() == type) out.push_back(e);
    }
    return out;
  }

  // Moves the clock past the namespace activity's cache and the parked check's interval.
  void AdvanceAndWake(absl::Duration d) {
    clock_.Advance(d);
    engine_->WakeTimers();
  }

  std::unique_ptr<namespaces::NamespaceEngine> namespaces_;
  std::unique_ptr<FailingNamespaceStore> lookups_;
  std::unique_ptr<replication::NamespaceActivity> activity_;
};

TEST_F(StandbyLookupErrorTest, ALookupErrorParksStandbyWorkAndWritesNothing) {
  // A run with a 5 s timer, started while the namespace is active here (its workflow task's
  // timeout, a timer too, is beyond this test's clock).
  wf::StartWorkflowExecutionRequest start = StartRequest("wf");
  *start.mutable_workflow_task_timeout() = ToProtoDuration(absl::Seconds(100));
  auto started = engine_->StartWorkflow(ns_, start);
  ASSERT_TRUE(started.ok()) << started.status();
  auto task = PollWorkflowTask();
  ASSERT_TRUE(task.ok()) << task.status();
  ASSERT_TRUE(CompleteWorkflowTask(task->task_token(), {StartTimer(absl::Seconds(5))}).ok());

  // The namespace fails over to a: this cluster is its standby. Then the namespace store
  // stops answering, and the activity's cache expires.
  ASSERT_EQ(FailOverTo("a"), 11);
  lookups_->fail_reads_by_id = true;
  AdvanceAndWake(replication::NamespaceActivity::kLifetime + absl::Seconds(1));

  // A write of the namespace (at the version the run was written with) is refused, retryable,
  // and writes nothing: the lookup error is not "active".
  wf::SignalWorkflowExecutionRequest signal;
  signal.mutable_workflow_execution()->set_workflow_id("wf");
  signal.set_signal_name("poke");
  signal.set_identity("client");
  signal.set_request_id("signal-1");
  const int lookups_before = lookups_->reads_by_id.load();
  absl::Status signalled = engine_->SignalWorkflow(ns_, signal);
  EXPECT_EQ(signalled.code(), absl::StatusCode::kUnavailable) << signalled;
  EXPECT_NE(signalled.message().find("could not be read"), std::string::npos) << signalled;
  EXPECT_EQ(Events(started->run_id(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED).size(), 0u);
  EXPECT_GT(lookups_->reads_by_id.load(), lookups_before) << "the error was answered from a cache";

  // The timer comes due: it is parked (the engine's own count says so once FireTimer has
  // returned), and fires nothing.
  AdvanceAndWake(absl::Seconds(5));
  ASSERT_TRUE(tock::testing::Eventually([&] { return engine_->parked() == 1; }, kWait))
      << "the due timer was not parked while its namespace's state was unknown";
  EXPECT_EQ(Events(started->run_id(), enums::EVENT_TYPE_TIMER_FIRED).size(), 0u);

  // The store answers again: still a standby here, so the timer stays parked; the parked
  // check reads the state afresh (the error was not kept).
  lookups_->fail_reads_by_id = false;
  const int lookups_now = lookups_->reads_by_id.load();
  AdvanceAndWake(absl::Seconds(2));
  ASSERT_TRUE(
      tock::testing::Eventually([&] { return lookups_->reads_by_id.load() > lookups_now; }, kWait));
  EXPECT_EQ(engine_->parked(), 1u);

  // Failed back to b: the timer fires here once, as this cluster's, at the new version.
  const int64_t back = FailOverTo("b");
  ASSERT_EQ(back, 12);
  std::vector<HistoryEvent> fired;
  for (int second = 0; second < 30 && fired.empty(); ++second) {
    AdvanceAndWake(absl::Seconds(1));
    tock::testing::Eventually(
        [&] { return !(fired = Events(started->run_id(), enums::EVENT_TYPE_TIMER_FIRED)).empty(); },
        absl::Milliseconds(200));
  }
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired.front().version(), back);
  EXPECT_EQ(engine_->parked(), 0u);
}

}  // namespace
}  // namespace tock::server::history
