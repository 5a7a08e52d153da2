// Both ends of AdminService.ReapplyEvents (reference/replication.md §3.5 step 6): a standby
// that finds what a losing branch received from outside (signals, cancel requests,
// terminations, updates) sends it to the cluster where the namespace is active, which
// applies it again to the workflow's current run.
#pragma once

#include "server-core/history/history_engine.h"
#include "server-core/replication/cluster_registry.h"
#include "server-core/replication/remote_frontends.h"
#include "server-core/rpc/dispatcher.h"

namespace tock::server::replication {

// The sending end: the events go to the active cluster's frontend (a connected remote).
history::HistoryEngine::ReapplyForwarder ForwardReapplyTo(ClusterRegistry& clusters,
                                                         RemoteFrontends& remotes);

// The receiving end.
void RegisterReapplyEventsHandler(rpc::Dispatcher& dispatcher, history::HistoryEngine& history);

}  // namespace tock::server::replication
