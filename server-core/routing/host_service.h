// The calls hosts make to each other (proto/tock/cluster/v1/host_service.proto), served on
// the public port by the dispatcher: AddTask to the owner of a task queue, and History, an
// operation of the history service on a run, to the owner of the run's shard. The
// receiving host does the work only if it owns the queue / the shard; otherwise it answers
// "not owned" (history/shard_controller.h) and the sender looks the owner up again.
#pragma once

#include "server-core/history/history_engine.h"
#include "server-core/matching/matching_engine.h"
#include "server-core/routing/placement.h"
#include "server-core/rpc/dispatcher.h"
#include "tock/cluster/v1/host_service.pb.h"

namespace tock::server::routing {

inline constexpr char kAddTaskMethod[] = "tock.cluster.v1.HostService/AddTask";
inline constexpr char kHistoryMethod[] = "tock.cluster.v1.HostService/History";

void RegisterHostService(rpc::Dispatcher& dispatcher, history::HistoryEngine& history,
                         matching::MatchingEngine& matching, const Placement& placement);

// The wire forms of what the engines hold.
tock::cluster::v1::QueueTask ToWire(const persistence::TaskQueueTask& task);
persistence::TaskQueueTask FromWire(const tock::cluster::v1::QueueTask& task);
tock::cluster::v1::NamespaceRef ToWire(const history::NamespaceRef& ns);
history::NamespaceRef FromWire(const tock::cluster::v1::NamespaceRef& ns);

}  // namespace tock::server::routing
