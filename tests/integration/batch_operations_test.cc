// Batch operations (frontend/batch_operations.h) in process: the batch store and the namespace
// engine on an in-memory database, and a frontend on a free port of 127.0.0.1 that counts the
// terminations the batch sends it. What the CLI's tests cannot time: a stop that comes between
// a batch's record being read and its runner starting.
#include "server-core/frontend/batch_operations.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "server-core/persistence/persistence.h"
#include "server-core/rpc/dialer.h"
#include "server-core/rpc/dispatcher.h"
#include "tests/support/dispatcher_server.h"
#include "tests/support/eventually.h"
#include "tests/support/forwarding_stores.h"
#include "tests/support/namespace_fixture.h"

namespace tock::server::frontend {
namespace {

namespace enums = temporal::api::enums::v1;
namespace op = temporal::api::operatorservice::v1;
using tock::testing::Eventually;
using tock::testing::FailingNamespaceStore;

// A frontend that answers every TerminateWorkflowExecution with OK and counts them. While
// held, it keeps each call (counted in `entered`) until Release.
class CountingFrontend {
 public:
  CountingFrontend() {
    server_.dispatcher().AddUnary<wf::TerminateWorkflowExecutionRequest,
                                  wf::TerminateWorkflowExecutionResponse>(
        "temporal.api.workflowservice.v1.WorkflowService/TerminateWorkflowExecution",
        [this](const wf::TerminateWorkflowExecutionRequest&, const rpc::CallContext&)
            -> absl::StatusOr<wf::TerminateWorkflowExecutionResponse> {
          ++entered;
          {
            std::unique_lock lock(mu_);
            released_.wait(lock, [this] { return !held_; });
          }
          ++terminated;
          return wf::TerminateWorkflowExecutionResponse();
        });
    EXPECT_TRUE(server_.Start());
  }
  const std::string& address() const { return server_.address(); }
  void Hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      held_ = false;
    }
    released_.notify_all();
  }

  std::atomic<int> entered{0};
  std::atomic<int> terminated{0};

 private:
  std::mutex mu_;
  std::condition_variable released_;
  bool held_ = false;
  tock::testing::DispatcherServer server_;
};

class BatchOperationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = persistence::OpenPersistence({});
    ASSERT_TRUE(opened.ok()) << opened.status();
    persistence_ = std::move(*opened);
    namespace_store_ = std::make_unique<FailingNamespaceStore>(persistence_->namespaces());
    namespaces_ = tock::testing::SingleClusterNamespaces(*namespace_store_, clock_);
    absl::StatusOr<std::string> id = tock::testing::RegisterNamespace(*namespaces_, "orders");
    ASSERT_TRUE(id.ok()) << id.status();
    namespace_id_ = *id;
    // The first ownership check (StartBatch's or the scan's) after `on_owns` is set runs it.
    batches_ = std::make_unique<BatchOperations>(
        persistence_->batches(), persistence_->visibility(), *namespaces_, clock_, NullLogger(),
        [this](const std::string&, const std::string&) {
          std::function<void()> once;
          {
            std::lock_guard lock(on_owns_mu_);
            once.swap(on_owns);
          }
          if (once) once();
          return true;
        });
  }
  void TearDown() override { batches_->Shutdown(); }

  // Terminate `runs` runs, at `rps` a second (0: the default, 50).
  wf::StartBatchOperationRequest Terminate(const std::string& job_id, int runs = 3,
                                           double rps = 0) {
    wf::StartBatchOperationRequest req;
    req.set_namespace_("orders");
    req.set_job_id(job_id);
    req.set_reason("r");
    req.set_max_operations_per_second(static_cast<float>(rps));
    req.mutable_termination_operation();
    for (int i = 0; i < runs; ++i) {
      auto* execution = req.add_executions();
      execution->set_workflow_id(absl::StrCat("wf-", i));
      execution->set_run_id(absl::StrCat("run-", i));
    }
    return req;
  }

  absl::Status Stop(const std::string& job_id, BatchOperations* on = nullptr) {
    wf::StopBatchOperationRequest req;
    req.set_namespace_("orders");
    req.set_job_id(job_id);
    req.set_reason("enough");
    return (on != nullptr ? on : batches_.get())->StopBatch(req);
  }

  enums::BatchOperationState State(const std::string& job_id) {
    wf::DescribeBatchOperationRequest req;
    req.set_namespace_("orders");
    req.set_job_id(job_id);
    auto described = batches_->Describe(req);
    EXPECT_TRUE(described.ok()) << described.status();
    return described.ok() ? described->state() : enums::BATCH_OPERATION_STATE_UNSPECIFIED;
  }

  // Made once this host has decided whether to launch a runner for `job_id` (StartBatch
  // returned, or the scan pass that read the batch ended): waits for the runner it launched,
  // if any, to end its last turn. Its calls have then returned and it makes no more, so
  // "nothing was called" is final here rather than after a sleep, and fails whenever a runner
  // ran the batch despite the stop.
  void ExpectNothingRanAfterTheStop(const std::string& job_id) {
    ASSERT_TRUE(
        batches_->WaitUntilNotRunningHereForTest(namespace_id_, job_id, absl::Seconds(20)))
        << "the runner launched after the stop has not ended";
    EXPECT_EQ(frontend_.entered, 0) << frontend_.entered << " runs terminated after the stop";
    auto stored = persistence_->batches().Get(namespace_id_, job_id);
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_EQ(stored->state(), enums::BATCH_OPERATION_STATE_FAILED);
    EXPECT_EQ(stored->stop_reason(), "enough");
    EXPECT_EQ(stored->complete_operation_count() + stored->failure_operation_count(), 0);
  }

  // Terminate the runs whose custom attribute Customer is 'acme' (none in this test's
  // visibility store: a batch that runs completes with nothing to do).
  wf::StartBatchOperationRequest TerminateByCustomer(const std::string& job_id) {
    op::AddSearchAttributesRequest add;
    add.set_namespace_("orders");
    (*add.mutable_search_attributes())["Customer"] =
        temporal::api::enums::v1::INDEXED_VALUE_TYPE_KEYWORD;
    EXPECT_TRUE(namespaces_->AddSearchAttributes(add).ok());
    wf::StartBatchOperationRequest req;
    req.set_namespace_("orders");
    req.set_job_id(job_id);
    req.set_reason("r");
    req.set_visibility_query("Customer = 'acme'");
    req.mutable_termination_operation();
    return req;
  }

  ManualClock clock_;
  CountingFrontend frontend_;
  std::unique_ptr<persistence::Persistence> persistence_;
  std::unique_ptr<FailingNamespaceStore> namespace_store_;
  std::unique_ptr<namespaces::NamespaceEngine> namespaces_;
  std::string namespace_id_;
  std::unique_ptr<BatchOperations> batches_;
  std::mutex on_owns_mu_;
  std::function<void()> on_owns;  // set before the batch starts or the scan runs
};

TEST_F(BatchOperationsTest, ARunningBatchTerminatesItsRuns) {
  batches_->Start(frontend_.address(), rpc::Dialer());
  ASSERT_TRUE(batches_->StartBatch(Terminate("job")).ok());
  Eventually([&] { return State("job") != enums::BATCH_OPERATION_STATE_RUNNING; },
             absl::Seconds(10));
  EXPECT_EQ(State("job"), enums::BATCH_OPERATION_STATE_COMPLETED);
  EXPECT_EQ(frontend_.terminated, 3);
}

TEST_F(BatchOperationsTest, AStopBetweenTheStartsRecordAndItsRunnerLeavesNothingToRun) {
  batches_->Start(frontend_.address(), rpc::Dialer());
  // StartBatch has stored the batch and asks whether this host runs it: the stop comes then,
  // before there is a runner to stop.
  absl::Status stopped = absl::UnknownError("not stopped");
  on_owns = [&] {
    stopped = Stop("job");
  };
  // StartBatch launched a runner, or not, before it returned.
  ASSERT_TRUE(batches_->StartBatch(Terminate("job")).ok());
  ASSERT_TRUE(stopped.ok()) << stopped;
  ExpectNothingRanAfterTheStop("job");
}

