// tock.timer.v1.TimerService on the server's dispatcher: each method answers through the
// TimerService. On a database shared by hosts, the writes (create, update, delete) are then
// routed to the owner of the timer's shard by the call router (RouteTimerCalls).
#pragma once

#include "server-core/routing/call_router.h"
#include "server-core/rpc/dispatcher.h"
#include "server-core/timers/timer_service.h"

namespace tock::server::timers {

inline constexpr char kTimerServicePrefix[] = "tock.timer.v1.TimerService/";

void RegisterTimerHandlers(rpc::Dispatcher& dispatcher, TimerService& service);

// Hosts sharing a database: CreateTimer, UpdateTimer and DeleteTimer go to the owner of the
// timer's shard (reads are answered by any host from the store). After RegisterTimerHandlers.
void RouteTimerCalls(routing::CallRouter& router, rpc::Dispatcher& dispatcher,
                     TimerService& service);

}  // namespace tock::server::timers
