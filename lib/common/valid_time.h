// Valid-time versioning of namespace metadata (seed 004, SPEC §1.3).
#pragma once

#include "absl/time/time.h"

namespace tock {

// The valid_from of the version that follows one starting at `previous_valid_from`, written
// at `now`: now truncated to milliseconds, but strictly later than the previous version, so a
// second change within the same millisecond gets previous + 1 ms. Versions never overlap and
// never share a start even when the wall clock steps back.
absl::Time NextValidFrom(absl::Time previous_valid_from, absl::Time now);

// `t` truncated to whole milliseconds (the resolution versions are stored with).
absl::Time TruncateToMillis(absl::Time t);

}  // namespace tock
