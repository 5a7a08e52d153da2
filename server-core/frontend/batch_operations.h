// Batch operations (WorkflowService StartBatchOperation, DescribeBatchOperation,
// ListBatchOperations, StopBatchOperation): terminate, cancel, signal, delete or reset every run a
// visibility query matches (or a list of executions), with Temporal's checks and messages.
//
// A batch is durable: its record (persistence::BatchStore) holds the request, the counts and
// a cursor (runs are handled newest start first, then by run id descending, so a page read
// after a restart starts exactly after the last run handled: none skipped, none repeated but
// those in flight at a crash). The record is rewritten after every page. A batch runs on the
// host that owns its shard (hash of namespace id and job id), found again by a scan every
// kScanInterval, so a batch whose host died goes on elsewhere.
//
// A stop is written to the record (FAILED), then this host's runner (if any) is stopped and
// the stop answers once the runner's page in progress has ended: its calls in flight have
// returned (a stopped runner retries none) and its last act wrote the counts of everything
// it did into the stopped record (a runner stopped between pages has saved them already, and
// its next turn does nothing). So once StopBatch answers OK, the batch does nothing more and
// DescribeBatchOperation shows its final counts. When the runner has not ended within the stop's wait (stop_wait,
// kStopWait by default: longer than one call's deadline), the stop answers DEADLINE_EXCEEDED:
// the batch is stopped, but a call of its may still land. A runner on another host reads the
// stop from the record at most kStopCheckInterval apart while it works (and after every
// page), so it ends within about that much after a stop answered elsewhere, and then writes
// its final counts the same way.
//
// Each operation is sent, like Temporal's batcher does, as a call to the frontend (this
// server's own address): routing between hosts, validation and metrics are those of any
// client call. At most kConcurrency calls are in flight per batch, and at most
// max_operations_per_second are started per second (kDefaultRps when unset).
//
// Threads: a fixed few, made when the first batch runs and used by every batch after it.
// kDrivers threads take turns running batches one page at a time (a batch's next page is
// queued behind the others'), and kDrivers * kConcurrency threads make the pages' calls.
//
// A batch whose query cannot be compiled when its runner starts (the namespace cannot be read
// now: a retryable store error) stays RUNNING and is tried again at the next scan; one whose
// query no longer compiles (an attribute removed, the namespace gone) is FAILED with the
// reason. Neither is ever COMPLETED with nothing done.
//
// The store keeps one running batch per namespace (its Create checks and inserts in one
// step) and writes a record only over the revision read, so a stop is never overwritten by
// progress, and two runners of one batch (a shard moving) cannot both go on.
//
// Thread safety: safe from many threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "lib/common/blocking_pool.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/persistence/batch_store.h"
#include "server-core/persistence/visibility_store.h"
#include "server-core/rpc/dialer.h"
#include "server-core/rpc/dispatcher.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

namespace tock::server::frontend {

namespace wf = temporal::api::workflowservice::v1;

class BatchOperations {
 public:
  static constexpr int kConcurrency = 8;
  static constexpr int kDrivers = 2;
  static constexpr double kDefaultRps = 50;  // Temporal's frontend.batcherRPS
  static constexpr int kPageSize = 200;
  static constexpr absl::Duration kScanInterval = absl::Seconds(5);
  static constexpr absl::Duration kStopCheckInterval = absl::Seconds(1);
  // How long a stop waits for this host's runner to end: one operation's call deadline (10 s)
  // and a margin (a reset reading a long history may take longer: the stop then says so).
  static constexpr absl::Duration kStopWait = absl::Seconds(12);

  // `owns(namespace_id, job_id)`: whether this host runs that batch (with one host: always).
  // `stop_wait`: how long StopBatch waits for this host's runner (tests shorten it).
  BatchOperations(persistence::BatchStore& store, persistence::VisibilityStore& visibility,
                  namespaces::NamespaceEngine& namespaces, Clock& clock, Logger& logger,
                  std::function<bool(const std::string&, const std::string&)> owns,
                  absl::Duration stop_wait = kStopWait);
  ~BatchOperations();

  // Starts running batches (those stored as running included), calling the frontend at
  // `frontend_address` through `dialer` (as other hosts do: TLS with tls.internode). Call
  // once the server listens.
  void Start(const std::string& frontend_address, const rpc::Dialer& dialer);
  // Stops every runner (their records stay as they are, to go on at the next start).
  void Shutdown();

  absl::Status StartBatch(const wf::StartBatchOperationRequest& req);
  absl::StatusOr<wf::DescribeBatchOperationResponse> Describe(
      const wf::DescribeBatchOperationRequest& req);
  absl::StatusOr<wf::ListBatchOperationsResponse> List(const wf::ListBatchOperationsRequest& req);
  // Answers once the batch is stopped and this host's runner has ended its page (see
  // above); DEADLINE_EXCEEDED when the runner is still in its page after stop_wait.
  absl::Status StopBatch(const wf::StopBatchOperationRequest& req);

  // Whether a runner of the batch is at work on this host now (for tests: a stop written
  // elsewhere ends it without this host being told).
  bool RunsHere(const std::string& namespace_id, const std::string& job_id);