TEST_F(BatchOperationsTest, AStopBetweenTheScanAndTheLaunchLeavesNothingToRun) {
  // Not started yet: the batch is stored, and its runner waits for the scan.
  ASSERT_TRUE(batches_->StartBatch(Terminate("job")).ok());
  // The scan has read the batch as running and asks whether this host runs it: the stop comes
  // then, before there is a runner to stop.
  absl::Status stopped = absl::UnknownError("not stopped");
  std::atomic<bool> asked{false};
  on_owns = [&] {
    stopped = Stop("job");
    asked = true;
  };
  batches_->Start(frontend_.address(), rpc::Dialer());
  // The first pass asked, and launched a runner or not, before it ended.
  ASSERT_TRUE(batches_->WaitForScanPassesForTest(1, absl::Seconds(10)));
  ASSERT_TRUE(asked) << "the scan did not ask whether this host runs the batch";
  ASSERT_TRUE(stopped.ok()) << stopped;
  ExpectNothingRanAfterTheStop("job");
}

TEST_F(BatchOperationsTest, AStopOnAnotherHostEndsTheRunnerWithinAboutASecond) {
  // Another host of the same database that does not own the batch: its stop only writes the
  // record, and this host's runner, in the middle of a page, reads it there.
  BatchOperations other(persistence_->batches(), persistence_->visibility(), *namespaces_, clock_,
                        NullLogger(), [](const std::string&, const std::string&) { return false; });
  batches_->Start(frontend_.address(), rpc::Dialer());
  // 20 runs at 4 a second: one page of 5 s.
  ASSERT_TRUE(batches_->StartBatch(Terminate("job", 20, 4)).ok());
  ASSERT_TRUE(Eventually([&] { return frontend_.terminated > 0; }, absl::Seconds(10)));
  ASSERT_TRUE(batches_->RunsHere(namespace_id_, "job"));
  ASSERT_TRUE(Stop("job", &other).ok());
  const int at_the_stop = frontend_.terminated;
  // The runner reads the stop within kStopCheckInterval (1 s: about 4 more runs at this
  // pace, and the calls in flight) and ends by itself, though its page had seconds left.
  // Once it has ended nothing more can be terminated: the count is final.
  ASSERT_TRUE(Eventually([&] { return !batches_->RunsHere(namespace_id_, "job"); },
                         absl::Seconds(10)))
      << "the runner did not read the stop";
  const int terminated = frontend_.terminated;
  EXPECT_LT(terminated, 20) << "the page was run to its end: the stop was not read in it";
  EXPECT_LE(terminated - at_the_stop, 8) << "runs terminated long after the stop";
  EXPECT_EQ(State("job"), enums::BATCH_OPERATION_STATE_FAILED);
  // Its last act wrote the counts of its page, cut short by the stop, into the stopped record.
  auto stored = persistence_->batches().Get(namespace_id_, "job");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->complete_operation_count(), terminated);
}

TEST_F(BatchOperationsTest, AStopAnswersOnceTheRunnerHasEndedWithItsFinalCounts) {
  batches_->Start(frontend_.address(), rpc::Dialer());
  // 20 runs at 4 a second: one page of 5 s, stopped in its middle.
  ASSERT_TRUE(batches_->StartBatch(Terminate("job", 20, 4)).ok());
  ASSERT_TRUE(Eventually([&] { return frontend_.terminated > 0; }, absl::Seconds(10)));
  ASSERT_TRUE(Stop("job").ok());
  // The stop answered after the runner's calls returned and its counts were written: they
  // are the calls made, though its page was saved neither before the stop nor since.
  const int terminated = frontend_.terminated;
  EXPECT_LT(terminated, 20) << "the page was run to its end: the stop did not stop it";
  auto stored = persistence_->batches().Get(namespace_id_, "job");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->state(), enums::BATCH_OPERATION_STATE_FAILED);
  EXPECT_EQ(stored->complete_operation_count(), terminated)
      << "the stop answered before the runner's last counts were written";
  EXPECT_EQ(stored->stop_reason(), "enough");
}

