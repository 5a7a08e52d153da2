// The archiver (seed 002, "Archival"; SPEC §3): moves the runs queued in the archival queue
// (persistence/archival_queue_store.h) through their steps:
//   1. on close: the visibility record is archived to the namespace's visibility URI;
//   2. once the namespace's retention has passed since the close: the history is archived
//      to its history URI and, only after the store confirmed it, the run is deleted.
// A kind the cluster or namespace does not archive (at the time of the step) is skipped.
//
// Every step is idempotent and recorded after it succeeds, so a crash anywhere repeats at
// most the step it interrupted: an archive rewritten with the same bytes, or a delete of a
// run already gone. A step that fails (the store is down) is recorded with its error and
// retried with backoff (1 s doubling to 1 min of server time); the run is never deleted
// before its history archive is confirmed.
//
// Passes run on a thread of their own every `poll_interval` of real time and when woken
// (a run closed, the clock was advanced); the runs of a batch are archived 8 at a time. A host
// passes over the runs of the history shards it owns only (`owns_run`, owned_runs.h), so each
// run is uploaded and deleted by its shard's owner alone; with one host, all of them. Thread
// safety: all methods are safe from any thread; passes and triggers never overlap.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/common/blocking_pool.h"
#include "lib/common/clock.h"
#include "server-core/archiver/archive_registry.h"
#include "server-core/history/history_engine.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/observability/server_metrics.h"
#include "server-core/persistence/archival_queue_store.h"
#include "server-core/persistence/execution_store.h"
#include "server-core/worker/owned_runs.h"
#include "server-core/worker/periodic_thread.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::server::worker {

class Archiver {
 public:
  Archiver(namespaces::NamespaceEngine& namespaces, persistence::ArchivalQueueStore& queue,
           persistence::ExecutionStore& executions, history::HistoryEngine& history,
           archiver::ArchiveRegistry& archives, Clock& clock, OwnsRun owns_run,
           absl::Duration poll_interval = absl::Seconds(1));

  // A test's fault point (ServerConfig::FaultPoints::after_history_upload); set before Start.
  void SetAfterHistoryUpload(std::function<void(const std::string& run_id)> hook) {
    after_history_upload_ = std::move(hook);
  }
  // Starts the passes; failures are logged to `logger` and counted in `metrics`, which
  // must outlive the archiver.
  void Start(Logger& logger, const ServerMetrics& metrics);
  void Wake();

  // One pass over everything due now; returns how many steps succeeded.
  absl::StatusOr<int64_t> RunOnce();

  // tock.admin.v1.AdminService.TriggerArchival / GetArchivalStatus.
  absl::StatusOr<tock::admin::v1::TriggerArchivalResponse> Trigger(
      const tock::admin::v1::TriggerArchivalRequest& req);
  absl::StatusOr<tock::admin::v1::GetArchivalStatusResponse> Status(
      const tock::admin::v1::GetArchivalStatusRequest& req);

 private:
  struct Namespace;  // what a step needs to know of the run's namespace
  absl::StatusOr<Namespace> LoadNamespace(const std::string& id_or_empty,
                                          const std::string& name_or_empty);
  absl::StatusOr<int64_t> PassLocked();  // requires pass_mu_
  // The rows of runs whose shard this host owns.
  std::vector<persistence::ArchivalQueueRow> Owned(
      std::vector<persistence::ArchivalQueueRow> rows) const;
  // Runs `step` on every row on the step threads and waits for all; the sum of what they
  // return. Rows are independent runs, and the stores are safe from many threads.
  int64_t ForEachInParallel(std::vector<persistence::ArchivalQueueRow>& rows,
                            const std::function<int64_t(persistence::ArchivalQueueRow&)>& step);
  // The steps; each records its outcome in `row` and the queue.
  absl::Status ArchiveVisibility(const Namespace& ns, persistence::ArchivalQueueRow& row);
  absl::Status ArchiveHistory(const Namespace& ns, persistence::ArchivalQueueRow& row);
  absl::Status DeleteRun(const Namespace& ns, persistence::ArchivalQueueRow& row);
  // Records a failed step: attempts, error, next attempt with backoff.
  void RecordFailure(persistence::ArchivalQueueRow& row, const absl::Status& error);
  absl::Status Save(persistence::ArchivalQueueRow& row);

  namespaces::NamespaceEngine& namespaces_;
  persistence::ArchivalQueueStore& queue_;
  persistence::ExecutionStore& executions_;
  history::HistoryEngine& history_;
  archiver::ArchiveRegistry& archives_;
  Clock& clock_;
  const OwnsRun owns_run_;
  const absl::Duration poll_interval_;

  std::mutex pass_mu_;
  // Archival steps of different runs overlap (a store's latency, fsyncs): 8 at a time.
  BlockingPool steps_{8};
  std::function<void(const std::string& run_id)> after_history_upload_;
  Logger* logger_ = &NullLogger();
  const ServerMetrics* metrics_ = &kNoServerMetrics;
  std::optional<PeriodicThread> thread_;  // last: stopped before the rest goes
};

}  // namespace tock::server::worker
