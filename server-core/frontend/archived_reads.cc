#include "server-core/frontend/archived_reads.h"

#include "absl/strings/str_cat.h"

namespace tock::server::frontend {
namespace enums = temporal::api::enums::v1;

namespace {

constexpr int32_t kMaxArchivedPageSize = 10000;  // frontend.visibilityArchivalQueryMaxPageSize

absl::StatusOr<wf::DescribeNamespaceResponse> Describe(namespaces::NamespaceEngine& namespaces,
                                                       const std::string& name) {
  wf::DescribeNamespaceRequest d;
  d.set_namespace_(name);
  return namespaces.Describe(d);
}

}  // namespace

bool ShouldReadArchivedHistory(const archiver::ArchiveRegistry& archives,
                               const wf::GetWorkflowExecutionHistoryRequest& req) {
  return !req.execution().run_id().empty() && !req.skip_archival() &&
         archives.history_setup().read_enabled;
}

absl::StatusOr<wf::GetWorkflowExecutionHistoryResponse> ReadArchivedHistory(
    namespaces::NamespaceEngine& namespaces, archiver::ArchiveRegistry& archives,
    const wf::GetWorkflowExecutionHistoryRequest& req) {
  absl::StatusOr<wf::DescribeNamespaceResponse> ns = Describe(namespaces, req.namespace_());
  if (!ns.ok()) return ns.status();
  const std::string& uri = ns->config().history_archival_uri();
  if (uri.empty()) {
    return absl::InvalidArgumentError(
        "Requested workflow history not found, may have passed retention period.");
  }
  absl::StatusOr<archival::HistoryArchive*> archive = archives.History(uri);
  if (!archive.ok()) return archive.status();
  absl::StatusOr<temporal::api::history::v1::History> history = (*archive)->Get(
      ns->namespace_info().id(), req.execution().workflow_id(), req.execution().run_id());
  if (!history.ok()) {
    if (history.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(absl::StrCat(
          "workflow \"", req.execution().workflow_id(), "\" run ", req.execution().run_id(),
          " is neither in the database nor in the archive ", uri));
    }
    return history.status();
  }
  wf::GetWorkflowExecutionHistoryResponse out;
  if (req.history_event_filter_type() == enums::HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT &&
      history->events_size() > 0) {
    *out.mutable_history()->add_events() = history->events(history->events_size() - 1);
  } else {
    *out.mutable_history() = std::move(*history);
  }
  out.set_archived(true);
  return out;
}

namespace {

absl::StatusOr<wf::ListArchivedWorkflowExecutionsResponse> ListArchived(
    namespaces::NamespaceEngine& namespaces, archiver::ArchiveRegistry& archives, Clock& clock,
    const wf::ListArchivedWorkflowExecutionsRequest& req) {
  int32_t page_size = req.page_size() <= 0 ? kMaxArchivedPageSize : req.page_size();
  if (page_size > kMaxArchivedPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("PageSize is larger than allowed ", kMaxArchivedPageSize, "."));
  }
  const archiver::ArchivalKindSetup& setup = archives.visibility_setup();
  if (!setup.enabled) {
    return absl::InvalidArgumentError("Cluster is not configured for visibility archival.");
  }
  if (!setup.read_enabled) {
    return absl::InvalidArgumentError(
        "Cluster is not configured for reading archived visibility records.");
  }
  absl::StatusOr<wf::DescribeNamespaceResponse> ns = Describe(namespaces, req.namespace_());
  if (!ns.ok()) return ns.status();
  if (ns->config().visibility_archival_state() != enums::ARCHIVAL_STATE_ENABLED ||
      ns->config().visibility_archival_uri().empty()) {
    return absl::InvalidArgumentError("Namespace is not configured for visibility archival.");
  }
  absl::StatusOr<archival::VisibilityArchive*> archive =
      archives.Visibility(ns->config().visibility_archival_uri());
  if (!archive.ok()) return archive.status();
  absl::StatusOr<archival::ArchivedVisibilityPage> page = (*archive)->Query(
      ns->namespace_info().id(), req.query(), page_size, req.next_page_token(), clock.Now());
  if (!page.ok()) return page.status();
  wf::ListArchivedWorkflowExecutionsResponse out;
  for (auto& e : page->executions) *out.add_executions() = std::move(e);
  out.set_next_page_token(page->next_page_token);
  return out;
}

}  // namespace

void RegisterArchivedVisibilityHandlers(rpc::Dispatcher& dispatcher,
                                        namespaces::NamespaceEngine& namespaces,
                                        archiver::ArchiveRegistry& archives, Clock& clock) {
  dispatcher.AddAsync<wf::ListArchivedWorkflowExecutionsRequest,
                      wf::ListArchivedWorkflowExecutionsResponse>(
      "temporal.api.workflowservice.v1.WorkflowService/ListArchivedWorkflowExecutions",
      [&](const wf::ListArchivedWorkflowExecutionsRequest& req, const rpc::CallContext&,
          rpc::Responder<wf::ListArchivedWorkflowExecutionsResponse> respond) {
        absl::Status queued = archives.RunBlocking([&namespaces, &archives, &clock, req, respond] {
          respond(ListArchived(namespaces, archives, clock, req));
        });
        if (!queued.ok()) respond(queued);
      });
}

}  // namespace tock::server::frontend
