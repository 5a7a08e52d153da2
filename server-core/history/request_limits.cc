#include "server-core/history/request_limits.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/common/proto_time.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;

// A name quoted in a message: at most this many bytes of it.
constexpr size_t kQuotedNameLimit = 100;

std::string Quoted(absl::string_view name) {
  if (name.size() <= kQuotedNameLimit) return std::string(name);
  return absl::StrCat(name.substr(0, kQuotedNameLimit), "...");
}

absl::Status CheckEnum(int value, bool (*is_valid)(int), absl::string_view field) {
  if (is_valid(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("Invalid ", field, ": ", value, " is not a known value."));
}

}  // namespace

absl::Status ValidateIdField(absl::string_view value, absl::string_view field, const Limits& limits) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " is not set on request."));
  if (value.size() > limits.max_id_length) {
    return absl::InvalidArgumentError(absl::StrCat(field, " exceeds length limit (",
                                                   limits.max_id_length, " bytes)."));
  }
  if (value.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must not contain a NUL byte."));
  }
  return absl::OkStatus();
}

absl::Status ValidateDurationField(const google::protobuf::Duration& d, absl::string_view prefix) {
  if ((d.seconds() > 0 && d.nanos() < 0) || (d.seconds() < 0 && d.nanos() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, " cause: duration has seconds and nanos with different signs"));
  }
  if (d.nanos() > 999'999'999 || d.nanos() < -999'999'999) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, " cause: duration nanos out of range (at most 999999999)"));
  }
  if (d.seconds() < 0 || d.nanos() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, " cause: negative duration"));
  }
  return absl::OkStatus();
}

absl::Status ValidateRetryPolicy(const temporal::api::common::v1::RetryPolicy& policy) {
  if (policy.maximum_attempts() == 1) return absl::OkStatus();  // no retries: nothing else matters
  if (absl::Status s = ValidateDurationField(policy.initial_interval(),
                                             "invalid InitialInterval set on retry policy:");
      !s.ok()) {
    return s;
  }
  // 0 means the default (2.0), as Temporal's EnsureDefaults makes it.
  if (policy.backoff_coefficient() != 0 && policy.backoff_coefficient() < 1) {
    return absl::InvalidArgumentError("BackoffCoefficient cannot be less than 1 on retry policy.");
  }
  if (absl::Status s = ValidateDurationField(policy.maximum_interval(),
                                             "invalid MaximumInterval set on retry policy:");
      !s.ok()) {
    return s;
  }
  const absl::Duration initial = FromProtoDuration(policy.initial_interval());
  const absl::Duration maximum = FromProtoDuration(policy.maximum_interval());
  if (maximum > absl::ZeroDuration() && initial > absl::ZeroDuration() && maximum < initial) {
    return absl::InvalidArgumentError(
        "MaximumInterval cannot be less than InitialInterval on retry policy.");
  }
  if (policy.maximum_attempts() < 0) {
    return absl::InvalidArgumentError("MaximumAttempts cannot be negative on retry policy.");
  }
  return absl::OkStatus();
}

absl::Status ValidateSearchAttributes(const temporal::api::common::v1::SearchAttributes& attributes,
                                      const Limits& limits,
                                      const visibility::SearchAttributeSchema& schema) {
  const auto& fields = attributes.indexed_fields();
  if (fields.empty()) return absl::OkStatus();
  if (static_cast<int64_t>(fields.size()) > limits.search_attribute_keys) {
    return absl::InvalidArgumentError(absl::StrCat("number of search attributes ", fields.size(),
                                                   " exceeds limit ", limits.search_attribute_keys));
  }
  for (const auto& [name, value] : fields) {
    if (static_cast<int64_t>(value.data().size()) > limits.search_attribute_value_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "search attribute ", Quoted(name), " value size ", value.data().size(),
          " exceeds size limit ", limits.search_attribute_value_size));
    }
  }
  if (absl::Status s = visibility::CheckSearchAttributes(attributes, schema); !s.ok()) return s;
  const int64_t total = static_cast<int64_t>(attributes.ByteSizeLong());
  if (total > limits.search_attribute_total_size) {
    return absl::InvalidArgumentError(absl::StrCat("total size of search attributes ", total,
                                                   " exceeds size limit ",
                                                   limits.search_attribute_total_size));
  }
  return absl::OkStatus();
}

