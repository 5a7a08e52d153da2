// The HTTP/JSON API's bodies (seed 003's api.yaml, reference/scaleout.md §3.2) as pure
// functions: a request body to the TimerService's request, a Timer to the seed's Timer JSON.
//
// Requests: a JSON object of at most kMaxTimerRequestBytes with the seed's fields:
//   create  namespace, id, executeAt (RFC 3339), callbackUrl, payload (any JSON),
//           retryPolicy {maxAttempts, maxAttemptsDuration ("1h"), initialInterval ("30s"),
//           backoffMultiplier, maxInterval ("5m")}, callbackTimeoutSeconds
//   update  namespace, timerId, and any of executeAt, callbackUrl, payload, retryPolicy,
//           callbackTimeoutSeconds (what is present replaces the stored value)
//   get, delete  namespace, timerId
//   list (Tock's)  namespace, state (PENDING ...), pageSize, nextPageToken
// INVALID_ARGUMENT naming the field: a body that is not a JSON object, a field of the wrong
// type or out of the range of its type, an unknown field (the seed's documents disagree on
// names such as maxRetries: a misspelt field is refused, not ignored). The values' limits
// are the TimerService's checks (timer_service.h), which name fields the same way.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "tock/timer/v1/service.pb.h"

namespace tock::server::timers {

// A payload of 100 KiB, escaped, and the other fields fit well within this.
inline constexpr size_t kMaxTimerRequestBytes = 512 * 1024;

absl::StatusOr<tock::timer::v1::CreateTimerRequest> CreateTimerFromJson(std::string_view body);
absl::StatusOr<tock::timer::v1::UpdateTimerRequest> UpdateTimerFromJson(std::string_view body);
absl::StatusOr<tock::timer::v1::GetTimerRequest> GetTimerFromJson(std::string_view body);
absl::StatusOr<tock::timer::v1::DeleteTimerRequest> DeleteTimerFromJson(std::string_view body);
absl::StatusOr<tock::timer::v1::ListTimersRequest> ListTimersFromJson(std::string_view body);

// The seed's Timer (id, namespace, executeAt, callbackUrl, payload, retryPolicy,
// callbackTimeoutSeconds, createdAt, updatedAt, executedAt) plus Tock's state, attempts,
// lastError and nextAttemptAt. Times RFC 3339 UTC; durations as "30s", "1h30m"; fields
// that are unset are left out.
nlohmann::ordered_json TimerToJson(const tock::timer::v1::Timer& timer);
// {"timers": [...], "nextPageToken": "..." (absent on the last page)}.
nlohmann::ordered_json TimerListToJson(const tock::timer::v1::ListTimersResponse& list);

}  // namespace tock::server::timers
