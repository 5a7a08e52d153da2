// The algebra of version histories (reference/replication.md §3.3, §3.5; Temporal's
// versionhistory package): a branch's items are (last event id, version) pairs, one per run
// of equal versions, so two branches share their history up to their lowest common
// ancestor item, and a branch "extends" another when that ancestor is the other's last item.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tock/persistence/v1/execution.pb.h"

namespace tock::server::history {

using VersionHistoryItem = tock::persistence::v1::VersionHistoryItem;
using VersionItems = std::vector<VersionHistoryItem>;

template <typename Items>
VersionItems ToItems(const Items& items) {
  return VersionItems(items.begin(), items.end());
}

// The last item both branches hold (the same event id written at the same version): from the
// ends, the side with the higher version steps back until the versions meet; the lower event
// id of the two is the common point. nullopt when they share nothing (different first
// writers: not the same run).
std::optional<VersionHistoryItem> LowestCommonAncestor(const VersionItems& local,
                                                        const VersionItems& remote);

// Whether `branch` ends at `item` (so events after it extend `branch` as it is).
bool EndsAt(const VersionItems& branch, const VersionHistoryItem& item);

// `branch` up to and including event `event_id` (the item reaching it is cut there).
VersionItems TruncatedTo(const VersionItems& branch, int64_t event_id);

// The version of event `event_id` on a branch; -1 when the branch is shorter.
int64_t VersionAt(const VersionItems& branch, int64_t event_id);

inline int64_t LastVersion(const VersionItems& branch) {
  return branch.empty() ? 0 : branch.back().version();
}
inline int64_t LastEventId(const VersionItems& branch) {
  return branch.empty() ? 0 : branch.back().event_id();
}

}  // namespace tock::server::history
