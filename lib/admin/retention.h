// The retention rule of seed 002 ("Retention Period"), shared by the server and the CLI so
// that both refuse the same values with the same message before anything is stored or sent.
#pragma once

#include <optional>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tock::admin {

inline constexpr absl::Duration kDefaultRetention = absl::Hours(24 * 2);
inline constexpr absl::Duration kMinRetention = absl::Hours(24);
inline constexpr absl::Duration kMaxRetention = absl::Hours(24 * 30);

// The exact prefix of every retention error (SPEC §1.1; tests and SDK helpers match it).
inline constexpr absl::string_view kInvalidRetentionMessage =
    "A valid retention period is not set on request.";

// OK when 1d <= retention <= 30d; otherwise INVALID_ARGUMENT starting with
// kInvalidRetentionMessage, followed by the allowed range and the value received.
absl::Status ValidateRetention(absl::Duration retention);

// The retention a request asks for: absent -> 2 days; present -> validated.
absl::StatusOr<absl::Duration> ResolveRetention(std::optional<absl::Duration> requested);

// Parses CLI text ("3d", "36h", "1d12h", or bare days "3") and validates it. A text that is
// not a duration at all is INVALID_ARGUMENT with the retention message too.
absl::StatusOr<absl::Duration> ParseRetention(absl::string_view text);

}  // namespace tock::admin
