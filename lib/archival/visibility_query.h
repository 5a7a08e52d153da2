// The query languages of archived visibility (SPEC §3), one per archive layout, as
// Temporal's archivers define them so the same queries work against either:
//   file: WorkflowId, RunId, WorkflowType, ExecutionStatus with "=", CloseTime with
//         = < <= > >= (an RFC 3339 string or unix nanoseconds); AND and parentheses only.
//   s3:   WorkflowId or WorkflowType (one is required), StartTime or CloseTime with a
//         SearchPrecision of Day, Hour, Minute or Second; "=" and AND only.
// Errors are INVALID_ARGUMENT with Temporal's messages ("unknown filter name: X", ...).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tock::archival {

struct FileVisibilityQuery {
  std::optional<std::string> workflow_id;
  std::optional<std::string> run_id;
  std::optional<std::string> workflow_type;
  std::optional<int> status;  // temporal.api.enums.v1.WorkflowExecutionStatus
  absl::Time earliest_close = absl::InfinitePast();  // inclusive
  absl::Time latest_close = absl::InfiniteFuture();  // inclusive
  bool matches_nothing = false;  // contradictory equalities
};

// An empty query matches every record that closed by `now`.
absl::StatusOr<FileVisibilityQuery> ParseFileVisibilityQuery(std::string_view query,
                                                             absl::Time now);

struct S3VisibilityQuery {
  std::optional<std::string> workflow_id;
  std::optional<std::string> workflow_type;
  std::optional<absl::Time> start_time;
  std::optional<absl::Time> close_time;
  std::string precision;  // Day, Hour, Minute or Second; "" without a time
  bool empty = false;     // no filter at all: every closed record
};

absl::StatusOr<S3VisibilityQuery> ParseS3VisibilityQuery(std::string_view query);

}  // namespace tock::archival
