// Activity retries by their retry policy (Temporal's rules): non-retryable failures and
// error types, maximum attempts (0 = unlimited), exponential backoff capped at the maximum
// interval, and no retry that would start after the schedule-to-close deadline.
#pragma once

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "temporal/api/enums/v1/workflow.pb.h"
#include "temporal/api/failure/v1/message.pb.h"
#include "tock/persistence/v1/execution.pb.h"

namespace tock::server::history {

// The backoff before the next attempt, or FAILED_PRECONDITION when no retry is allowed;
// `retry_state` says why (for the ActivityTaskFailed/TimedOut event).
absl::StatusOr<absl::Duration> NextActivityRetry(const tock::persistence::v1::ActivityInfo& activity,
                                                 const temporal::api::failure::v1::Failure& failure,
                                                 absl::Time now,
                                                 temporal::api::enums::v1::RetryState* retry_state);

}  // namespace tock::server::history
