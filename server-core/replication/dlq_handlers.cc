#include "server-core/replication/dlq_handlers.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/common/time_format.h"

namespace tock::server::replication {
namespace {

namespace adm = tock::admin::v1;
constexpr char kAdmin[] = "tock.admin.v1.AdminService/";
constexpr int32_t kDefaultPageSize = 100;
constexpr int32_t kMaxPageSize = 1000;

// The store's selection of a request's. NOT_FOUND for a cluster that is not a remote one
// (its tasks, if any, are still read and purged when the cluster is named: a cluster removed
// since can leave tasks behind), INVALID_ARGUMENT for a negative shard or id, a shard of
// the namespace DLQ or an unknown type.
absl::StatusOr<persistence::ReplicationDlqSelection> SelectionOf(const adm::DLQSelection& in,
                                                                 ClusterRegistry& clusters,
                                                                 persistence::ReplicationStore& store) {
  if (in.shard_id() < 0) return absl::InvalidArgumentError("shard_id must be 0 (every shard) or more");
  if (in.inclusive_end_message_id() < 0) {
    return absl::InvalidArgumentError("inclusive_end_message_id must be 0 (no bound) or more");
  }
  if (in.type() != adm::DLQ_TYPE_HISTORY && in.type() != adm::DLQ_TYPE_NAMESPACE) {
    return absl::InvalidArgumentError(
        absl::StrCat("type ", static_cast<int>(in.type()), " is not a DLQ type (history, namespace)"));
  }
  if (in.type() == adm::DLQ_TYPE_NAMESPACE && in.shard_id() != 0) {
    return absl::InvalidArgumentError(
        "shard_id must be 0 for the namespace DLQ (namespace tasks have no shard)");
  }
  persistence::ReplicationDlqSelection out;
  out.source_cluster = in.source_cluster();
  out.source_shard = in.shard_id();
  if (in.inclusive_end_message_id() > 0) out.max_task_id = in.inclusive_end_message_id();
  if (out.source_cluster.empty()) return out;
  for (const persistence::StoredRemoteCluster& r : clusters.Remotes()) {
    if (r.record.name() == out.source_cluster) return out;
  }
  if (in.type() == adm::DLQ_TYPE_NAMESPACE) {
    absl::StatusOr<int64_t> left = store.CountNamespaceDlq(out.source_cluster);
    if (!left.ok()) return left.status();
    if (*left > 0) return out;
  } else {
    absl::StatusOr<std::map<int32_t, int64_t>> left = store.CountReplicationDlq(out.source_cluster);
    if (!left.ok()) return left.status();
    if (!left->empty()) return out;
  }
  return absl::NotFoundError(absl::StrCat("no remote cluster is named \"",
                                          out.source_cluster.substr(0, 255),
                                          "\" (tock cluster list shows them)"));
}

// Page tokens: "<shard> <task id> <cluster>", the key of the last task sent.
std::string TokenOf(const persistence::ReplicationDlqKey& key) {
  return absl::StrCat(key.source_shard, " ", key.task_id, " ", key.source_cluster);
}

absl::StatusOr<persistence::ReplicationDlqKey> KeyOf(const std::string& token) {
  std::vector<std::string> parts = absl::StrSplit(token, absl::MaxSplits(' ', 2));
  persistence::ReplicationDlqKey key;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &key.source_shard) ||
      !absl::SimpleAtoi(parts[1], &key.task_id)) {
    return absl::InvalidArgumentError("next_page_token is not one this server gave out");
  }
  key.source_cluster = parts[2];
  return key;
}

// A page of the namespace DLQ (one more than `page` read says whether another follows).
absl::StatusOr<adm::GetDLQMessagesResponse> ReadNamespaceDlq(
    persistence::ReplicationStore& store, const persistence::ReplicationDlqSelection& selection,
    const persistence::ReplicationDlqKey& after, int32_t page) {
  absl::StatusOr<std::vector<persistence::NamespaceDlqTask>> tasks =
      store.ReadNamespaceDlq(selection, after.source_cluster, after.task_id, page + 1);
  if (!tasks.ok()) return tasks.status();
  adm::GetDLQMessagesResponse out;
  for (int32_t i = 0; i < static_cast<int32_t>(tasks->size()) && i < page; ++i) {
    *out.add_tasks() = NamespaceDlqTaskProto((*tasks)[i]);
  }
  if (static_cast<int32_t>(tasks->size()) > page) {
    const persistence::NamespaceDlqTask& last = (*tasks)[page - 1];
    out.set_next_page_token(TokenOf({last.source_cluster, 0, last.task_id}));
  }
  return out;
}

}  // namespace

