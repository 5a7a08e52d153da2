// Test-only faults of history replication on the receiving side, for the replication tests
// (reference/replication.md §6.3 scenarios 7, 11, 12 and 15). They exist only in a server
// started with `--replication-faults-file PATH` (`replication_faults_file` in the config):
// without it the server makes no object of this class and no fault can be set, by any call.
// The test writes PATH, a JSON object, at any time; the server reads it again before each
// pull (a missing file means no faults):
//
//   {"pause": true}                — pull nothing from any remote (a partition of this side)
//   {"drop_workflow_id": "W"}      — the next pulled task of workflow W is skipped, once: not
//                                    applied, the cursor moves past it, so W's next task
//                                    finds a gap (the missing events are then fetched)
//   {"fail_workflow_ids": ["W"]}   — every task of workflow W fails to apply, also in a DLQ
//                                    merge (a poison pill)
//   {"replay": true}               — each pulled batch is applied a second time (duplicates)
//   {"tasks_per_pull": N}          — at most N tasks of each shard are applied a pull, the
//                                    rest pulled again later (a slow receiver: a catch-up
//                                    that lasts long enough to be interrupted)
//   {"reorder": true}              — the tasks of each pulled shard page are applied in
//                                    reverse order (a transport that does not keep order:
//                                    a later task of a workflow arrives before an earlier)
//   {"fail_namespaces": ["N"]}     — every namespace replication task of namespace N fails
//                                    to apply, also in a namespace DLQ merge
//
// A drop is re-armed each time the file's content changes. Each fault injected is counted in
// replication_injected_faults_total{kind} and logged (warn). A file that is not such an
// object is logged (error) and means no faults.
//
// Thread safety: safe from many threads.
#pragma once

#include <mutex>
#include <set>
#include <string>

#include "lib/common/log.h"
#include "lib/common/metrics.h"

namespace tock::server::replication {

class ReplicationFaults {
 public:
  ReplicationFaults(std::string path, MetricsRegistry& metrics, Logger& logger);

  // Reads the file again when its content changed.
  void Refresh();

  bool paused() const;
  bool replay() const;
  // At most this many tasks of a shard applied per pull (0: no limit).
  int tasks_per_pull() const;
  // Whether to skip this task of `workflow_id` (true once per armed drop).
  bool TakeDrop(const std::string& workflow_id);
  // Whether tasks of `workflow_id` must fail.
  bool Fails(const std::string& workflow_id);
  // Whether namespace tasks of the namespace named `name` must fail.
  bool FailsNamespace(const std::string& name);
  bool reorder() const;
  void CountReplay();
  void CountReorder();

  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  Logger& logger_;
  metrics::Counter dropped_;
  metrics::Counter failed_;
  metrics::Counter replayed_;
  metrics::Counter reordered_;
  metrics::Counter namespace_failed_;
  mutable std::mutex mu_;
  std::string content_;  // guarded by mu_: the file as last read
  bool pause_ = false;   // guarded by mu_ (and the three below)
  bool replay_ = false;
  bool reorder_ = false;
  int tasks_per_pull_ = 0;
  std::string drop_workflow_id_;  // emptied once the drop was made
  std::set<std::string> fail_workflow_ids_;
  std::set<std::string> fail_namespaces_;
};

}  // namespace tock::server::replication
