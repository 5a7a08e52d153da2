// Task tokens: opaque to workers, they name the run, the task and its attempt, so that a
// stale or forged token is refused with NOT_FOUND instead of touching the wrong task.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "tock/persistence/v1/execution.pb.h"

namespace tock::server::history {

using TaskToken = tock::persistence::v1::TaskToken;

std::string EncodeTaskToken(const TaskToken& token);
// INVALID_ARGUMENT when the bytes are not a token this server issued.
absl::StatusOr<TaskToken> DecodeTaskToken(const std::string& bytes);

TaskToken MakeWorkflowTaskToken(const tock::persistence::v1::MutableState& state);
TaskToken MakeActivityTaskToken(const tock::persistence::v1::MutableState& state,
                                const tock::persistence::v1::ActivityInfo& activity);

}  // namespace tock::server::history
