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

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/proto_time.h"
#include "lib/common/timer_thread.h"
#include "server-core/history/history_engine.h"
#include "server-core/history/shard_controller.h"
#include "server-core/matching/matching_engine.h"
#include "server-core/persistence/persistence.h"
#include "server-core/replication/namespace_activity.h"
#include "tests/support/eventually.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::history::v1::HistoryEvent;

const absl::Time kStart = absl::FromUnixMicros(1'800'000'000'000'000);
constexpr absl::Duration kWait = absl::Seconds(10);  // bound on every wait in these tests
constexpr char kName[] = "standby-ns";

// Forwards to a namespace store; GetNamespaceById fails (UNAVAILABLE) while `failing`.
class FailingLookups : public persistence::NamespaceStore {
 public:
  explicit FailingLookups(persistence::NamespaceStore& inner) : inner_(inner) {}
  std::atomic<bool> failing{false};
  std::atomic<int> lookups{0};  // GetNamespaceById calls, failed or not

  absl::StatusOr<persistence::NamespaceVersion> GetNamespaceById(const std::string& id) override {
    ++lookups;
    if (failing) return absl::UnavailableError("the namespace store is unreachable");
    return inner_.GetNamespaceById(id);
  }
  absl::StatusOr<persistence::NamespaceVersion> CreateNamespace(
      const persistence::NamespaceRecord& record, absl::Time now,
      const std::string& operation) override {
    return inner_.CreateNamespace(record, now, operation);
  }
  absl::StatusOr<persistence::NamespaceVersion> GetNamespaceByName(
      const std::string& name) override {
    return inner_.GetNamespaceByName(name);
  }
  absl::StatusOr<persistence::NamespaceVersion> GetNamespaceAsOf(const std::string& name,
                                                                 absl::Time as_of) override {
    return inner_.GetNamespaceAsOf(name, as_of);
  }
  absl::StatusOr<persistence::NamespaceVersion> AppendNamespaceVersion(
      const persistence::NamespaceRecord& record, int64_t expected_version,
      const std::string& operation, absl::Time now) override {
    return inner_.AppendNamespaceVersion(record, expected_version, operation, now);
  }
  absl::StatusOr<persistence::NamespacePage> ListNamespaces(int32_t page_size,
                                                            const std::string& page_token,
                                                            bool include_deleted) override {
    return inner_.ListNamespaces(page_size, page_token, include_deleted);
  }
  absl::StatusOr<std::vector<persistence::NamespaceVersion>> GetNamespaceHistory(
      const std::string& name) override {
    return inner_.GetNamespaceHistory(name);
  }

 private:
  persistence::NamespaceStore& inner_;
};

// Cluster b of clusters {a, b}; the namespace is registered active here.
class StandbyLookupErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_.Set(kStart);
    auto p = persistence::OpenPersistence({});
    ASSERT_TRUE(p.ok()) << p.status();
    persistence_ = std::move(*p);
    admin::ClusterMetadata m;
    m.current_cluster_name = "b";
    m.master_cluster_name = "b";
    m.enable_global_namespace = true;
    m.failover_version_increment = 10;
    m.clusters["a"] = {true, 1, "127.0.0.1:1"};  // never called
    m.clusters["b"] = {true, 2, "127.0.0.1:2"};
    namespaces_ =
        std::make_unique<frontend::NamespaceEngine>(persistence_->namespaces(), m, clock_);
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

    lookups_ = std::make_unique<FailingLookups>(persistence_->namespaces());
    activity_ = std::make_unique<replication::NamespaceActivity>(*lookups_, *namespaces_, clock_);
    shards_ = std::make_unique<ShardController>(persistence_->executions(), 4, "test");
    ASSERT_TRUE(shards_->AcquireAll().ok());
    timer_thread_ = std::make_unique<TimerThread>(clock_);
    matching_ = std::make_unique<matching::MatchingEngine>(clock_, *timer_thread_);
    engine_ = std::make_unique<HistoryEngine>(persistence_->executions(), *shards_, *matching_,
                                              clock_, *timer_thread_, NullLogger());
    engine_->SetNamespaceActivity(
        [this](const std::string& namespace_id) { return activity_->Of(namespace_id); });
    ASSERT_TRUE(engine_->Recover().ok());
  }
  void TearDown() override {
    engine_->StopBackground();
    timer_thread_.reset();
    engine_.reset();
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

  absl::StatusOr<wf::PollWorkflowTaskQueueResponse> PollWorkflowTask() {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<persistence::TaskQueueTask> got;
    bool done = false;
    matching_->Poll(ns_.id, "q", persistence::TaskKind::kWorkflow, clock_.Now() + absl::Hours(1),
                    "worker", [&](std::optional<persistence::TaskQueueTask> task) {
                      std::lock_guard lock(mu);
                      got = std::move(task);
                      done = true;
                      cv.notify_all();
                    });
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, absl::ToChronoNanoseconds(kWait), [&] { return done; }) || !got) {
      return absl::DeadlineExceededError("no workflow task");
    }
    return engine_->RecordWorkflowTaskStarted(ns_, *got, "worker");
  }

  std::vector<HistoryEvent> Events(const std::string& run_id, enums::EventType type) {
    auto events = persistence_->executions().ReadEvents(run_id, 1, 100000, 100000);
    EXPECT_TRUE(events.ok()) << events.status();
    std::vector<HistoryEvent> out;
    if (events.ok()) {
      for (const HistoryEvent& e : *events) {
        if (e.event_type() == type) out.push_back(e);
      }
    }
    return out;
  }

  // Moves the clock past the namespace activity's cache and the parked check's interval.
  void AdvanceAndWake(absl::Duration d) {
    clock_.Advance(d);
    engine_->WakeTimers();
  }

  ManualClock clock_;
  std::unique_ptr<persistence::Persistence> persistence_;
  std::unique_ptr<frontend::NamespaceEngine> namespaces_;
  std::unique_ptr<FailingLookups> lookups_;
  std::unique_ptr<replication::NamespaceActivity> activity_;
  std::unique_ptr<ShardController> shards_;
  std::unique_ptr<TimerThread> timer_thread_;
  std::unique_ptr<matching::MatchingEngine> matching_;
  std::unique_ptr<HistoryEngine> engine_;
  NamespaceRef ns_;
};

