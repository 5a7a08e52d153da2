#include "lib/common/time_format.h"

#include "absl/strings/str_cat.h"

namespace tock {

std::string FormatTimestamp(absl::Time t) {
  const char* format = absl::ToUnixMillis(t) % 1000 == 0 ? "%Y-%m-%dT%H:%M:%SZ"
                                                          : "%Y-%m-%dT%H:%M:%E3SZ";
  return absl::FormatTime(format, t, absl::UTCTimeZone());
}

absl::StatusOr<absl::Time> ParseTimestamp(absl::string_view text, absl::Time now) {
  if (text == "now") return now;
  absl::Time t;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, std::string(text), &t, &err)) return t;
  if (absl::ParseTime("%Y-%m-%d", std::string(text), absl::UTCTimeZone(), &t, &err)) return t;
  return absl::InvalidArgumentError(
      absl::StrCat("invalid time \"", text,
                   "\": use RFC 3339 (2026-11-22T10:15:30Z), a date (2026-11-22) or now"));
}

absl::Time FromProtoTime(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

google::protobuf::Timestamp ToProtoTime(absl::Time t) {
  google::protobuf::Timestamp ts;
  int64_t nanos = absl::ToUnixNanos(t);
  int64_t seconds = nanos / 1'000'000'000;
  int64_t rem = nanos % 1'000'000'000;
  if (rem < 0) {
    rem += 1'000'000'000;
    --seconds;
  }
  ts.set_seconds(seconds);
  ts.set_nanos(static_cast<int32_t>(rem));
  return ts;
}

}  // namespace tock
