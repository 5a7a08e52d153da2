// The workers' heartbeats (RecordWorkerHeartbeat): the last one of each worker, by namespace
// and worker instance key, in memory, as Temporal's matching keeps them
// (service/matching/workers): an entry not refreshed for kEntryTtl is forgotten (a worker
// heartbeats every 60 s at most), and at most kMaxEntries are held (the oldest goes first).
// ListWorkers, CountWorkers and DescribeWorker read it. On hosts sharing a database, a
// namespace's calls all go to one host (routing/call_router.cc: the owner of the
// namespace's pseudo-queue kRegistryQueue), so each namespace has one registry; a host that
// stops loses its entries, and the workers' next heartbeats (within a minute) fill the new
// owner's.
//
// Thread safety: safe from any thread.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lib/common/clock.h"
#include "server-core/matching/worker_query.h"
#include "temporal/api/worker/v1/message.pb.h"

namespace tock::server::matching {

class WorkerRegistry {
 public:
  static constexpr absl::Duration kEntryTtl = absl::Minutes(5);
  static constexpr size_t kMaxEntries = 1'000'000;
  // The queue name whose owner holds a namespace's registry.
  static constexpr char kRegistryQueue[] = "temporal-sys-worker-registry";

  explicit WorkerRegistry(Clock& clock, size_t max_entries = kMaxEntries)
      : clock_(clock), max_entries_(max_entries) {}

  // Keeps `heartbeat` as its worker's last (an empty worker_instance_key is ignored).
  void Record(const std::string& namespace_id, const temporal::api::worker::v1::WorkerHeartbeat& heartbeat);

  // The workers of `namespace_id` that `query` matches, by worker instance key, from after
  // `after_key` (paging), at most `limit` (0: all). System workers (task queues named
  // temporal-sys...) only with `include_system`.
  std::vector<temporal::api::worker::v1::WorkerHeartbeat> List(const std::string& namespace_id,
                                                                const WorkerQuery& query,
                                                                bool include_system,
                                                                const std::string& after_key = "",
                                                                size_t limit = 0);
  std::optional<temporal::api::worker::v1::WorkerHeartbeat> Describe(const std::string& namespace_id,
                                                                     const std::string& instance_key);
  // The workers held, after forgetting those past their TTL.
  size_t size();

 private:
  struct Entry {
    temporal::api::worker::v1::WorkerHeartbeat heartbeat;
    absl::Time received;
  };
  // Forgets the entries older than kEntryTtl (at most once a minute, unless `now_or_never`).
  // Holds mu_.
  void EvictLocked(absl::Time now, bool now_or_never = false);
  void DropOldestLocked();

  Clock& clock_;
  const size_t max_entries_;
  std::mutex mu_;
  std::map<std::string, std::map<std::string, Entry>> by_namespace_;  // guarded by mu_
  size_t entries_ = 0;                                                // guarded by mu_
  absl::Time last_eviction_ = absl::InfinitePast();                   // guarded by mu_
};

}  // namespace tock::server::matching
