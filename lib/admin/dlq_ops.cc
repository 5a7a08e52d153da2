#include "lib/admin/dlq_ops.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/admin/cluster_ops.h"

namespace tock::admin {
namespace {

namespace adm = tock::admin::v1;

adm::DLQSelection ToProto(const DlqSelection& selection) {
  adm::DLQSelection out;
  out.set_source_cluster(selection.remote);
  out.set_shard_id(selection.shard);
  out.set_inclusive_end_message_id(selection.last_message_id);
  out.set_type(selection.type == "namespace" ? adm::DLQ_TYPE_NAMESPACE : adm::DLQ_TYPE_HISTORY);
  return out;
}

}  // namespace

absl::Status CheckDlqSelection(const DlqSelection& selection) {
  if (selection.type != "history" && selection.type != "namespace") {
    return absl::InvalidArgumentError("--type must be history or namespace");
  }
  if (!selection.remote.empty()) {
    // CheckClusterName's words, about this command's flag.
    if (absl::Status s = CheckClusterName(selection.remote); !s.ok()) {
      std::string message(s.message());
      if (absl::StartsWith(message, "--name")) message.replace(0, 6, "--remote");
      return absl::InvalidArgumentError(message);
    }
  }
  if (selection.shard < 0) {
    return absl::InvalidArgumentError("--shard must be a shard of the remote (1 or more; 0: every shard)");
  }
  if (selection.last_message_id < 0) {
    return absl::InvalidArgumentError("--last-message-id must be a task id (1 or more; 0: no bound)");
  }
  if (selection.type == "namespace" && selection.shard != 0) {
    return absl::InvalidArgumentError(
        "--shard is for the history DLQ: namespace tasks have no shard");
  }
  return absl::OkStatus();
}

absl::Status ReadDlq(client::Connection& connection, const DlqSelection& selection,
                     const std::function<absl::Status(const adm::DLQReplicationTask&)>& each,
                     int64_t limit, int32_t page_size) {
  if (absl::Status s = CheckDlqSelection(selection); !s.ok()) return s;
  adm::GetDLQMessagesRequest req;
  *req.mutable_selection() = ToProto(selection);
  req.set_maximum_page_size(page_size);
  int64_t sent = 0;
  // Bounded: a page per call, and every page moves past the last key of the one before.
  for (int page = 0; page < 1'000'000; ++page) {
    absl::StatusOr<adm::GetDLQMessagesResponse> got = connection.Call(
        &adm::AdminService::Stub::GetDLQMessages, connection.admin(), req);
    if (!got.ok()) return got.status();
    for (const adm::DLQReplicationTask& task : got->tasks()) {
      if (limit > 0 && sent >= limit) return absl::OkStatus();
      if (absl::Status s = each(task); !s.ok()) return s;
      ++sent;
    }
    if (got->next_page_token().empty()) return absl::OkStatus();
    req.set_next_page_token(got->next_page_token());
  }
  return absl::OkStatus();
}

absl::StatusOr<adm::PurgeDLQMessagesResponse> PurgeDlq(client::Connection& connection,
                                                       const DlqSelection& selection) {
  if (absl::Status s = CheckDlqSelection(selection); !s.ok()) return s;
  adm::PurgeDLQMessagesRequest req;
  *req.mutable_selection() = ToProto(selection);
  return connection.Call(&adm::AdminService::Stub::PurgeDLQMessages, connection.admin(), req);
}

absl::StatusOr<adm::MergeDLQMessagesResponse> MergeDlq(client::Connection& connection,
                                                       const DlqSelection& selection) {
  if (absl::Status s = CheckDlqSelection(selection); !s.ok()) return s;
  adm::MergeDLQMessagesRequest req;
  *req.mutable_selection() = ToProto(selection);
  return connection.Call(&adm::AdminService::Stub::MergeDLQMessages, connection.admin(), req);
}

}  // namespace tock::admin
