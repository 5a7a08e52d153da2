#include "server-core/membership/hash_ring.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "lib/common/hashing.h"

namespace tock::server::membership {
namespace {
const std::string kNoHost;
}  // namespace

HashRing::HashRing(std::vector<std::string> hosts, int points_per_host) : hosts_(std::move(hosts)) {
  std::sort(hosts_.begin(), hosts_.end());
  hosts_.erase(std::unique(hosts_.begin(), hosts_.end()), hosts_.end());
  const uint32_t points = static_cast<uint32_t>(std::max(points_per_host, 1));
  points_.reserve(hosts_.size() * points);
  for (uint32_t h = 0; h < hosts_.size(); ++h) {
    for (uint32_t i = 0; i < points; ++i) {
      points_.push_back(Point{Fingerprint32(absl::StrCat(hosts_[h], "#", i)), h, i});
    }
  }
  // hosts_ is sorted, so ordering by host index orders by host name on every machine.
  std::sort(points_.begin(), points_.end(), [](const Point& a, const Point& b) {
    return std::tie(a.hash, a.host, a.index) < std::tie(b.hash, b.host, b.index);
  });
}

const std::string& HashRing::Lookup(absl::string_view key) const {
  if (points_.empty()) return kNoHost;
  const uint32_t hash = Fingerprint32(key);
  auto it = std::lower_bound(points_.begin(), points_.end(), hash,
                             [](const Point& p, uint32_t h) { return p.hash < h; });
  if (it == points_.end()) it = points_.begin();
  return hosts_[it->host];
}

const std::string& HashRing::OwnerOfShard(int32_t shard_id) const {
  return Lookup(absl::StrCat(shard_id));
}

std::vector<int32_t> HashRing::ShardsOf(absl::string_view host, int32_t shard_count) const {
  std::vector<int32_t> shards;
  for (int32_t id = 1; id <= shard_count; ++id) {
    if (OwnerOfShard(id) == host) shards.push_back(id);
  }
  return shards;
}

}  // namespace tock::server::membership