TEST_F(BatchOperationsTest, AStopWhoseRunnerOutlastsItsWaitSaysSo) {
  // A host whose stop waits 300 ms for its runner, whose call is held longer.
  BatchOperations held(persistence_->batches(), persistence_->visibility(), *namespaces_, clock_,
                       NullLogger(), [](const std::string&, const std::string&) { return true; },
                       absl::Milliseconds(300));
  held.Start(frontend_.address(), rpc::Dialer());
  frontend_.Hold();
  ASSERT_TRUE(held.StartBatch(Terminate("job", 3)).ok());
  ASSERT_TRUE(Eventually([&] { return frontend_.entered > 0; }, absl::Seconds(10)));
  absl::Status stopped = Stop("job", &held);
  frontend_.Release();
  EXPECT_EQ(stopped.code(), absl::StatusCode::kDeadlineExceeded) << stopped;
  EXPECT_EQ(stopped.message(),
            "batch operation job is stopped, but its runner has not ended after 300ms: an "
            "operation in flight may still land; DescribeBatchOperation shows its counts");
  EXPECT_EQ(State("job"), enums::BATCH_OPERATION_STATE_FAILED);
  // Released, the calls return and the runner ends, writing their counts.
  ASSERT_TRUE(Eventually([&] { return !held.RunsHere(namespace_id_, "job"); }, absl::Seconds(10)));
  auto stored = persistence_->batches().Get(namespace_id_, "job");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->complete_operation_count(), frontend_.terminated);
  EXPECT_GT(frontend_.terminated, 0);
}

TEST_F(BatchOperationsTest, ANamespaceReadFailingAtTheRunnersStartIsRetriedNotCompleted) {
  wf::StartBatchOperationRequest req = TerminateByCustomer("job");
  // The store fails the runner's read of the namespace (its search attributes), which an
  // empty schema used to hide: the query did not compile and the batch COMPLETED at once.
  namespace_store_->fail_reads_by_id = true;
  batches_->Start(frontend_.address(), rpc::Dialer());
  ASSERT_TRUE(batches_->StartBatch(req).ok());
  // A first runner fails its read (with the store's read retries); the next scan's runner
  // reads again, so the batch was left RUNNING by the first.
  ASSERT_TRUE(Eventually([&] { return namespace_store_->failed_reads_by_id > 4; },
                         absl::Seconds(20)))
      << "the read was not tried again: " << namespace_store_->failed_reads_by_id;
  EXPECT_EQ(State("job"), enums::BATCH_OPERATION_STATE_RUNNING);

  namespace_store_->fail_reads_by_id = false;  // the database is back: the batch goes on
  ASSERT_TRUE(Eventually([&] { return State("job") != enums::BATCH_OPERATION_STATE_RUNNING; },
                         absl::Seconds(20)));
  EXPECT_EQ(State("job"), enums::BATCH_OPERATION_STATE_COMPLETED);
}

TEST_F(BatchOperationsTest, AQueryThatNoLongerCompilesFailsTheBatchWithTheReason) {
  // Stored, not run yet (the runner waits for the scan); then its attribute is removed.
  ASSERT_TRUE(batches_->StartBatch(TerminateByCustomer("job")).ok());
  op::RemoveSearchAttributesRequest remove;
  remove.set_namespace_("orders");
  remove.add_search_attributes("Customer");
  ASSERT_TRUE(namespaces_->RemoveSearchAttributes(remove).ok());
  batches_->Start(frontend_.address(), rpc::Dialer());
  ASSERT_TRUE(Eventually([&] { return State("job") != enums::BATCH_OPERATION_STATE_RUNNING; },
                         absl::Seconds(20)));
  EXPECT_EQ(State("job"), enums::BATCH_OPERATION_STATE_FAILED);
  auto stored = persistence_->batches().Get(namespace_id_, "job");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE(absl::StartsWith(stored->stop_reason(), "the batch's query cannot be compiled: "))
      << stored->stop_reason();
  EXPECT_EQ(stored->complete_operation_count(), 0);
}

}  // namespace
}  // namespace tock::server::frontend