void RegisterDlqHandlers(rpc::Dispatcher& dispatcher, ClusterRegistry& clusters,
                         NamespaceReplicator& namespaces, HistoryReplicator& histories,
                         persistence::ReplicationStore& store) {
  dispatcher.AddUnary<adm::GetDLQMessagesRequest, adm::GetDLQMessagesResponse>(
      std::string(kAdmin) + "GetDLQMessages",
      [&](const adm::GetDLQMessagesRequest& req,
          const rpc::CallContext&) -> absl::StatusOr<adm::GetDLQMessagesResponse> {
        absl::StatusOr<persistence::ReplicationDlqSelection> selection =
            SelectionOf(req.selection(), clusters, store);
        if (!selection.ok()) return selection.status();
        if (req.maximum_page_size() < 0) return absl::InvalidArgumentError("Invalid PageSize.");
        const int32_t page = req.maximum_page_size() == 0
                                 ? kDefaultPageSize
                                 : std::min(req.maximum_page_size(), kMaxPageSize);
        persistence::ReplicationDlqKey after;
        if (!req.next_page_token().empty()) {
          absl::StatusOr<persistence::ReplicationDlqKey> key = KeyOf(req.next_page_token());
          if (!key.ok()) return key.status();
          after = *key;
        }
        if (req.selection().type() == adm::DLQ_TYPE_NAMESPACE) {
          return ReadNamespaceDlq(store, *selection, after, page);
        }
        // One more than a page says whether another page follows.
        absl::StatusOr<std::vector<persistence::ReplicationDlqTask>> tasks =
            store.ReadReplicationDlq(*selection, after, page + 1);
        if (!tasks.ok()) return tasks.status();
        adm::GetDLQMessagesResponse out;
        for (int32_t i = 0; i < static_cast<int32_t>(tasks->size()) && i < page; ++i) {
          *out.add_tasks() = DlqTaskProto((*tasks)[i]);
        }
        if (static_cast<int32_t>(tasks->size()) > page) {
          out.set_next_page_token(TokenOf((*tasks)[page - 1].key));
        }
        return out;
      });
  dispatcher.AddUnary<adm::PurgeDLQMessagesRequest, adm::PurgeDLQMessagesResponse>(
      std::string(kAdmin) + "PurgeDLQMessages",
      [&](const adm::PurgeDLQMessagesRequest& req,
          const rpc::CallContext&) -> absl::StatusOr<adm::PurgeDLQMessagesResponse> {
        absl::StatusOr<persistence::ReplicationDlqSelection> selection =
            SelectionOf(req.selection(), clusters, store);
        if (!selection.ok()) return selection.status();
        absl::StatusOr<int64_t> purged = req.selection().type() == adm::DLQ_TYPE_NAMESPACE
                                             ? store.PurgeNamespaceDlq(*selection)
                                             : store.PurgeReplicationDlq(*selection);
        if (!purged.ok()) return purged.status();
        adm::PurgeDLQMessagesResponse out;
        out.set_purged_tasks(*purged);
        return out;
      });
  dispatcher.AddUnary<adm::MergeDLQMessagesRequest, adm::MergeDLQMessagesResponse>(
      std::string(kAdmin) + "MergeDLQMessages",
      [&](const adm::MergeDLQMessagesRequest& req,
          const rpc::CallContext&) -> absl::StatusOr<adm::MergeDLQMessagesResponse> {
        absl::StatusOr<persistence::ReplicationDlqSelection> selection =
            SelectionOf(req.selection(), clusters, store);
        if (!selection.ok()) return selection.status();
        if (req.selection().type() == adm::DLQ_TYPE_NAMESPACE) return namespaces.MergeDlq(*selection);
        return histories.MergeDlq(*selection);
      });
  dispatcher.AddUnary<adm::GetDLQReplicationMessagesRequest, adm::GetDLQReplicationMessagesResponse>(
      std::string(kAdmin) + "GetDLQReplicationMessages",
      [&](const adm::GetDLQReplicationMessagesRequest& req,
          const rpc::CallContext&) -> absl::StatusOr<adm::GetDLQReplicationMessagesResponse> {
        return histories.ServeDlq(req);
      });
}

}  // namespace tock::server::replication
