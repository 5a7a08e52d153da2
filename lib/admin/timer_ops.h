// The durable timer service of tock-server (tock.timer.v1.TimerService, issue 14): building
// requests from what an operator types (pure, testable without a server) and the calls.
// Never prints; errors are absl::Status with the server's message verbatim.
// Thread safety: as the Connection.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/client/connection.h"
#include "tock/timer/v1/service.pb.h"

namespace tock::admin {

// The flags of `tock timer create|update` as typed. Unset optionals are not sent (update:
// left as stored; create: the server's defaults).
struct TimerFlags {
  std::string id;
  std::string at;  // --at: RFC 3339, a date or "now"
  std::string in;  // --in: a duration from now ("90s", "1h30m", "2d")
  std::optional<std::string> callback_url;
  std::optional<std::string> payload_json;  // --payload, or the text of --payload-file
  std::optional<int32_t> max_attempts;
  std::optional<std::string> max_attempts_duration;  // durations as typed ("1h")
  std::optional<std::string> initial_interval;
  std::optional<double> backoff_multiplier;
  std::optional<std::string> max_interval;
  std::optional<std::string> callback_timeout;  // "10s": whole seconds, 1s..60s
};

// INVALID_ARGUMENT naming the flag: --at and --in together, neither on create, a time or
// duration that does not parse, a callback timeout that is not whole seconds, a payload that
// is not JSON. The server checks the values' limits (and names the fields).
absl::StatusOr<tock::timer::v1::CreateTimerRequest> MakeCreateTimerRequest(
    const std::string& namespace_name, const TimerFlags& flags, absl::Time now);
// As create, but nothing is required besides the id, and only what is given changes.
absl::StatusOr<tock::timer::v1::UpdateTimerRequest> MakeUpdateTimerRequest(
    const std::string& namespace_name, const TimerFlags& flags, absl::Time now);

// "PENDING", "pending", "TIMER_STATE_PENDING" -> the state; "" -> UNSPECIFIED (every state).
absl::StatusOr<tock::timer::v1::TimerState> ParseTimerState(const std::string& text);
// TIMER_STATE_PENDING -> "Pending".
std::string TimerStateLabel(tock::timer::v1::TimerState state);

absl::StatusOr<tock::timer::v1::CreateTimerResponse> CreateTimer(
    client::Connection& connection, const tock::timer::v1::CreateTimerRequest& request);
absl::StatusOr<tock::timer::v1::Timer> GetTimer(client::Connection& connection,
                                                const std::string& namespace_name,
                                                const std::string& id);
absl::StatusOr<tock::timer::v1::Timer> UpdateTimer(
    client::Connection& connection, const tock::timer::v1::UpdateTimerRequest& request);
absl::StatusOr<tock::timer::v1::Timer> DeleteTimer(client::Connection& connection,
                                                   const std::string& namespace_name,
                                                   const std::string& id);

// Calls `each` for the namespace's timers (by id; only `state` unless UNSPECIFIED), page by
// page, at most `limit` (0: all); stops at the first error of `each`.
inline constexpr int32_t kTimerPageSize = 100;
absl::Status ListTimers(client::Connection& connection, const std::string& namespace_name,
                        tock::timer::v1::TimerState state,
                        const std::function<absl::Status(const tock::timer::v1::Timer&)>& each,
                        int64_t limit = 0, int32_t page_size = kTimerPageSize);

}  // namespace tock::admin
