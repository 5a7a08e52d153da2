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
// since can leave tasks behind), INVALID_ARGUMENT for a negative shard or id.
absl::StatusOr<persistence::ReplicationDlqSelection> SelectionOf(const adm::DLQSelection& in,
                                                                 ClusterRegistry& clusters,
                                                                 persistence::ReplicationStore& store) {
  if (in.shard_id() < 0) return absl::InvalidArgumentError("shard_id must be 0 (every shard) or more");
  if (in.inclusive_end_message_id() < 0) {
    return absl::InvalidArgumentError("inclusive_end_message_id must be 0 (no bound) or more");
  }
  persistence::ReplicationDlqSelection out;
  out.source_cluster = in.source_cluster();
  out.source_shard = in.shard_id();
  if (in.inclusive_end_message_id() > 0) out.max_task_id = in.inclusive_end_message_id();
  if (out.source_cluster.empty()) return out;
  for (const persistence::StoredRemoteCluster& r : clusters.Remotes()) {
    if (r.record.name() == out.source_cluster) return out;
  }
  absl::StatusOr<std::map<int32_t, int64_t>> left = store.CountReplicationDlq(out.source_cluster);
  if (!left.ok()) return left.status();
  if (!left->empty()) return out;
  return absl::NotFoundError(absl::StrCat("no remote cluster is named \"",
                                          out.source_cluster.substr(0, 255),
                                          "\" (tock cluster list shows them)"));
}

adm::DLQReplicationTask ToProto(const persistence::ReplicationDlqTask& t) {
  adm::DLQReplicationTask out;
  out.set_source_cluster(t.key.source_cluster);
  out.set_source_shard_id(t.key.source_shard);
  out.set_task_id(t.key.task_id);
  out.set_namespace_id(t.namespace_id);
  out.set_workflow_id(t.workflow_id);
  out.set_run_id(t.run_id);
  out.set_first_event_id(t.first_event_id);
  out.set_next_event_id(t.next_event_id);
  out.set_version(t.version);
  out.set_last_error(t.last_error);
  *out.mutable_added_time() = ToProtoTime(t.added);
  return out;
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

}  // namespace

void RegisterDlqHandlers(rpc::Dispatcher& dispatcher, ClusterRegistry& clusters,
                         HistoryReplicator& histories, persistence::ReplicationStore& store) {
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
        // One more than a page says whether another page follows.
        absl::StatusOr<std::vector<persistence::ReplicationDlqTask>> tasks =
            store.ReadReplicationDlq(*selection, after, page + 1);
        if (!tasks.ok()) return tasks.status();
        adm::GetDLQMessagesResponse out;
        for (int32_t i = 0; i < static_cast<int32_t>(tasks->size()) && i < page; ++i) {
          *out.add_tasks() = ToProto((*tasks)[i]);
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
        absl::StatusOr<int64_t> purged = store.PurgeReplicationDlq(*selection);
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
        return histories.MergeDlq(*selection);
      });
}

}  // namespace tock::server::replication
