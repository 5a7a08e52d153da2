// Archival operations: through a server (trigger, status, archived visibility) and offline,
// straight from an archive URI with no server at all (lib/archival's stores and layouts).
// Never prints; errors are absl::Status naming what was wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/archival/archive_stores.h"
#include "lib/client/connection.h"
#include "temporal/api/history/v1/message.pb.h"
#include "temporal/api/workflow/v1/message.pb.h"
#include "tock/admin/v1/service.pb.h"

namespace tock::admin {

using ArchivedExecutionFn =
    std::function<absl::Status(const temporal::api::workflow::v1::WorkflowExecutionInfo&)>;

absl::StatusOr<tock::admin::v1::TriggerArchivalResponse> TriggerArchival(
    client::Connection& connection, const std::string& namespace_name,
    const std::string& workflow_id, const std::string& run_id);

absl::StatusOr<tock::admin::v1::GetArchivalStatusResponse> GetArchivalStatus(
    client::Connection& connection, const std::string& namespace_name);

// ListArchivedWorkflowExecutions page by page; `limit` 0 for all.
absl::Status ListArchivedWorkflows(client::Connection& connection,
                                   const std::string& namespace_name, const std::string& query,
                                   int64_t limit, const ArchivedExecutionFn& each);

// The archived visibility record of a run that is gone (deleted after its retention):
// `run_id`, or with "" the most recently closed archived run of `workflow_id`. For reads
// that should work the same on archived runs. NOT_FOUND when the archive has none; the
// server's error when it has no archive to ask.
absl::StatusOr<temporal::api::workflow::v1::WorkflowExecutionInfo> FindArchivedRun(
    client::Connection& connection, const std::string& namespace_name,
    const std::string& workflow_id, const std::string& run_id);

// Offline: the archived history of a run, read from the store `uri` names.
absl::StatusOr<temporal::api::history::v1::History> ReadArchivedHistory(
    const std::string& uri, const archival::ArchiveProviders& providers,
    const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id);

// Offline: archived visibility records of a namespace matching `query` (the language of
// the URI's scheme); `limit` 0 for all.
absl::Status ListArchivedOffline(const std::string& uri, const archival::ArchiveProviders& providers,
                                 const std::string& namespace_id, const std::string& query,
                                 int64_t limit, const ArchivedExecutionFn& each);

}  // namespace tock::admin
