// Worker heartbeats (reference/api_2026.md §7.3): RecordWorkerHeartbeat keeps each worker's
// last heartbeat in the host's matching::WorkerRegistry (the call router sends a namespace's
// calls to one host); ListWorkers, CountWorkers and DescribeWorker read it. The namespace
// capability worker_heartbeats says so to the SDKs, which then heartbeat every minute.
#include "absl/strings/str_cat.h"
#include "server-core/frontend/handlers.h"
#include "server-core/matching/worker_registry.h"

namespace tock::server::frontend {
namespace {

namespace wk = temporal::api::worker::v1;

constexpr char kService[] = "temporal.api.workflowservice.v1.WorkflowService/";
constexpr int kMaxPageSize = 1000;  // Temporal's VisibilityMaxPageSize
// Heartbeats in one call: a process runs a worker per task queue, rarely more than a few.
constexpr int kMaxHeartbeatsPerCall = 1000;

// The light listing of a worker, from its last heartbeat.
wk::WorkerListInfo ListInfo(const wk::WorkerHeartbeat& h) {
  wk::WorkerListInfo out;
  out.set_worker_instance_key(h.worker_instance_key());
  out.set_worker_identity(h.worker_identity());
  out.set_task_queue(h.task_queue());
  *out.mutable_deployment_version() = h.deployment_version();
  out.set_sdk_name(h.sdk_name());
  out.set_sdk_version(h.sdk_version());
  out.set_status(h.status());
  *out.mutable_start_time() = h.start_time();
  out.set_host_name(h.host_info().host_name());
  out.set_worker_grouping_key(h.host_info().worker_grouping_key());
  out.set_process_id(h.host_info().process_id());
  *out.mutable_plugins() = h.plugins();
  *out.mutable_drivers() = h.drivers();
  return out;
}

}  // namespace

void RegisterWorkerRegistryHandlers(rpc::Dispatcher& dispatcher,
                                    namespaces::NamespaceEngine& namespaces,
                                    matching::WorkerRegistry& registry) {
  auto resolve = [&namespaces](const std::string& name) {
    return namespaces.Resolve(name, true, namespaces::NamespaceAccess::kRead);
  };
  dispatcher.AddUnary<wf::RecordWorkerHeartbeatRequest, wf::RecordWorkerHeartbeatResponse>(
      absl::StrCat(kService, "RecordWorkerHeartbeat"),
      [resolve, &registry](const wf::RecordWorkerHeartbeatRequest& req,
                           const rpc::CallContext&) -> absl::StatusOr<wf::RecordWorkerHeartbeatResponse> {
        auto ns = resolve(req.namespace_());
        if (!ns.ok()) return ns.status();
        if (req.worker_heartbeat_size() > kMaxHeartbeatsPerCall) {
          return absl::InvalidArgumentError(absl::StrCat(
              "a call carries at most ", kMaxHeartbeatsPerCall, " worker heartbeats; this one has ",
              req.worker_heartbeat_size()));
        }
        for (const wk::WorkerHeartbeat& h : req.worker_heartbeat()) registry.Record(ns->id, h);
        return wf::RecordWorkerHeartbeatResponse();
      });
  dispatcher.AddUnary<wf::ListWorkersRequest, wf::ListWorkersResponse>(
      absl::StrCat(kService, "ListWorkers"),
      [resolve, &registry](const wf::ListWorkersRequest& req,
                           const rpc::CallContext&) -> absl::StatusOr<wf::ListWorkersResponse> {
        auto ns = resolve(req.namespace_());
        if (!ns.ok()) return ns.status();
        auto query = matching::WorkerQuery::Compile(req.query());
        if (!query.ok()) return query.status();
        const int size = req.page_size() <= 0 || req.page_size() > kMaxPageSize ? kMaxPageSize : req.page_size();
        // The token is the last worker instance key of the page before (keys are ordered).
        std::vector<wk::WorkerHeartbeat> page =
            registry.List(ns->id, *query, req.include_system_workers(), req.next_page_token(),
                          static_cast<size_t>(size) + 1);
        wf::ListWorkersResponse out;
        const bool more = page.size() > static_cast<size_t>(size);
        if (more) page.pop_back();
        for (const wk::WorkerHeartbeat& h : page) {
          *out.add_workers() = ListInfo(h);
          *out.add_workers_info()->mutable_worker_heartbeat() = h;
        }
        if (more) out.set_next_page_token(page.back().worker_instance_key());
        return out;
      });
  dispatcher.AddUnary<wf::CountWorkersRequest, wf::CountWorkersResponse>(
      absl::StrCat(kService, "CountWorkers"),
      [resolve, &registry](const wf::CountWorkersRequest& req,
                           const rpc::CallContext&) -> absl::StatusOr<wf::CountWorkersResponse> {
        auto ns = resolve(req.namespace_());
        if (!ns.ok()) return ns.status();
        auto query = matching::WorkerQuery::Compile(req.query());
        if (!query.ok()) return query.status();
        wf::CountWorkersResponse out;
        out.set_count(static_cast<int64_t>(registry.List(ns->id, *query, req.include_system_workers()).size()));
        return out;
      });
  dispatcher.AddUnary<wf::DescribeWorkerRequest, wf::DescribeWorkerResponse>(
      absl::StrCat(kService, "DescribeWorker"),
      [resolve, &registry](const wf::DescribeWorkerRequest& req,
                           const rpc::CallContext&) -> absl::StatusOr<wf::DescribeWorkerResponse> {
        auto ns = resolve(req.namespace_());
        if (!ns.ok()) return ns.status();
        if (req.worker_instance_key().empty()) {
          return absl::InvalidArgumentError("WorkerInstanceKey is not set on request.");
        }
        std::optional<wk::WorkerHeartbeat> found = registry.Describe(ns->id, req.worker_instance_key());
        if (!found.has_value()) {
          return absl::NotFoundError(absl::StrCat(
              "worker not found: no heartbeat from worker instance key \"",
              req.worker_instance_key().substr(0, 200), "\" in the last ",
              absl::FormatDuration(matching::WorkerRegistry::kEntryTtl)));
        }
        wf::DescribeWorkerResponse out;
        *out.mutable_worker_info()->mutable_worker_heartbeat() = *found;
        return out;
      });
}

}  // namespace tock::server::frontend
