// The history engine's entries by key (a run's lock and cached mutable state by run id, the
// lock of a workflow id), bounded by count and by approximate bytes: the engine keeps the
// entries in use and the most recently used others, not every run it ever touched (10,000
// idle runs used to stay in memory whole).
//
// Eviction takes the least recently used entries that no one holds (the cache's reference is
// the only one). An entry in use is never evicted, so all callers of one key share one entry
// (one lock) for as long as any holds it; an entry evicted is created anew, empty, at its next
// use (the engine then reads the run from the store). So a bound is exceeded only while more
// entries are held at once than it allows.
//
// Bytes are the caller's estimate: each entry costs kEntryBytes plus its key plus what
// Charge() last set for it (its cached state).
//
// Thread safety: every member is safe from any thread. The cache takes no lock of an entry:
// Charge() may be called with an entry's own lock held.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tock::server::history {

template <typename Entry>
class RunCache {
 public:
  struct Limits {
    size_t max_entries = 0;
    size_t max_bytes = 0;
  };
  // What one entry costs besides its key and charge: the Entry with its control block, the
  // list node, the index's node and bucket (approximate; glibc's 16-byte chunk headers too).
  static constexpr size_t kEntryBytes = sizeof(Entry) + 200;

  explicit RunCache(Limits limits) : limits_(limits) {}
  RunCache(const RunCache&) = delete;
  RunCache& operator=(const RunCache&) = delete;

  // The entry of `key`, value-initialised when absent; it becomes the most recently used.
  // May evict others (never one held, so never the one returned).
  std::shared_ptr<Entry> Get(const std::string& key) {
    std::lock_guard lock(mu_);
    auto found = index_.find(key);
    if (found != index_.end()) {
      lru_.splice(lru_.begin(), lru_, found->second);
      return lru_.front().entry;
    }
    lru_.push_front(Node{key, std::make_shared<Entry>(), 0});
    index_.emplace(lru_.front().key, lru_.begin());
    bytes_ += Cost(lru_.front());
    std::shared_ptr<Entry> entry = lru_.front().entry;  // held: not evicted below
    EvictLocked();
    return entry;
  }

  // Sets the bytes `key`'s entry holds besides its fixed cost (0: nothing cached), then
  // evicts if that passed the byte bound. Nothing when `key` has no entry.
  void Charge(const std::string& key, size_t bytes) {
    std::lock_guard lock(mu_);
    auto found = index_.find(key);
    if (found == index_.end()) return;
    Node& node = *found->second;
    bytes_ = bytes_ - node.charge + bytes;
    node.charge = bytes;
    EvictLocked();
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return lru_.size();
  }
  // The estimated bytes of all entries.
  size_t bytes() const {
    std::lock_guard lock(mu_);
    return bytes_;
  }
  // Whether `key` has an entry (without making it recently used; for tests).
  bool Contains(const std::string& key) const {
    std::lock_guard lock(mu_);
    return index_.contains(key);
  }

 private:
  struct Node {
    std::string key;
    std::shared_ptr<Entry> entry;
    size_t charge;
  };
  static size_t Cost(const Node& node) { return kEntryBytes + node.key.size() + node.charge; }

  // From the least recently used end, drops entries no one holds until within both bounds.
  // Entries held are stepped over: they were just used, so are near the other end unless
  // held for long, and no more can be held than there are callers in flight.
  void EvictLocked() {
    auto it = lru_.end();
    while ((lru_.size() > limits_.max_entries || bytes_ > limits_.max_bytes) &&
           it != lru_.begin()) {
      --it;
      // Exact here: a reference is only handed out under mu_, and one held can only be
      // copied while use_count is already above 1.
      if (it->entry.use_count() > 1) continue;
      bytes_ -= Cost(*it);
      index_.erase(std::string_view(it->key));
      it = lru_.erase(it);
    }
  }

  const Limits limits_;
  mutable std::mutex mu_;
  std::list<Node> lru_;  // most recently used first
  // The index's keys view the list's keys (list nodes do not move).
  std::unordered_map<std::string_view, typename std::list<Node>::iterator> index_;
  size_t bytes_ = 0;
};

}  // namespace tock::server::history
