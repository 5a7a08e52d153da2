#include "server-core/history/task_token.h"

namespace tock::server::history {
namespace {
// A leading version byte lets the format change without misreading old tokens.
constexpr char kVersion = '\x01';
}  // namespace

std::string EncodeTaskToken(const TaskToken& token) {
  return std::string(1, kVersion) + token.SerializeAsString();
}

absl::StatusOr<TaskToken> DecodeTaskToken(const std::string& bytes) {
  TaskToken token;
  if (bytes.empty() || bytes[0] != kVersion || !token.ParseFromString(bytes.substr(1)) ||
      token.run_id().empty()) {
    return absl::InvalidArgumentError("the task token is not one this server issued");
  }
  return token;
}

absl::StatusOr<TaskToken> DecodeTaskTokenFor(const std::string& bytes,
                                             const std::string& namespace_id) {
  absl::StatusOr<TaskToken> token = DecodeTaskToken(bytes);
  if (token.ok() && token->namespace_id() != namespace_id) {
    return absl::InvalidArgumentError(kTokenNamespaceMismatch);
  }
  return token;
}

TaskToken MakeWorkflowTaskToken(const tock::persistence::v1::MutableState& state) {
  TaskToken t;
  t.set_namespace_id(state.execution().namespace_id());
  t.set_workflow_id(state.execution().workflow_id());
  t.set_run_id(state.execution().run_id());
  t.set_scheduled_event_id(state.workflow_task().scheduled_event_id());
  t.set_attempt(state.workflow_task().attempt());
  return t;
}

TaskToken MakeActivityTaskToken(const tock::persistence::v1::MutableState& state,
                                const tock::persistence::v1::ActivityInfo& activity) {
  TaskToken t;
  t.set_namespace_id(state.execution().namespace_id());
  t.set_workflow_id(state.execution().workflow_id());
  t.set_run_id(state.execution().run_id());
  t.set_scheduled_event_id(activity.scheduled_event_id());
  t.set_attempt(activity.attempt());
  t.set_stamp(activity.stamp());
  t.set_is_activity(true);
  return t;
}

}  // namespace tock::server::history
