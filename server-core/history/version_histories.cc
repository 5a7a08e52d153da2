#include "server-core/history/version_histories.h"

#include <algorithm>

namespace tock::server::history {

std::optional<VersionHistoryItem> LowestCommonAncestor(const VersionItems& local,
                                                        const VersionItems& remote) {
  // Bounded: each step moves one index back.
  for (int64_t i = static_cast<int64_t>(local.size()) - 1,
               j = static_cast<int64_t>(remote.size()) - 1;
       i >= 0 && j >= 0;) {
    const VersionHistoryItem& l = local[static_cast<size_t>(i)];
    const VersionHistoryItem& r = remote[static_cast<size_t>(j)];
    if (l.version() == r.version()) {
      VersionHistoryItem common;
      common.set_version(l.version());
      common.set_event_id(std::min(l.event_id(), r.event_id()));
      return common;
    }
    if (l.version() > r.version()) {
      --i;
    } else {
      --j;
    }
  }
  return std::nullopt;
}

bool EndsAt(const VersionItems& branch, const VersionHistoryItem& item) {
  return !branch.empty() && branch.back().event_id() == item.event_id() &&
         branch.back().version() == item.version();
}

VersionItems TruncatedTo(const VersionItems& branch, int64_t event_id) {
  VersionItems out;
  for (const VersionHistoryItem& item : branch) {
    if (event_id <= 0) break;
    VersionHistoryItem& kept = out.emplace_back(item);
    if (item.event_id() >= event_id) {
      kept.set_event_id(event_id);
      break;
    }
  }
  return out;
}

int64_t VersionAt(const VersionItems& branch, int64_t event_id) {
  for (const VersionHistoryItem& item : branch) {
    if (item.event_id() >= event_id) return item.version();
  }
  return -1;
}

}  // namespace tock::server::history
