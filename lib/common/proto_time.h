// Conversions between absl durations and google.protobuf.Duration.
#pragma once

#include <google/protobuf/duration.pb.h>

#include <algorithm>

#include "absl/time/time.h"

namespace tock {

// Durations are capped at 100 years, as Temporal caps them (timestamp.ValidateAndCapProtoDuration):
// a client's int64-max seconds must not overflow deadlines computed from it. Requests with
// negative or malformed durations are refused before this is used
// (server-core/history/request_limits.h).
inline constexpr absl::Duration kMaxProtoDuration = absl::Hours(100 * 365 * 24);

inline absl::Duration FromProtoDuration(const google::protobuf::Duration& d) {
  if (d.seconds() >= absl::ToInt64Seconds(kMaxProtoDuration)) return kMaxProtoDuration;
  return std::min(absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos()), kMaxProtoDuration);
}

inline google::protobuf::Duration ToProtoDuration(absl::Duration d) {
  google::protobuf::Duration out;
  int64_t nanos = absl::ToInt64Nanoseconds(d);
  out.set_seconds(nanos / 1'000'000'000);
  out.set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
  return out;
}

}  // namespace tock
