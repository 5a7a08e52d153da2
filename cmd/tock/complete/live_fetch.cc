#include "cmd/tock/complete/live_fetch.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "absl/strings/match.h"
#include "cmd/tock/commands/search_attributes.h"
#include "temporal/api/enums/v1/batch_operation.pb.h"
#include "temporal/api/enums/v1/event_type.pb.h"
#include "temporal/api/enums/v1/namespace.pb.h"
#include "temporal/api/enums/v1/workflow.pb.h"

namespace tock::cli::complete {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace op = temporal::api::operatorservice::v1;
namespace enums = temporal::api::enums::v1;

// "WORKFLOW_EXECUTION_STARTED" after the prefix -> "WorkflowExecutionStarted".
std::string Pascal(const std::string& enum_name, const std::string& prefix) {
  std::string name =
      absl::StartsWith(enum_name, prefix) ? enum_name.substr(prefix.size()) : enum_name;
  std::string out;
  bool start = true;
  for (char c : name) {
    if (c == '_') {
      start = true;
      continue;
    }
    out += start ? c : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    start = false;
  }
  return out;
}

template <typename Request, typename Response, typename Stub>
absl::StatusOr<Response> CallBy(client::Connection& connection, Stub& stub,
                                grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                             Response*),
                                const Request& request, const std::string& namespace_name,
                                absl::Time deadline) {
  if (absl::Now() >= deadline) return absl::DeadlineExceededError("completion deadline");
  client::Connection::ContextPtr context = connection.NewContext(namespace_name);
  context->set_deadline(absl::ToChronoTime(deadline));
  Response response;
  grpc::Status status = (stub.*method)(context.get(), request, &response);
  if (!status.ok()) return connection.Translate(status);
  return response;
}

}  // namespace

absl::StatusOr<std::vector<Candidate>> FetchNamespaces(client::Connection& connection,
                                                       absl::Time deadline, int limit) {
  std::vector<Candidate> out;
  wf::ListNamespacesRequest request;
  request.set_page_size(limit);
  do {
    auto page = CallBy(connection, connection.workflow(),
                       &wf::WorkflowService::Stub::ListNamespaces, request, "", deadline);
    if (!page.ok()) return page.status();
    for (const auto& ns : page->namespaces()) {
      if (ns.namespace_info().state() == enums::NAMESPACE_STATE_DELETED) continue;
      out.push_back(
          {ns.namespace_info().name(),
           Pascal(enums::NamespaceState_Name(ns.namespace_info().state()), "NAMESPACE_STATE_")});
    }
    request.set_next_page_token(page->next_page_token());
  } while (!request.next_page_token().empty() && static_cast<int>(out.size()) < limit);
  return out;
}

absl::StatusOr<WorkflowValues> FetchWorkflows(client::Connection& connection,
                                              const std::string& namespace_name,
                                              absl::Time deadline, int limit) {
  WorkflowValues out;
  std::set<std::string> ids;
  std::set<std::string> queues;
  for (const char* query : {"ExecutionStatus = 'Running'", ""}) {
    wf::ListWorkflowExecutionsRequest request;
    request.set_namespace_(namespace_name);
    request.set_page_size(limit);
    request.set_query(query);
    auto page = CallBy(connection, connection.workflow(),
                       &wf::WorkflowService::Stub::ListWorkflowExecutions, request, namespace_name,
                       deadline);
    if (!page.ok()) return page.status();
    for (const auto& e : page->executions()) {
      if (ids.insert(e.execution().workflow_id()).second) {
        out.workflow_ids.push_back(
            {e.execution().workflow_id(),
             Pascal(enums::WorkflowExecutionStatus_Name(e.status()), "WORKFLOW_EXECUTION_STATUS_") +
                 " " + e.type().name()});
      }
      if (!e.task_queue().empty() && queues.insert(e.task_queue()).second) {
        out.task_queues.push_back({e.task_queue(), ""});
      }
    }
  }
  return out;
}

absl::StatusOr<std::vector<Candidate>> FetchClusters(client::Connection& connection,
                                                     absl::Time deadline, int limit) {
  std::vector<Candidate> out;
  op::ListClustersRequest request;
  request.set_page_size(limit);
  do {
    auto page = CallBy(connection, connection.operator_service(),
                       &op::OperatorService::Stub::ListClusters, request, "", deadline);
    if (!page.ok()) return page.status();
    for (const auto& c : page->clusters()) out.push_back({c.cluster_name(), c.address()});
    request.set_next_page_token(page->next_page_token());
  } while (!request.next_page_token().empty() && static_cast<int>(out.size()) < limit);
  return out;
}

absl::StatusOr<std::vector<Candidate>> FetchSearchAttributes(client::Connection& connection,
                                                             const std::string& namespace_name,
                                                             absl::Time deadline) {
  op::ListSearchAttributesRequest request;
  request.set_namespace_(namespace_name);
  auto response = CallBy(connection, connection.operator_service(),
                         &op::OperatorService::Stub::ListSearchAttributes, request, namespace_name,
                         deadline);
  if (!response.ok()) return response.status();
  std::vector<Candidate> out;
  for (const auto& [name, type] : response->custom_attributes()) {
    out.push_back({name, SearchAttributeTypeName(type)});
  }
  std::sort(out.begin(), out.end(),
            [](const Candidate& a, const Candidate& b) { return a.value < b.value; });
  return out;
}

