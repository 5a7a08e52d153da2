// The limits a workflow task's commands must keep (Temporal's workflowSizeChecker): pending
// activities, children, signals and cancel requests to other workflows, and the size of
// every payload a command carries. Checked before any command is applied, so a task that
// breaks one changes nothing but its own failure.
#include "server-core/history/command_limits.h"

#include "absl/strings/str_cat.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::command::v1::Command;

int64_t Size(const google::protobuf::Message& m) { return static_cast<int64_t>(m.ByteSizeLong()); }

CommandLimitBreach CountBreach(enums::WorkflowTaskFailedCause cause, absl::string_view what,
                               int64_t pending, int64_t limit) {
  return {cause,
          absl::StrCat("the number of ", what, ", ", pending, ", has reached the per-workflow limit of ",
                       limit),
          /*terminate=*/false};
}

}  // namespace

bool CommandsSetSearchAttributes(
    const google::protobuf::RepeatedPtrField<temporal::api::command::v1::Command>& commands) {
  for (const Command& c : commands) {
    const bool sets =
        (c.has_upsert_workflow_search_attributes_command_attributes() &&
         !c.upsert_workflow_search_attributes_command_attributes().search_attributes()
              .indexed_fields().empty()) ||
        (c.has_continue_as_new_workflow_execution_command_attributes() &&
         !c.continue_as_new_workflow_execution_command_attributes().search_attributes()
              .indexed_fields().empty()) ||
        (c.has_start_child_workflow_execution_command_attributes() &&
         !c.start_child_workflow_execution_command_attributes().search_attributes()
              .indexed_fields().empty());
    if (sets) return true;
  }
  return false;
}

