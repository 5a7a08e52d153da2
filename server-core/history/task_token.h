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

// Temporal's errTaskTokenNamespaceMismatch (INVALID_ARGUMENT).
inline constexpr char kTokenNamespaceMismatch[] =
    "Operation requested with a token from a different namespace.";

// DecodeTaskToken, and INVALID_ARGUMENT kTokenNamespaceMismatch unless the token names
// `namespace_id`, the namespace the request named (and authorization checked). Tokens are
// not signed: without this, a caller allowed on namespace A could send a token it built for
// namespace B and act on B's runs. Every handler of a token decodes it with this, before
// anything is read or changed.
absl::StatusOr<TaskToken> DecodeTaskTokenFor(const std::string& bytes,
                                             const std::string& namespace_id);

TaskToken MakeWorkflowTaskToken(const tock::persistence::v1::MutableState& state);
TaskToken MakeActivityTaskToken(const tock::persistence::v1::MutableState& state,
                                const tock::persistence::v1::ActivityInfo& activity);

}  // namespace tock::server::history
