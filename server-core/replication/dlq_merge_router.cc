#include "server-core/replication/dlq_merge_router.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "lib/common/grpc_status.h"
#include "server-core/history/shard_controller.h"

namespace tock::server::replication {
namespace {

namespace adm = tock::admin::v1;
constexpr char kMethod[] = "tock.admin.v1.AdminService/MergeDLQMessages";

void Add(adm::MergeDLQMessagesResponse& total, const adm::MergeDLQMessagesResponse& part) {
  total.set_merged_tasks(total.merged_tasks() + part.merged_tasks());
  total.set_remaining_tasks(total.remaining_tasks() + part.remaining_tasks());
  for (const adm::DLQReplicationTask& t : part.failed()) {
    if (total.failed_size() >= 100) break;
    *total.add_failed() = t;
  }
}

}  // namespace

DlqMergeRouter::DlqMergeRouter(HistoryReplicator& histories, persistence::ReplicationStore& store,
                               routing::Placement& placement, routing::Peers& peers,
                               std::function<bool(int32_t)> owns, int32_t shard_count)
    : histories_(histories),
      store_(store),
      placement_(placement),
      peers_(peers),
      owns_(std::move(owns)),
      shard_count_(std::max(shard_count, 1)) {}

void DlqMergeRouter::Install(rpc::Dispatcher& dispatcher) {
  dispatcher.Wrap(kMethod, [this](rpc::RawHandler handler) -> rpc::RawHandler {
    auto local = std::make_shared<const rpc::RawHandler>(std::move(handler));
    return [this, local](const rpc::CallContext& ctx, const grpc::ByteBuffer& payload,
                         rpc::RawResponder respond) {
      adm::MergeDLQMessagesRequest req;
      grpc::ByteBuffer copy(payload);
      const bool parsed =
          grpc::SerializationTraits<adm::MergeDLQMessagesRequest>::Deserialize(&copy, &req).ok();
      const adm::DLQSelection& sel = req.selection();
      // What this host answers itself: a malformed request or selection (the handler says
      // what is wrong), the namespace DLQ, and a part another host sent here.
      if (!parsed || sel.type() != adm::DLQ_TYPE_HISTORY || sel.shard_id() < 0 ||
          sel.inclusive_end_message_id() < 0) {
        return (*local)(ctx, payload, std::move(respond));
      }
      if (peers_.FromPeer(ctx)) {
        if (sel.shard_id() > 0 && LocalShard(sel.shard_id()) == 0) {
          return respond(ToGrpcStatus(SourceShardNotHere(sel.shard_id())), nullptr);
        }
        if (sel.shard_id() > 0 && !owns_(LocalShard(sel.shard_id()))) {
          return respond(ToGrpcStatus(history::ShardNotOwnedHere(LocalShard(sel.shard_id()))),
                         nullptr);
        }
        return (*local)(ctx, payload, std::move(respond));
      }
      persistence::ReplicationDlqSelection selection;
      selection.source_cluster = sel.source_cluster();
      selection.source_shard = sel.shard_id();
      if (sel.inclusive_end_message_id() > 0) selection.max_task_id = sel.inclusive_end_message_id();
      absl::StatusOr<std::vector<std::pair<std::string, int32_t>>> parts =
          store_.ReplicationDlqShards(selection);
      if (!parts.ok()) return respond(ToGrpcStatus(parts.status()), nullptr);
      // Nothing to route (an empty selection, or one naming no remote: the handler's answer).
      if (parts->empty()) return (*local)(ctx, payload, std::move(respond));
      const absl::Time deadline = std::min(ctx.deadline, absl::Now() + kRetryBudget);
      adm::MergeDLQMessagesResponse merged;
      for (const auto& [cluster, shard] : *parts) {
        adm::MergeDLQMessagesRequest part;
        *part.mutable_selection() = sel;
        part.mutable_selection()->set_source_cluster(cluster);
        part.mutable_selection()->set_shard_id(shard);
        absl::StatusOr<adm::MergeDLQMessagesResponse> one = MergeOnOwner(part, deadline);
        if (!one.ok()) {
          return respond(ToGrpcStatus(absl::Status(
                             one.status().code(),
                             absl::StrCat("merging the DLQ of cluster ", cluster, " shard ", shard,
                                          ": ", one.status().message(), " (",
                                          merged.merged_tasks(), " tasks merged before)"))),
                         nullptr);
        }
        Add(merged, *one);
      }
      grpc::ByteBuffer out;
      bool own = false;
      grpc::Status serialized =
          grpc::SerializationTraits<adm::MergeDLQMessagesResponse>::Serialize(merged, &out, &own);
      respond(serialized, serialized.ok() ? &out : nullptr);
    };
  });
}

absl::Status DlqMergeRouter::SourceShardNotHere(int32_t source_shard) const {
  return absl::FailedPreconditionError(absl::StrCat(
      "source shard ", source_shard, " is not a history shard of this cluster (1..",
      shard_count_, "); Tock replicates only between clusters with the same number of "
      "history shards"));
}

absl::StatusOr<adm::MergeDLQMessagesResponse> DlqMergeRouter::MergeOnOwner(
    const adm::MergeDLQMessagesRequest& part, absl::Time deadline) {
  const int32_t local_shard = LocalShard(part.selection().shard_id());
  if (local_shard == 0) return SourceShardNotHere(part.selection().shard_id());
  absl::Duration backoff = routing::kFirstBackoff;
  absl::Status last;
  // Bounded by the deadline: every attempt waits at least the backoff first or ends.
  for (int attempt = 0; attempt < 10000; ++attempt) {
    if (attempt > 0) {
      if (absl::Now() + backoff >= deadline) return last;
      absl::SleepFor(backoff);
      backoff = std::min(backoff * 2, routing::kMaxBackoff);
    }
    std::optional<std::string> owner = placement_.ShardOwner(local_shard);
    if (!owner.has_value()) {
      if (!owns_(local_shard)) {
        last = history::ShardNotOwnedHere(local_shard);  // being taken by this host
        continue;
      }
      persistence::ReplicationDlqSelection selection;
      selection.source_cluster = part.selection().source_cluster();
      selection.source_shard = part.selection().shard_id();
      if (part.selection().inclusive_end_message_id() > 0) {
        selection.max_task_id = part.selection().inclusive_end_message_id();
      }
      return histories_.MergeDlq(selection);
    }
    grpc::ByteBuffer request;
    bool own = false;
    if (grpc::Status s =
            grpc::SerializationTraits<adm::MergeDLQMessagesRequest>::Serialize(part, &request, &own);
        !s.ok()) {
      return absl::InternalError(absl::StrCat("serializing a merge request: ", s.error_message()));
    }
    struct Answer {
      absl::Notification done;
      grpc::Status status;
      adm::MergeDLQMessagesResponse response;
      bool parsed = false;
    };
    auto answer = std::make_shared<Answer>();
    peers_.Forward(*owner, kMethod, request, deadline,
                   [answer](const grpc::Status& s, grpc::ByteBuffer* out) {
                     answer->status = s;
                     if (s.ok() && out != nullptr) {
                       answer->parsed = grpc::SerializationTraits<adm::MergeDLQMessagesResponse>::
                                            Deserialize(out, &answer->response)
                                                .ok();
                     }
                     answer->done.Notify();
                   });
    answer->done.WaitForNotification();
    const absl::Status status(static_cast<absl::StatusCode>(answer->status.error_code()),
                              answer->status.error_message());
    if (status.ok()) {
      if (!answer->parsed) return absl::InternalError("host " + *owner + " answered a merge unreadably");
      return answer->response;
    }
    last = absl::Status(status.code(), absl::StrCat("on host ", *owner, ": ", status.message()));
    if (!routing::RetryOnOwner(status.code(), status.message(), /*from_another_host=*/true)) {
      return last;
    }
  }
  return last;
}

}  // namespace tock::server::replication
