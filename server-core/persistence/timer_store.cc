#include "server-core/persistence/timer_store.h"

#include <cstdint>
#include <limits>

namespace tock::persistence {

int64_t TimerDueMillis(absl::Time due) {
  if (due == absl::InfiniteFuture()) return std::numeric_limits<int64_t>::max();
  if (due == absl::InfinitePast()) return std::numeric_limits<int64_t>::min();
  // Rounded up: a timer due at 10.0004 s is loaded at 10.001 s, never at 10.000 s.
  return absl::ToUnixMillis(due) + (due > absl::FromUnixMillis(absl::ToUnixMillis(due)) ? 1 : 0);
}

absl::Time TimerDueFromMillis(int64_t ms) {
  if (ms == std::numeric_limits<int64_t>::max()) return absl::InfiniteFuture();
  if (ms == std::numeric_limits<int64_t>::min()) return absl::InfinitePast();
  return absl::FromUnixMillis(ms);
}

}  // namespace tock::persistence
