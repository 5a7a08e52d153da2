#include "lib/admin/archival_ops.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/archival/history_archive.h"
#include "lib/archival/visibility_archive.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"

namespace tock::admin {
namespace wf = temporal::api::workflowservice::v1;
using AdminStub = tock::admin::v1::AdminService::Stub;
using WorkflowStub = wf::WorkflowService::Stub;

absl::StatusOr<tock::admin::v1::TriggerArchivalResponse> TriggerArchival(
    client::Connection& connection, const std::string& namespace_name,
    const std::string& workflow_id, const std::string& run_id) {
  tock::admin::v1::TriggerArchivalRequest req;
  req.set_namespace_(namespace_name);
  req.set_workflow_id(workflow_id);
  req.set_run_id(run_id);
  return connection.Call(&AdminStub::TriggerArchival, connection.admin(), req, namespace_name);
}

absl::StatusOr<tock::admin::v1::GetArchivalStatusResponse> GetArchivalStatus(
    client::Connection& connection, const std::string& namespace_name) {
  tock::admin::v1::GetArchivalStatusRequest req;
  req.set_namespace_(namespace_name);
  return connection.Call(&AdminStub::GetArchivalStatus, connection.admin(), req, namespace_name);
}

absl::Status ListArchivedWorkflows(client::Connection& connection,
                                   const std::string& namespace_name, const std::string& query,
                                   int64_t limit, const ArchivedExecutionFn& each) {
  wf::ListArchivedWorkflowExecutionsRequest req;
  req.set_namespace_(namespace_name);
  req.set_query(query);
  req.set_page_size(limit > 0 && limit < 1000 ? static_cast<int32_t>(limit) : 1000);
  int64_t seen = 0;
  for (int page_no = 0; page_no < 1'000'000; ++page_no) {
    auto page = connection.Call(&WorkflowStub::ListArchivedWorkflowExecutions,
                                connection.workflow(), req, namespace_name);
    if (!page.ok()) return page.status();
    for (const auto& e : page->executions()) {
      if (limit > 0 && seen >= limit) return absl::OkStatus();
      if (absl::Status s = each(e); !s.ok()) return s;
      ++seen;
    }
    if (page->next_page_token().empty() || (limit > 0 && seen >= limit)) break;
    req.set_next_page_token(page->next_page_token());
  }
  return absl::OkStatus();
}

absl::StatusOr<temporal::api::workflow::v1::WorkflowExecutionInfo> FindArchivedRun(
    client::Connection& connection, const std::string& namespace_name,
    const std::string& workflow_id, const std::string& run_id) {
  if (workflow_id.find('\'') != std::string::npos) {
    return absl::NotFoundError("a workflow id with a quote cannot be queried in the archive");
  }
  // Both archive query languages take WorkflowId; the run is picked here (the S3 one has no
  // RunId filter).
  std::optional<temporal::api::workflow::v1::WorkflowExecutionInfo> best;
  absl::Status s = ListArchivedWorkflows(
      connection, namespace_name, absl::StrCat("WorkflowId = '", workflow_id, "'"), 10'000,
      [&](const temporal::api::workflow::v1::WorkflowExecutionInfo& e) {
        const auto newer = [](const auto& a, const auto& b) {
          return std::pair{a.close_time().seconds(), a.close_time().nanos()} >
                 std::pair{b.close_time().seconds(), b.close_time().nanos()};
        };
        if (run_id.empty() ? (!best || newer(e, *best)) : e.execution().run_id() == run_id) {
          best = e;
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  if (!best) {
    return absl::NotFoundError(absl::StrCat("workflow \"", workflow_id, "\"",
                                            run_id.empty() ? "" : " run " + run_id,
                                            " is not in the archive"));
  }
  return *best;
}

absl::StatusOr<temporal::api::history::v1::History> ReadArchivedHistory(
    const std::string& uri, const archival::ArchiveProviders& providers,
    const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id) {
  absl::StatusOr<archival::OpenedArchive> opened = archival::OpenArchive(uri, providers);
  if (!opened.ok()) return opened.status();
  absl::StatusOr<temporal::api::history::v1::History> history =
      archival::HistoryArchive(opened->uri, *opened->store).Get(namespace_id, workflow_id, run_id);
  if (!history.ok() && history.status().code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(absl::StrCat("no archived history of workflow \"", workflow_id,
                                            "\" run ", run_id, " in namespace ", namespace_id,
                                            " at ", uri));
  }
  return history;
}

absl::Status ListArchivedOffline(const std::string& uri, const archival::ArchiveProviders& providers,
                                 const std::string& namespace_id, const std::string& query,
                                 int64_t limit, const ArchivedExecutionFn& each) {
  absl::StatusOr<archival::OpenedArchive> opened = archival::OpenArchive(uri, providers);
  if (!opened.ok()) return opened.status();
  archival::VisibilityArchive archive(opened->uri, *opened->store);
  std::string token;
  int64_t seen = 0;
  for (int page_no = 0; page_no < 1'000'000; ++page_no) {
    const int page_size = limit > 0 && limit < 1000 ? static_cast<int>(limit) : 1000;
    absl::StatusOr<archival::ArchivedVisibilityPage> page =
        archive.Query(namespace_id, query, page_size, token, absl::InfiniteFuture());
    if (!page.ok()) return page.status();
    for (const auto& e : page->executions) {
      if (limit > 0 && seen >= limit) return absl::OkStatus();
      if (absl::Status s = each(e); !s.ok()) return s;
      ++seen;
    }
    if (page->next_page_token.empty() || (limit > 0 && seen >= limit)) break;
    token = page->next_page_token;
  }
  return absl::OkStatus();
}

}  // namespace tock::admin
