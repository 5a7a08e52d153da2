#include "lib/common/valid_time.h"

#include <algorithm>

namespace tock {

absl::Time TruncateToMillis(absl::Time t) { return absl::FromUnixMillis(absl::ToUnixMillis(t)); }

absl::Time NextValidFrom(absl::Time previous_valid_from, absl::Time now) {
  return std::max(TruncateToMillis(now), TruncateToMillis(previous_valid_from) + absl::Milliseconds(1));
}

}  // namespace tock
