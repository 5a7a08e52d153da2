// Starting an activity's attempt for a worker: what a poll's match (RecordActivityTaskStarted)
// and an eager dispatch in a workflow task's completion (workflow_tasks.cc) both do, and the
// task the worker gets (activity_tasks.cc).
#pragma once

#include <string>

#include "server-core/history/run_transaction.h"
#include "temporal/api/history/v1/message.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "tock/persistence/v1/execution.pb.h"

namespace tock::server::history {

// Marks the current attempt of pending activity `a` started by `identity` now: its
// unstarted deadlines retired, its start-to-close, heartbeat and schedule-to-close deadlines
// armed. ActivityTaskStarted itself is written with the attempt's outcome, as Temporal does.
void StartActivityAttempt(RunTransaction& tx, tock::persistence::v1::ActivityInfo& a,
                          const std::string& identity);

// The task a worker gets for started activity `a` of `run` (in namespace `namespace_name`),
// scheduled with the event attributes `scheduled`.
temporal::api::workflowservice::v1::PollActivityTaskQueueResponse ActivityTaskOf(
    const std::string& namespace_name, const tock::persistence::v1::MutableState& run,
    const tock::persistence::v1::ActivityInfo& a,
    const temporal::api::history::v1::ActivityTaskScheduledEventAttributes& scheduled);

}  // namespace tock::server::history
