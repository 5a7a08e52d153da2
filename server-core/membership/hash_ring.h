// Consistent hashing of shards over the alive hosts (seed 004; Temporal's ringpop ring).
//
// Each host puts `points_per_host` points on a 32-bit circle, at FarmHash Fingerprint32 of
// "<host>#<i>"; a key belongs to the host of the first point at or after Fingerprint32(key),
// wrapping around. The key of a history shard is its decimal id, as in Temporal. Every host
// builds the same ring from the same member list (points are ordered by hash, then host, then
// index, so even colliding hashes order the same everywhere), and adding a host moves only
// the keys it takes: about 1/(N+1) of them, all to it.
//
// Why many points: a host's share of the circle is a sum of `points_per_host` arcs, whose
// relative spread is about 1/sqrt(points). Temporal's 100 gave hosts 370 to 526 of 4096
// shards (its PR #9702); 1,000 points keep the spread near 3 % at a cost of microseconds.
//
// Thread safety: immutable after construction; safe to share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tock::server::membership {

class HashRing {
 public:
  static constexpr int kDefaultPointsPerHost = 1000;

  // `hosts`: the identities of the alive hosts, in any order (duplicates are ignored).
  explicit HashRing(std::vector<std::string> hosts, int points_per_host = kDefaultPointsPerHost);

  // The host owning `key`; empty when the ring has no host.
  const std::string& Lookup(absl::string_view key) const;
  // The owner of history shard `shard_id` (key: its decimal id).
  const std::string& OwnerOfShard(int32_t shard_id) const;
  // The shards of 1..shard_count this ring gives `host`, ascending.
  std::vector<int32_t> ShardsOf(absl::string_view host, int32_t shard_count) const;

  // The member identities, sorted.
  const std::vector<std::string>& hosts() const { return hosts_; }

 private:
  struct Point {
    uint32_t hash;
    uint32_t host;  // index in hosts_
    uint32_t index;
  };
  std::vector<std::string> hosts_;
  std::vector<Point> points_;  // sorted by (hash, host, index)
};

}  // namespace tock::server::membership