std::optional<CommandLimitBreach> CheckCommandLimits(
    const MutableStateRecord& state, const google::protobuf::RepeatedPtrField<Command>& commands,
    const Limits& limits, const visibility::SearchAttributeSchema& schema) {
  int64_t activities = state.activities_size();
  int64_t children = state.children_size();
  int64_t signals = 0, cancels = 0;
  for (const auto& [id, request] : state.external_requests()) {
    ++(request.is_cancel() ? cancels : signals);
  }
  auto too_big = [&](int64_t size, enums::WorkflowTaskFailedCause cause,
                     const char* message) -> std::optional<CommandLimitBreach> {
    if (size <= limits.blob_size_error) return std::nullopt;
    return CommandLimitBreach{cause, message, /*terminate=*/true};
  };
  auto bad_attributes = [&](const temporal::api::common::v1::SearchAttributes& attributes)
      -> std::optional<CommandLimitBreach> {
    if (attributes.indexed_fields().empty()) return std::nullopt;
    absl::Status s = ValidateSearchAttributes(attributes, limits, schema);
    if (s.ok()) return std::nullopt;
    return CommandLimitBreach{enums::WORKFLOW_TASK_FAILED_CAUSE_BAD_SEARCH_ATTRIBUTES,
                              std::string(s.message())};
  };
  for (const Command& c : commands) {
    std::optional<CommandLimitBreach> breach;
    switch (c.command_type()) {
      case enums::COMMAND_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
        breach = bad_attributes(
            c.upsert_workflow_search_attributes_command_attributes().search_attributes());
        break;
      case enums::COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK:
        breach = too_big(Size(c.schedule_activity_task_command_attributes().input()),
                         enums::WORKFLOW_TASK_FAILED_CAUSE_BAD_SCHEDULE_ACTIVITY_ATTRIBUTES,
                         "ScheduleActivityTaskCommandAttributes.Input exceeds size limit.");
        if (!breach && activities >= limits.pending_activities) {
          breach = CountBreach(enums::WORKFLOW_TASK_FAILED_CAUSE_PENDING_ACTIVITIES_LIMIT_EXCEEDED,
                               "pending activities", activities, limits.pending_activities);
        }
        ++activities;
        break;
      case enums::COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION:
        breach = too_big(Size(c.complete_workflow_execution_command_attributes().result()),
                         enums::WORKFLOW_TASK_FAILED_CAUSE_BAD_COMPLETE_WORKFLOW_EXECUTION_ATTRIBUTES,
                         "CompleteWorkflowExecutionCommandAttributes.Result exceeds size limit.");
        break;
      case enums::COMMAND_TYPE_FAIL_WORKFLOW_EXECUTION:
        breach = too_big(Size(c.fail_workflow_execution_command_attributes().failure()),
                         enums::WORKFLOW_TASK_FAILED_CAUSE_BAD_FAIL_WORKFLOW_EXECUTION_ATTRIBUTES,
                         "FailWorkflowExecutionCommandAttributes.Failure exceeds size limit.");
        break;
      case enums::COMMAND_TYPE_RECORD_MARKER:
        breach = too_big(Size(c.record_marker_command_attributes()),
                         enums::WORKFLOW_TASK_FAILED_CAUSE_BAD_RECORD_MARKER_ATTRIBUTES,
                         "RecordMarkerCommandAttributes.Details exceeds size limit.");
        break;
      case enums::COMMAND_TYPE_CONTINUE_AS_NEW_WORKFLOW_EXECUTION: {
        const auto& a = c.continue_as_new_workflow_execution_command_attributes();
        breach = too_big(Size(a.input()), enums::WORKFLOW_TASK_FAILED_CAUSE_BAD_CONTINUE_AS_NEW_ATTRIBUTES,
                         "ContinueAsNewWorkflowExecutionCommandAttributes. Input exceeds size limit.");
        if (!breach && Size(a.memo()) > limits.memo_size_error) {
          breach = CommandLimitBreach{
              enums::WORKFLOW_TASK_FAILED_CAUSE_BAD_CONTINUE_AS_NEW_ATTRIBUTES,
              "ContinueAsNewWorkflowExecutionCommandAttributes. Memo exceeds size limit.", true};
        }
        if (!breach) breach = bad_attributes(a.search_attributes());
        break;
      }
      case enums::COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION: {
        const auto& a = c.start_child_workflow_execution_command_attributes();
        breach = too_big(Size(a.input()),
                         enums::WORKFLOW_TASK_FAILED_CAUSE_BAD_START_CHILD_EXECUTION_ATTRIBUTES,
                         "StartChildWorkflowExecutionCommandAttributes. Input exceeds size limit.");
        if (!breach && Size(a.memo()) > limits.memo_size_error) {
          breach = CommandLimitBreach{
              enums::WORKFLOW_TASK_FAILED_CAUSE_BAD_START_CHILD_EXECUTION_ATTRIBUTES,
              "StartChildWorkflowExecutionCommandAttributes.Memo exceeds size limit.", true};
        }
        if (!breach) breach = bad_attributes(a.search_attributes());
        if (!breach && children >= limits.pending_children) {
          breach = CountBreach(enums::WORKFLOW_TASK_FAILED_CAUSE_PENDING_CHILD_WORKFLOWS_LIMIT_EXCEEDED,
                               "pending child workflow executions", children,
                               limits.pending_children);
        }
        ++children;
        break;
      }
      case enums::COMMAND_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION:
        breach = too_big(Size(c.signal_external_workflow_execution_command_attributes().input()),
                         enums::WORKFLOW_TASK_FAILED_CAUSE_BAD_SIGNAL_WORKFLOW_EXECUTION_ATTRIBUTES,
                         "SignalExternalWorkflowExecutionCommandAttributes.Input exceeds size limit.");
        if (!breach && signals >= limits.pending_signals) {
          breach = CountBreach(enums::WORKFLOW_TASK_FAILED_CAUSE_PENDING_SIGNALS_LIMIT_EXCEEDED,
                               "pending signals to external workflows", signals,
                               limits.pending_signals);
        }
        ++signals;
        break;
      case enums::COMMAND_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION:
        if (cancels >= limits.pending_cancel_requests) {
          breach = CountBreach(enums::WORKFLOW_TASK_FAILED_CAUSE_PENDING_REQUEST_CANCEL_LIMIT_EXCEEDED,
                               "pending requests to cancel external workflows", cancels,
                               limits.pending_cancel_requests);
        }
        ++cancels;
        break;
      default:
        break;
    }
    if (breach) return breach;
  }
  return std::nullopt;
}

}  // namespace tock::server::history