TEST_F(StandbyLookupErrorTest, ALookupErrorParksStandbyWorkAndWritesNothing) {
  // A run with a 5 s timer, started while the namespace is active here (its workflow task's
  // timeout, a timer too, is beyond this test's clock).
  wf::StartWorkflowExecutionRequest start;
  start.set_workflow_id("wf");
  start.mutable_workflow_type()->set_name("flow");
  start.mutable_task_queue()->set_name("q");
  start.set_request_id("req-wf");
  *start.mutable_workflow_task_timeout() = ToProtoDuration(absl::Seconds(100));
  auto started = engine_->StartWorkflow(ns_, start);
  ASSERT_TRUE(started.ok()) << started.status();
  auto task = PollWorkflowTask();
  ASSERT_TRUE(task.ok()) << task.status();
  wf::RespondWorkflowTaskCompletedRequest done;
  done.set_task_token(task->task_token());
  done.set_identity("worker");
  auto* timer = done.add_commands();
  timer->set_command_type(enums::COMMAND_TYPE_START_TIMER);
  timer->mutable_start_timer_command_attributes()->set_timer_id("t1");
  *timer->mutable_start_timer_command_attributes()->mutable_start_to_fire_timeout() =
      ToProtoDuration(absl::Seconds(5));
  ASSERT_TRUE(engine_->RespondWorkflowTaskCompleted(ns_, done).ok());

  // The namespace fails over to a: this cluster is its standby. Then the namespace store
  // stops answering, and the activity's cache expires.
  ASSERT_EQ(FailOverTo("a"), 11);
  lookups_->failing = true;
  AdvanceAndWake(replication::NamespaceActivity::kLifetime + absl::Seconds(1));

  // A write of the namespace (at the version the run was written with) is refused, retryable,
  // and writes nothing: the lookup error is not "active".
  wf::SignalWorkflowExecutionRequest signal;
  signal.mutable_workflow_execution()->set_workflow_id("wf");
  signal.set_signal_name("poke");
  signal.set_identity("client");
  signal.set_request_id("signal-1");
  const int lookups_before = lookups_->lookups.load();
  absl::Status signalled = engine_->SignalWorkflow(ns_, signal);
  EXPECT_EQ(signalled.code(), absl::StatusCode::kUnavailable) << signalled;
  EXPECT_NE(signalled.message().find("could not be read"), std::string::npos) << signalled;
  EXPECT_EQ(Events(started->run_id(), enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED).size(), 0u);
  EXPECT_GT(lookups_->lookups.load(), lookups_before) << "the error was answered from a cache";

  // The timer comes due: it is parked (the engine's own count says so once FireTimer has
  // returned), and fires nothing.
  AdvanceAndWake(absl::Seconds(5));
  ASSERT_TRUE(tock::testing::Eventually([&] { return engine_->parked() == 1; }, kWait))
      << "the due timer was not parked while its namespace's state was unknown";
  EXPECT_EQ(Events(started->run_id(), enums::EVENT_TYPE_TIMER_FIRED).size(), 0u);

  // The store answers again: still a standby here, so the timer stays parked; the parked
  // check reads the state afresh (the error was not kept).
  lookups_->failing = false;
  const int lookups_now = lookups_->lookups.load();
  AdvanceAndWake(absl::Seconds(2));
  ASSERT_TRUE(
      tock::testing::Eventually([&] { return lookups_->lookups.load() > lookups_now; }, kWait));
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
