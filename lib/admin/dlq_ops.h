// The replication DLQ of a cluster (Tock's AdminService GetDLQMessages, PurgeDLQMessages,
// MergeDLQMessages; reference/replication.md §3.8): history replication tasks from the
// remote clusters that kept failing there. Never prints; errors are absl::Status with the
// server's message verbatim.
// Thread safety: as the Connection.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/client/connection.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::admin {

// Which tasks: of the DLQ `type` ("history", the default, or "namespace"), of the remote
// cluster `remote` (empty: every one), of its shard `shard` (0: every shard; the namespace
// DLQ has none), with task ids up to `last_message_id` (0: no bound).
struct DlqSelection {
  std::string type = "history";
  std::string remote;
  int32_t shard = 0;
  int64_t last_message_id = 0;
};

// INVALID_ARGUMENT naming the flag (--type history or namespace, --remote as
// CheckClusterName, --shard, --last-message-id not negative, no --shard with the namespace
// DLQ), before anything is sent.
absl::Status CheckDlqSelection(const DlqSelection& selection);

// Calls `each` for every selected task, oldest first per remote and shard, page by page
// (`page_size` a call), at most `limit` (0: all); stops at the first error of `each`.
inline constexpr int32_t kDlqPageSize = 100;
absl::Status ReadDlq(client::Connection& connection, const DlqSelection& selection,
                     const std::function<absl::Status(const tock::admin::v1::DLQReplicationTask&)>& each,
                     int64_t limit = 0, int32_t page_size = kDlqPageSize);

// Deletes the selected tasks: they are never applied.
absl::StatusOr<tock::admin::v1::PurgeDLQMessagesResponse> PurgeDlq(client::Connection& connection,
                                                                   const DlqSelection& selection);

// Applies the selected tasks again (the server fetches their events from the remote): what
// applies leaves the DLQ, what fails again stays (with the later tasks of its workflow).
absl::StatusOr<tock::admin::v1::MergeDLQMessagesResponse> MergeDlq(client::Connection& connection,
                                                                   const DlqSelection& selection);

}  // namespace tock::admin