absl::Status CheckBlobSize(int64_t size, const Limits& limits) {
  if (size > limits.blob_size_error) {
    return absl::InvalidArgumentError("Blob data size exceeds limit.");
  }
  return absl::OkStatus();
}

absl::Status ValidateStartRequest(
    const temporal::api::workflowservice::v1::StartWorkflowExecutionRequest& req,
    const Limits& limits, const visibility::SearchAttributeSchema& schema) {
  if (absl::Status s = ValidateIdField(req.workflow_id(), "WorkflowId", limits); !s.ok()) return s;
  if (absl::Status s = ValidateIdField(req.workflow_type().name(), "WorkflowType", limits); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateIdField(req.task_queue().name(), "TaskQueue", limits); !s.ok()) return s;
  if (req.request_id().size() > limits.max_id_length) {
    return absl::InvalidArgumentError("RequestId length exceeds limit.");
  }
  if (req.identity().size() > limits.max_id_length) {
    return absl::InvalidArgumentError("Identity length exceeds limit.");
  }
  if (absl::Status s = ValidateDurationField(
          req.workflow_execution_timeout(),
          "An invalid WorkflowExecutionTimeoutSeconds is set on request.");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateDurationField(req.workflow_run_timeout(),
                                             "An invalid WorkflowRunTimeoutSeconds is set on request.");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateDurationField(
          req.workflow_task_timeout(), "An invalid WorkflowTaskTimeoutSeconds is set on request.");
      !s.ok()) {
    return s;
  }
  if (FromProtoDuration(req.workflow_start_delay()) > absl::ZeroDuration() &&
      !req.cron_schedule().empty()) {
    return absl::InvalidArgumentError("CronSchedule and WorkflowStartDelay may not be used together.");
  }
  if (absl::Status s = ValidateDurationField(
          req.workflow_start_delay(), "An invalid WorkflowStartDelaySeconds is set on request.");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckEnum(
          req.workflow_id_reuse_policy(), &enums::WorkflowIdReusePolicy_IsValid,
          "WorkflowIdReusePolicy");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckEnum(
          req.workflow_id_conflict_policy(), &enums::WorkflowIdConflictPolicy_IsValid,
          "WorkflowIdConflictPolicy");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckEnum(
          req.task_queue().kind(), &enums::TaskQueueKind_IsValid, "TaskQueueKind");
      !s.ok()) {
    return s;
  }
  if (req.workflow_id_conflict_policy() != enums::WORKFLOW_ID_CONFLICT_POLICY_UNSPECIFIED &&
      req.workflow_id_reuse_policy() == enums::WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING) {
    return absl::InvalidArgumentError(
        "Invalid WorkflowIDReusePolicy: WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING cannot be "
        "used together with a WorkflowIDConflictPolicy");
  }
  if (req.workflow_id_conflict_policy() == enums::WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING &&
      req.workflow_id_reuse_policy() == enums::WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE) {
    return absl::InvalidArgumentError(
        "Invalid WorkflowIDReusePolicy: WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE cannot be used "
        "together with WorkflowIdConflictPolicy WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING");
  }
  if (req.has_retry_policy()) {
    if (absl::Status s = ValidateRetryPolicy(req.retry_policy()); !s.ok()) return s;
  }
  if (absl::Status s = ValidateSearchAttributes(req.search_attributes(), limits, schema); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckBlobSize(static_cast<int64_t>(req.input().ByteSizeLong()) +
                                         static_cast<int64_t>(req.header().ByteSizeLong()),
                                     limits);
      !s.ok()) {
    return s;
  }
  if (static_cast<int64_t>(req.memo().ByteSizeLong()) > limits.memo_size_error) {
    return absl::InvalidArgumentError("Memo size exceeds limit.");
  }
  return absl::OkStatus();
}

absl::Status ValidateSignalFields(absl::string_view name,
                                  const temporal::api::common::v1::Payloads& input,
                                  const temporal::api::common::v1::Header& header,
                                  const Limits& limits) {
  if (name.empty()) return absl::InvalidArgumentError("SignalName is not set on request.");
  if (name.size() > limits.max_id_length) {
    return absl::InvalidArgumentError("SignalName length exceeds limit.");
  }
  return CheckBlobSize(static_cast<int64_t>(input.ByteSizeLong()) +
                           static_cast<int64_t>(header.ByteSizeLong()),
                       limits);
}

}  // namespace tock::server::history
