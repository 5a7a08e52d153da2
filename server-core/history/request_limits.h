// What a client may ask of the history service: field checks and size limits with
// Temporal's defaults and messages (service/frontend/errors.go, chasm/lib/workflow/validator.go,
// common/retrypolicy, common/searchattribute, common/util.go in temporalio/temporal).
//
// Every check runs before anything is written: a refused request changes nothing.
#pragma once

#include "server-core/visibility/search_attributes.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "temporal/api/common/v1/message.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::history {

struct Limits {
  size_t max_id_length = 1000;                   // ids, names, request ids (limit.maxIDLength)
  int64_t blob_size_warn = 512 * 1024;           // payloads, failures (limit.blobSize.warn)
  int64_t blob_size_error = 2 * 1024 * 1024;     // limit.blobSize.error
  int64_t memo_size_warn = 2 * 1024;             // limit.memoSize.warn
  int64_t memo_size_error = 2 * 1024 * 1024;     // limit.memoSize.error
  int64_t history_count_warn = 10240;            // limit.historyCount.warn
  int64_t history_count_error = 51200;           // limit.historyCount.error: the run is terminated
  int64_t history_size_warn = 10 * 1024 * 1024;  // limit.historySize.warn
  int64_t history_size_error = 50 * 1024 * 1024; // limit.historySize.error: terminated
  int32_t pending_activities = 2000;             // limit.numPendingActivities.error
  int32_t pending_children = 2000;               // limit.numPendingChildExecutions.error
  int32_t pending_signals = 2000;                // limit.numPendingSignals.error
  int32_t pending_cancel_requests = 2000;        // limit.numPendingCancelRequests.error
  int32_t search_attribute_keys = 100;           // limit.searchAttributesNumberOfKeys
  int64_t search_attribute_value_size = 2 * 1024;   // limit.searchAttributesSizeOfValue
  int64_t search_attribute_total_size = 40 * 1024;  // limit.searchAttributesTotalSize
  int32_t in_flight_updates = 10;                // history.maxInFlightUpdates
  int32_t total_updates = 2000;                  // history.maxTotalUpdates
};

// An id or name: set, at most max_id_length bytes, no NUL byte (which SQL stores and most
// tools cannot hold). `field` is the API's name for it ("WorkflowId").
absl::Status ValidateIdField(absl::string_view value, absl::string_view field, const Limits& limits);

// A google.protobuf.Duration a client sent: seconds and nanos of one sign, nanos within
// ±999,999,999, not negative. INVALID_ARGUMENT "<prefix> cause: <why>".
absl::Status ValidateDurationField(const google::protobuf::Duration& d, absl::string_view prefix);

// Temporal's retry policy rules (after its defaults: coefficient 0 means 2, intervals 0
// mean the defaults).
absl::Status ValidateRetryPolicy(const temporal::api::common::v1::RetryPolicy& policy);

// Search attributes a client sets: predefined or the namespace's custom ones (not the
// system ones), values of their types, within the count and size limits.
absl::Status ValidateSearchAttributes(const temporal::api::common::v1::SearchAttributes& attributes,
                                      const Limits& limits,
                                      const visibility::SearchAttributeSchema& schema);

// "Blob data size exceeds limit." when `size` is over the error limit.
absl::Status CheckBlobSize(int64_t size, const Limits& limits);

// Everything about a start request but its cron schedule and the id policies' outcome.
absl::Status ValidateStartRequest(const temporal::api::workflowservice::v1::StartWorkflowExecutionRequest& req,
                                  const Limits& limits,
                                  const visibility::SearchAttributeSchema& schema);

// A signal's name, input and header.
absl::Status ValidateSignalFields(absl::string_view name,
                                  const temporal::api::common::v1::Payloads& input,
                                  const temporal::api::common::v1::Header& header,
                                  const Limits& limits);

}  // namespace tock::server::history
