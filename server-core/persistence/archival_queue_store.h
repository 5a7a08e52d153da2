// The archiver's queue and progress: one row per closed run of a namespace that archives,
// written in the transaction that closes the run (RunWrite::archive_on_close), then moved on
// by the archiver: visibility archived on close, history archived and the run deleted once
// its retention has passed. Rows stay after the run is gone, for `tock archival status`.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tock::persistence {

enum class ArchivalStep { kPending = 0, kArchived = 1, kSkipped = 2 };

struct ArchivalQueueRow {
  std::string namespace_id;
  std::string run_id;
  std::string workflow_id;
  absl::Time close_time;
  ArchivalStep visibility = ArchivalStep::kPending;
  ArchivalStep history = ArchivalStep::kPending;
  bool run_deleted = false;
  int32_t attempts = 0;        // failed attempts since the last success
  std::string last_error;      // of the last failed attempt; "" after a success
  absl::Time next_attempt = absl::UnixEpoch();  // server time; retries back off
};

struct ArchivalCounts {
  int64_t visibility[3] = {0, 0, 0};  // by ArchivalStep
  int64_t history[3] = {0, 0, 0};
  int64_t runs_deleted = 0;
  int64_t failing = 0;  // rows whose last attempt failed
};

class ArchivalQueueStore {
 public:
  virtual ~ArchivalQueueStore() = default;
  // Rows whose visibility step is pending and due at `now`, oldest close first.
  virtual absl::StatusOr<std::vector<ArchivalQueueRow>> VisibilityDue(absl::Time now,
                                                                      int32_t limit) = 0;
  // Rows of a namespace that closed before `closed_before`, whose run is not deleted yet and
  // whose next attempt is due at `now`, oldest close first.
  virtual absl::StatusOr<std::vector<ArchivalQueueRow>> RetentionDue(
      const std::string& namespace_id, absl::Time closed_before, absl::Time now,
      int32_t limit) = 0;
  // Namespaces that have rows whose run is not deleted yet.
  virtual absl::StatusOr<std::vector<std::string>> NamespacesWithLiveRuns() = 0;
  virtual absl::StatusOr<std::optional<ArchivalQueueRow>> Get(const std::string& namespace_id,
                                                              const std::string& run_id) = 0;
  // Inserts or replaces the row.
  virtual absl::Status Put(const ArchivalQueueRow& row) = 0;
  virtual absl::StatusOr<ArchivalCounts> Counts(const std::string& namespace_id) = 0;
  // Rows whose last attempt failed, most recent close first.
  virtual absl::StatusOr<std::vector<ArchivalQueueRow>> Failing(const std::string& namespace_id,
                                                                int32_t limit) = 0;
};

}  // namespace tock::persistence