  // For tests, so that a check that a batch did nothing is made once that is final rather
  // than after a sleep. Waits until `passes` scan passes have ended since Start (a pass has
  // ended once it has launched a runner for each batch it found that this host owns); false
  // after `timeout`.
  bool WaitForScanPassesForTest(int64_t passes, absl::Duration timeout);
  // Waits until the batch has no runner at work on this host: none was launched, or the one
  // launched has ended its last turn (its calls have returned, and it makes no more); false
  // after `timeout`. Called after the launch decision (StartBatch returned, or the scan pass
  // that read the batch ended), it returns true only once the batch can do nothing more here.
  bool WaitUntilNotRunningHereForTest(const std::string& namespace_id, const std::string& job_id,
                                      absl::Duration timeout);

 private:
  struct Runner;
  struct Page;
  // Queues a runner for `record` unless it runs already.
  void Launch(persistence::BatchOperationRecord record);
  // One turn of a runner on a driver thread: its next page; then it queues its next turn,
  // or ends (done) when the batch is over, stopped, or must wait for the next scan.
  void Step(Runner& runner);
  // The turn's work: true when the batch has more pages to run now.
  bool RunStep(Runner& runner);
  // At a runner's first turn: the batch as stored now, and its query compiled. False when
  // it must not run now (not running any more, failed, or to try again at the next scan).
  bool Begin(Runner& runner);
  // The batch's query against the namespace's search attributes as stored now.
  absl::StatusOr<persistence::VisibilityFilter> CompileFilter(
      const persistence::BatchOperationRecord& record);
  // The next runs to handle, after the cursor; an error when they cannot be listed now.
  absl::StatusOr<Page> NextPage(Runner& runner);
  // Applies the operation to `page` on the callers' threads; returns how many of its first
  // runs were handled (all unless stopped), counted into the record.
  size_t RunPage(Runner& runner, const Page& page);
  // Ends the batch: COMPLETED, or FAILED with `reason`.
  void Complete(Runner& runner);
  void Fail(Runner& runner, const std::string& reason);
  // One run's operation, with retries of transient failures: "" or what failed.
  std::string Apply(Runner& runner, const temporal::api::common::v1::WorkflowExecution& execution);
  // A reset's point for one run (options: first or last workflow task, or an event id).
  absl::StatusOr<int64_t> ResetPoint(const wf::StartBatchOperationRequest& req,
                                     const temporal::api::common::v1::WorkflowExecution& execution);
  void ScanLoop();
  // Whether the stored batch is no longer running (stopped on another host), read at most
  // every kStopCheckInterval of real time (`checked_at`: the last read, in nanoseconds,
  // shared by a page's callers). Real time, not clock_: it paces store reads, and a
  // time-skipping server's clock may stand still while the batch runs.
  bool StoppedElsewhere(const persistence::BatchOperationRecord& record,
                        std::atomic<int64_t>& checked_at);
  // Saves a runner's progress over the revision it read; false when it must not go on: the
  // batch was stopped (its counts are then written into the stopped record), or another
  // host's runner wrote it since.
  bool SaveProgress(Runner& runner);
  // A stopped runner's last act: its counts (with the operations beyond its cursor) and
  // cursor written into `stopped` (the record as the stop left it, state and stop reason
  // kept). Only when nothing but the stop was written since this runner's last save, so that
  // no other runner's counts are overwritten.
  void SaveFinalCounts(const Runner& runner, persistence::BatchOperationRecord stopped);
  // Waits (mu_ held by `lock`) until the runner of `key` is between turns or has ended;
  // false when it is still in a turn after stop_wait_.
  bool WaitForRunnerOutOfTurn(std::unique_lock<std::mutex>& lock, const std::string& key);
  // Writes a stop (FAILED) over the running batch.
  absl::Status WriteStop(const std::string& namespace_id,
                         const wf::StopBatchOperationRequest& req);
  // The stored batch, or NOT_FOUND "batch operation ID not found".
  absl::StatusOr<persistence::BatchOperationRecord> Find(const std::string& namespace_id,
                                                         const std::string& job_id);

  persistence::BatchStore& store_;
  persistence::VisibilityStore& visibility_;
  namespaces::NamespaceEngine& namespaces_;
  Clock& clock_;  // start and close times
  Logger& logger_;
  std::function<bool(const std::string&, const std::string&)> owns_;
  const absl::Duration stop_wait_;
  std::unique_ptr<wf::WorkflowService::Stub> frontend_;

  std::mutex mu_;
  std::mutex state_mu_;  // a batch's state: a runner's save and a stop on this host
  std::condition_variable wake_;
  std::condition_variable runner_done_;  // a runner's turn ended (`in_turn`, `done` under mu_)
  std::condition_variable scanned_;      // a scan pass ended (scan_passes_)
  int64_t scan_passes_ = 0;              // under mu_: scan passes ended, for tests
  bool shutdown_ = false;
  std::map<std::string, std::unique_ptr<Runner>> runners_;  // by namespace id + "/" + job id
  std::thread scanner_;
  // The runners' turns and the operations' calls: made (under mu_) by the first Launch.
  std::unique_ptr<BlockingPool> drivers_;
  std::unique_ptr<BlockingPool> callers_;
};

void RegisterBatchHandlers(rpc::Dispatcher& dispatcher, BatchOperations& batches);

}  // namespace tock::server::frontend
