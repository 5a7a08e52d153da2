// Timestamps as operators read and type them (RFC 3339, UTC).
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include <google/protobuf/timestamp.pb.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tock {

// "2026-11-22T10:15:30.123Z" (milliseconds only when non-zero).
std::string FormatTimestamp(absl::Time t);

// Accepts RFC 3339 ("2026-11-22T10:15:30Z", with fraction or offset), a date
// ("2026-11-22", midnight UTC), or "now". INVALID_ARGUMENT otherwise, naming the formats.
absl::StatusOr<absl::Time> ParseTimestamp(absl::string_view text, absl::Time now);

absl::Time FromProtoTime(const google::protobuf::Timestamp& ts);
google::protobuf::Timestamp ToProtoTime(absl::Time t);

}  // namespace tock
