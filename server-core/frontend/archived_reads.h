// Reads from the archive through the Temporal API (SPEC §3, reference server_rules §2.3):
// GetWorkflowExecutionHistory of a run that is gone falls back to the history archive
// (`archived: true`), and ListArchivedWorkflowExecutions queries the visibility archive.
#pragma once

#include "absl/status/statusor.h"
#include "lib/common/clock.h"
#include "server-core/archiver/archive_registry.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/rpc/dispatcher.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::frontend {

namespace wf = temporal::api::workflowservice::v1;

// Whether a history read that found no run should try the archive: the request names a
// run, does not skip archival, and the cluster reads archived histories.
bool ShouldReadArchivedHistory(const archiver::ArchiveRegistry& archives,
                               const wf::GetWorkflowExecutionHistoryRequest& req);

// The archived history of the run `req` names. INVALID_ARGUMENT "Requested workflow history
// not found, may have passed retention period." when the namespace has no history URI;
// NOT_FOUND when the archive has no such run.
absl::StatusOr<wf::GetWorkflowExecutionHistoryResponse> ReadArchivedHistory(
    namespaces::NamespaceEngine& namespaces, archiver::ArchiveRegistry& archives,
    const wf::GetWorkflowExecutionHistoryRequest& req);

void RegisterArchivedVisibilityHandlers(rpc::Dispatcher& dispatcher,
                                        namespaces::NamespaceEngine& namespaces,
                                        archiver::ArchiveRegistry& archives, Clock& clock);

}  // namespace tock::server::frontend
