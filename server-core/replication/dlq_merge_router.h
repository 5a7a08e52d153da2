// A DLQ merge on hosts sharing a database (reference/replication.md §3.8 with issue 11's
// hosts): a history DLQ task can only be applied by the host that owns the local shard its
// source shard maps to (the one that pulls that source shard), so a merge that reaches any
// host is split by source shard and each part is merged by its owner: here when this host
// owns it, else sent to the owner (MergeDLQMessages for that one shard, marked forwarded, so
// that it is never sent further). The answers are added up.
//
// Ownership moves (a host joins, leaves or dies): an owner that answers "not owned" or
// cannot be reached is looked up again and tried again, backing off, until the caller's
// deadline (at most kRetryBudget). A part that still fails ends the merge with its error,
// naming the shard (the parts merged before are merged: a merge can be run again).
//
// Namespace DLQ merges, and merges on one host, are not routed (any host applies those).
//
// Thread safety: Install before the server starts; merges then run from any thread. They
// block while other hosts merge: installed only where handlers run on the dispatcher's own
// threads (a shared database).
#pragma once

#include <functional>

#include "server-core/replication/history_replicator.h"
#include "server-core/persistence/replication_store.h"
#include "server-core/routing/peers.h"
#include "server-core/routing/placement.h"
#include "server-core/rpc/dispatcher.h"

namespace tock::server::replication {

class DlqMergeRouter {
 public:
  static constexpr absl::Duration kRetryBudget = absl::Seconds(60);

  DlqMergeRouter(HistoryReplicator& histories, persistence::ReplicationStore& store,
                 routing::Placement& placement, routing::Peers& peers,
                 std::function<bool(int32_t)> owns, int32_t shard_count);

  // Wraps AdminService/MergeDLQMessages (registered already) with the routing.
  void Install(rpc::Dispatcher& dispatcher);

  // The local shard whose owner pulls (and merges) a remote's `source_shard`: the same
  // shard, as HistoryReplicator's pull, since a remote's shard count equals this cluster's
  // (CheckShardCounts). 0 for a shard this cluster does not have (a remote stored with
  // another count): such a part is refused (SourceShardNotHere), never merged on a host
  // that would find its workflows' shards owned elsewhere.
  int32_t LocalShard(int32_t source_shard) const {
    return source_shard >= 1 && source_shard <= shard_count_ ? source_shard : 0;
  }
  absl::Status SourceShardNotHere(int32_t source_shard) const;

 private:
  // One source shard's part, merged by its owner.
  absl::StatusOr<tock::admin::v1::MergeDLQMessagesResponse> MergeOnOwner(
      const tock::admin::v1::MergeDLQMessagesRequest& part, absl::Time deadline);

  HistoryReplicator& histories_;
  persistence::ReplicationStore& store_;
  routing::Placement& placement_;
  routing::Peers& peers_;
  const std::function<bool(int32_t)> owns_;
  const int32_t shard_count_;
};

}  // namespace tock::server::replication
