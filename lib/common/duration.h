// Human durations as operators type them: "3d", "36h", "90m", "1d12h", "45s", "250ms".
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tock {

// What a number without a unit means. Retention takes bare days ("3" is 3 days).
enum class BareNumberUnit { kNone, kDays, kSeconds };

// Parses a sequence of <integer><unit> parts with units d, h, m, s, ms (a leading '-' makes
// the whole value negative). Errors are INVALID_ARGUMENT naming the text and the format.
absl::StatusOr<absl::Duration> ParseHumanDuration(absl::string_view text,
                                             BareNumberUnit bare = BareNumberUnit::kNone);

// The shortest exact form using d, h, m, s, ms: 48h -> "2d", 36h -> "1d12h", 0 -> "0s".
// A sub-millisecond remainder is written with us and ns ("1ms500us"), which
// ParseHumanDuration does not read back; infinite durations are "inf" and "-inf".
std::string FormatHumanDuration(absl::Duration d);

}  // namespace tock