absl::StatusOr<std::vector<Candidate>> FetchBatchJobs(client::Connection& connection,
                                                      const std::string& namespace_name,
                                                      absl::Time deadline, int limit) {
  std::vector<Candidate> running;
  std::vector<Candidate> others;
  wf::ListBatchOperationsRequest request;
  request.set_namespace_(namespace_name);
  request.set_page_size(limit);
  do {
    auto page =
        CallBy(connection, connection.workflow(), &wf::WorkflowService::Stub::ListBatchOperations,
               request, namespace_name, deadline);
    if (!page.ok()) return page.status();
    for (const auto& info : page->operation_info()) {
      const bool is_running = info.state() == enums::BATCH_OPERATION_STATE_RUNNING;
      std::string description =
          Pascal(enums::BatchOperationState_Name(info.state()), "BATCH_OPERATION_STATE_");
      if (info.operation_type() != enums::BATCH_OPERATION_TYPE_UNSPECIFIED) {
        description += " " + Pascal(enums::BatchOperationType_Name(info.operation_type()),
                                    "BATCH_OPERATION_TYPE_");
      }
      (is_running ? running : others).push_back({info.job_id(), description});
    }
    request.set_next_page_token(page->next_page_token());
  } while (!request.next_page_token().empty() &&
           static_cast<int>(running.size() + others.size()) < limit);
  running.insert(running.end(), others.begin(), others.end());
  return running;
}

absl::StatusOr<std::vector<Candidate>> FetchSchedules(client::Connection& connection,
                                                      const std::string& namespace_name,
                                                      absl::Time deadline, int limit) {
  std::vector<Candidate> out;
  wf::ListSchedulesRequest request;
  request.set_namespace_(namespace_name);
  request.set_maximum_page_size(limit);
  do {
    auto page = CallBy(connection, connection.workflow(), &wf::WorkflowService::Stub::ListSchedules,
                       request, namespace_name, deadline);
    if (!page.ok()) return page.status();
    for (const auto& e : page->schedules()) {
      out.push_back({e.schedule_id(), e.info().paused() ? "paused" : e.info().workflow_type().name()});
    }
    request.set_next_page_token(page->next_page_token());
  } while (!request.next_page_token().empty() && static_cast<int>(out.size()) < limit);
  return out;
}

absl::StatusOr<std::vector<Candidate>> FetchDeployments(client::Connection& connection,
                                                        const std::string& namespace_name,
                                                        absl::Time deadline, int limit) {
  std::vector<Candidate> out;
  wf::ListWorkerDeploymentsRequest request;
  request.set_namespace_(namespace_name);
  request.set_page_size(limit);
  do {
    auto page = CallBy(connection, connection.workflow(),
                       &wf::WorkflowService::Stub::ListWorkerDeployments, request, namespace_name,
                       deadline);
    if (!page.ok()) return page.status();
    for (const auto& d : page->worker_deployments()) {
      const std::string& current = d.routing_config().current_deployment_version().build_id();
      out.push_back({d.name(), current.empty() ? "" : "current " + current});
    }
    request.set_next_page_token(page->next_page_token());
  } while (!request.next_page_token().empty() && static_cast<int>(out.size()) < limit);
  return out;
}

absl::StatusOr<std::vector<Candidate>> FetchNexusEndpoints(client::Connection& connection,
                                                           absl::Time deadline, int limit) {
  std::vector<Candidate> out;
  op::ListNexusEndpointsRequest request;
  request.set_page_size(std::min(limit, 1000));
  do {
    auto page = CallBy(connection, connection.operator_service(),
                       &op::OperatorService::Stub::ListNexusEndpoints, request, "", deadline);
    if (!page.ok()) return page.status();
    for (const auto& e : page->endpoints()) {
      const auto& target = e.spec().target();
      out.push_back({e.spec().name(), target.has_worker() ? target.worker().namespace_() + "/" +
                                                                target.worker().task_queue()
                                                          : target.external().url()});
    }
    request.set_next_page_token(page->next_page_token());
  } while (!request.next_page_token().empty() && static_cast<int>(out.size()) < limit);
  // Listed by id (random): offered by name.
  std::sort(out.begin(), out.end(),
            [](const Candidate& a, const Candidate& b) { return a.value < b.value; });
  return out;
}

std::vector<Candidate> EventTypeNames() {
  std::vector<Candidate> out;
  const auto* descriptor = enums::EventType_descriptor();
  for (int i = 0; i < descriptor->value_count(); ++i) {
    const std::string& name = descriptor->value(i)->name();
    if (descriptor->value(i)->number() == 0) continue;  // EVENT_TYPE_UNSPECIFIED
    out.push_back({Pascal(name, "EVENT_TYPE_"), name});
  }
  return out;
}

std::vector<Candidate> PathCandidates(const std::string& partial) {
  namespace fs = std::filesystem;
  const size_t slash = partial.rfind('/');
  const std::string dir_part = slash == std::string::npos ? "" : partial.substr(0, slash + 1);
  const std::string name_part = slash == std::string::npos ? partial : partial.substr(slash + 1);
  std::vector<Candidate> out;
  std::error_code ec;
  fs::directory_iterator it(dir_part.empty() ? fs::path(".") : fs::path(dir_part), ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!absl::StartsWith(name, name_part)) continue;
    if (name.front() == '.' && !absl::StartsWith(name_part, ".")) continue;
    std::error_code type_ec;
    const bool is_dir = it->is_directory(type_ec);
    out.push_back({dir_part + name + (is_dir ? "/" : ""), ""});
  }
  std::sort(out.begin(), out.end(),
            [](const Candidate& a, const Candidate& b) { return a.value < b.value; });
  return out;
}

}  // namespace tock::cli::complete
