#include "server-core/replication/reapply_events.h"

#include "absl/strings/str_cat.h"

namespace tock::server::replication {
namespace {

namespace adm = tock::admin::v1;

}  // namespace

history::HistoryEngine::ReapplyForwarder ForwardReapplyTo(ClusterRegistry& clusters,
                                                         RemoteFrontends& remotes) {
  return [&clusters, &remotes](const std::string& active_cluster, const std::string& namespace_id,
                               const std::string& workflow_id,
                               const std::vector<persistence::HistoryEvent>& events) {
    for (const persistence::StoredRemoteCluster& remote : clusters.Remotes()) {
      if (remote.record.name() != active_cluster) continue;
      adm::ReapplyEventsRequest req;
      req.set_namespace_id(namespace_id);
      req.set_workflow_id(workflow_id);
      req.mutable_events()->Assign(events.begin(), events.end());
      return remotes.ReapplyEvents(remote.record.address(), req);
    }
    return absl::FailedPreconditionError(
        absl::StrCat("cluster ", active_cluster,
                     " (where the namespace is active) is not a connected remote cluster"));
  };
}

void RegisterReapplyEventsHandler(rpc::Dispatcher& dispatcher, history::HistoryEngine& history) {
  dispatcher.AddUnary<adm::ReapplyEventsRequest, adm::ReapplyEventsResponse>(
      "tock.admin.v1.AdminService/ReapplyEvents",
      [&history](const adm::ReapplyEventsRequest& req,
                 const rpc::CallContext&) -> absl::StatusOr<adm::ReapplyEventsResponse> {
        const std::vector<persistence::HistoryEvent> events(req.events().begin(),
                                                            req.events().end());
        if (absl::Status s = history.ReapplyEvents(req.namespace_id(), req.workflow_id(), events);
            !s.ok()) {
          return s;
        }
        return adm::ReapplyEventsResponse();
      });
}

}  // namespace tock::server::replication
