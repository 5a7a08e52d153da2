// AdminService.DescribeMutableState: a run's stored state for operators (`tock workflow
// describe-state`, the REPL inspector's `branches`). A read: served on a standby cluster,
// where it shows the copy replicated there.
#include "server-core/frontend/handlers.h"
#include "server-core/history/history_engine.h"

namespace tock::server::frontend {

void RegisterMutableStateHandler(rpc::Dispatcher& dispatcher,
                                 namespaces::NamespaceEngine& namespaces,
                                 history::HistoryEngine& history) {
  namespace adm = tock::admin::v1;
  dispatcher.AddUnary<adm::DescribeMutableStateRequest, adm::DescribeMutableStateResponse>(
      "tock.admin.v1.AdminService/DescribeMutableState",
      [&namespaces, &history](const adm::DescribeMutableStateRequest& req, const rpc::CallContext&)
          -> absl::StatusOr<adm::DescribeMutableStateResponse> {
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            namespaces.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
        if (!ns.ok()) return ns.status();
        return history.DescribeMutableState(
            history::NamespaceRef{ns->id, ns->name, ns->failover_version}, req);
      });
}

}  // namespace tock::server::frontend
