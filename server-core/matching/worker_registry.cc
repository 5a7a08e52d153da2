#include "server-core/matching/worker_registry.h"

namespace tock::server::matching {

namespace wk = temporal::api::worker::v1;

void WorkerRegistry::Record(const std::string& namespace_id, const wk::WorkerHeartbeat& heartbeat) {
  if (heartbeat.worker_instance_key().empty()) return;
  std::lock_guard lock(mu_);
  const absl::Time now = clock_.Now();
  EvictLocked(now);
  auto& workers = by_namespace_[namespace_id];
  auto [it, added] = workers.try_emplace(heartbeat.worker_instance_key());
  it->second = Entry{heartbeat, now};
  if (added && ++entries_ > max_entries_) DropOldestLocked();
}

std::vector<wk::WorkerHeartbeat> WorkerRegistry::List(const std::string& namespace_id,
                                                      const WorkerQuery& query, bool include_system,
                                                      const std::string& after_key, size_t limit) {
  std::lock_guard lock(mu_);
  const absl::Time now = clock_.Now();
  EvictLocked(now);
  std::vector<wk::WorkerHeartbeat> out;
  auto ns = by_namespace_.find(namespace_id);
  if (ns == by_namespace_.end()) return out;
  for (auto it = ns->second.upper_bound(after_key); it != ns->second.end(); ++it) {
    if (now - it->second.received > kEntryTtl) continue;  // (evicted at the next sweep)
    const wk::WorkerHeartbeat& w = it->second.heartbeat;
    if (!include_system && w.task_queue().rfind("temporal-sys", 0) == 0) continue;
    if (!query.Matches(w)) continue;
    out.push_back(w);
    if (limit != 0 && out.size() >= limit) break;
  }
  return out;
}

std::optional<wk::WorkerHeartbeat> WorkerRegistry::Describe(const std::string& namespace_id,
                                                            const std::string& instance_key) {
  std::lock_guard lock(mu_);
  const absl::Time now = clock_.Now();
  EvictLocked(now);
  auto ns = by_namespace_.find(namespace_id);
  if (ns == by_namespace_.end()) return std::nullopt;
  auto it = ns->second.find(instance_key);
  if (it == ns->second.end() || now - it->second.received > kEntryTtl) return std::nullopt;
  return it->second.heartbeat;
}

size_t WorkerRegistry::size() {
  std::lock_guard lock(mu_);
  EvictLocked(clock_.Now(), /*now_or_never=*/true);
  return entries_;
}

void WorkerRegistry::EvictLocked(absl::Time now, bool now_or_never) {
  if (!now_or_never && now - last_eviction_ < absl::Minutes(1)) return;
  last_eviction_ = now;
  for (auto ns = by_namespace_.begin(); ns != by_namespace_.end();) {
    for (auto it = ns->second.begin(); it != ns->second.end();) {
      if (now - it->second.received > kEntryTtl) {
        it = ns->second.erase(it);
        --entries_;
      } else {
        ++it;
      }
    }
    ns = ns->second.empty() ? by_namespace_.erase(ns) : std::next(ns);
  }
}

void WorkerRegistry::DropOldestLocked() {
  std::map<std::string, Entry>* oldest_ns = nullptr;
  std::map<std::string, Entry>::iterator oldest;
  for (auto& [id, workers] : by_namespace_) {
    for (auto it = workers.begin(); it != workers.end(); ++it) {
      if (oldest_ns == nullptr || it->second.received < oldest->second.received) {
        oldest_ns = &workers;
        oldest = it;
      }
    }
  }
  if (oldest_ns == nullptr) return;
  oldest_ns->erase(oldest);
  --entries_;
}

}  // namespace tock::server::matching
