// Conversions between absl durations and google.protobuf.Duration.
#pragma once

#include <google/protobuf/duration.pb.h>

#include "absl/time/time.h"

namespace tock {

inline absl::Duration FromProtoDuration(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

inline google::protobuf::Duration ToProtoDuration(absl::Duration d) {
  google::protobuf::Duration out;
  int64_t nanos = absl::ToInt64Nanoseconds(d);
  out.set_seconds(nanos / 1'000'000'000);
  out.set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
  return out;
}

}  // namespace tock
