// The pure half of `tock batch`: flags to a StartBatchOperationRequest, and batch operations
// as an operator reads them (labels, the describe card, the progress line). No server call,
// no printing; tested without a server (tests/cli/batch_request_test.cc).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cmd/tock/output/printer.h"
#include "temporal/api/batch/v1/message.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::cli {

// The operation a `tock batch <kind>` command starts.
enum class BatchKind { kTerminate, kCancel, kSignal, kDelete };

// "terminate", "cancel", "signal", "delete": the command's name.
const char* BatchKindName(BatchKind kind);

// The flags of `tock batch terminate|cancel|signal|delete`.
struct BatchStartFlags {
  std::string query;
  std::string reason;
  std::string rps;                  // empty: the server's limit
  std::string job_id;               // empty: a new UUID
  std::string signal_name;          // signal only
  std::vector<std::string> inputs;  // signal only: one JSON value per signal argument
  bool yes = false;
  bool no_wait = false;
};

// --rps: a positive, finite number of operations per second; 0 when `text` is empty (the
// server's limit). INVALID_ARGUMENT naming the flag otherwise.
absl::StatusOr<float> ParseRps(const std::string& text);

// The StartBatchOperationRequest of `kind` with `flags` in `namespace_name`: visibility
// query, reason, job id (a new UUID when flags.job_id is empty), max operations per second,
// and the operation with `identity` (signal: its name and inputs as json/plain payloads).
// INVALID_ARGUMENT for an empty --query or --reason, a bad --rps, or an --input that is not
// JSON; checked before anything is sent.
absl::StatusOr<temporal::api::workflowservice::v1::StartBatchOperationRequest>
MakeStartBatchRequest(BatchKind kind, const BatchStartFlags& flags,
                      const std::string& namespace_name, const std::string& identity);

// "Terminate" for BATCH_OPERATION_TYPE_TERMINATE and BATCH_OPERATION_TYPE_TERMINATE_WORKFLOW
// alike; "Update Activity Options" etc. for the others.
std::string BatchTypeLabel(temporal::api::enums::v1::BatchOperationType type);

// "Running", "Completed", "Failed".
std::string BatchStateLabel(temporal::api::enums::v1::BatchOperationState state);

// COMPLETED or FAILED: the batch does nothing more.
bool BatchFinished(temporal::api::enums::v1::BatchOperationState state);

// The card of `batch describe` and of the summary after a batch: job id, type, state,
// reason, query, identity, counts and times.
CardRows BatchCard(const temporal::api::workflowservice::v1::DescribeBatchOperationResponse& d);

// The columns and a row of `batch list`: JOB ID, STATE, START, CLOSE.
std::vector<std::string> BatchColumns();
std::vector<std::string> BatchRow(const temporal::api::batch::v1::BatchOperationInfo& info);

// One line of progress, without line end, `width` characters of bar:
// "[##########..........]  5/10 done, 1 failed" (done counts failures too), or
// "[....................]  0/? done, 0 failed" while the server has not counted yet.
std::string BatchProgressLine(
    const temporal::api::workflowservice::v1::DescribeBatchOperationResponse& d, int width = 30);

}  // namespace tock::cli
