// Retention (seed 002, "Retention Period"): a closed run is removed, with its history and
// visibility record, once its namespace's retention period has passed since it closed.
//
// A scan lists, per namespace, the closed runs whose close time is older than now minus the
// namespace's retention and deletes each in one transaction (HistoryEngine::DeleteWorkflow).
// Deleting is idempotent, so a crash in the middle of a scan loses nothing: the next scan
// (every `interval`, and at once after the clock is advanced in a time-skipping dev server)
// finds what is left. Runs queued for archival (their namespace archived when they closed)
// are left to the archiver (archiver.h), which deletes them after archiving their history.
// A host scans only the runs of the history shards it owns (`owns_run`, owned_runs.h): with
// one host, all of them.
//
// Thread safety: ScanNow may be called from any thread; scans never overlap.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/common/clock.h"
#include "server-core/history/history_engine.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/observability/server_metrics.h"
#include "server-core/persistence/visibility_store.h"
#include "server-core/worker/owned_runs.h"
#include "server-core/worker/periodic_thread.h"

namespace tock::server::worker {

class RetentionScanner {
 public:
  RetentionScanner(namespaces::NamespaceEngine& namespaces,
                   persistence::VisibilityStore& visibility, history::HistoryEngine& history,
                   Clock& clock, OwnsRun owns_run, absl::Duration interval = absl::Minutes(1));

  // Starts the periodic scans on a thread of their own (the first after `interval` of real
  // time), so that a long scan never delays the durable timers.
  // Starts the scans; failures are logged and counted (both must outlive the scanner).
  void Start(Logger& logger, const ServerMetrics& metrics);

  // Scans every namespace now; returns how many runs were deleted.
  absl::StatusOr<int64_t> ScanNow();

  // Runs `change` (a clock advance) and then a scan with no other scan in between, so the
  // count is exactly what this change made due.
  absl::StatusOr<int64_t> ScanAfter(const std::function<void()>& change);

 private:
  absl::StatusOr<int64_t> ScanLocked();  // requires scan_mu_
  // Deletes the runs of `ns` closed before `cutoff` that this host owns; how many.
  absl::StatusOr<int64_t> ScanNamespace(const history::NamespaceRef& ns, absl::Time cutoff);

  namespaces::NamespaceEngine& namespaces_;
  persistence::VisibilityStore& visibility_;
  history::HistoryEngine& history_;
  Clock& clock_;
  const OwnsRun owns_run_;
  const absl::Duration interval_;
  std::mutex scan_mu_;
  const ServerMetrics* metrics_ = &kNoServerMetrics;
  std::optional<PeriodicThread> thread_;  // last: stopped before the rest goes
};

}  // namespace tock::server::worker
