// Whether a workflow task's commands keep the per-workflow limits (request_limits.h), with
// Temporal's causes and messages. A count over its limit fails the workflow task (the worker
// gets another); a payload over the blob limit fails it and terminates the run, as Temporal
// does (the worker would only send it again).
#pragma once

#include <optional>
#include <string>

#include "server-core/history/request_limits.h"
#include "server-core/history/run_transaction.h"
#include "temporal/api/command/v1/message.pb.h"

namespace tock::server::history {

struct CommandLimitBreach {
  temporal::api::enums::v1::WorkflowTaskFailedCause cause;
  std::string message;
  bool terminate = false;  // the run ends (WorkflowExecutionTerminated with `message`)
};

// The first breach among `commands` applied to `state` in order, or none.
// Whether an upsert, continue-as-new or child command sets search attributes (only then is
// the namespace's schema needed: most workflow tasks skip looking it up).
bool CommandsSetSearchAttributes(
    const google::protobuf::RepeatedPtrField<temporal::api::command::v1::Command>& commands);

// The search attributes of upsert, continue-as-new and child commands are checked against
// `schema` (BAD_SEARCH_ATTRIBUTES, the run goes on).
std::optional<CommandLimitBreach> CheckCommandLimits(
    const MutableStateRecord& state,
    const google::protobuf::RepeatedPtrField<temporal::api::command::v1::Command>& commands,
    const Limits& limits, const visibility::SearchAttributeSchema& schema);

}  // namespace tock::server::history
