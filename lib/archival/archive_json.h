// The proto3 JSON of archives, as Temporal's archivers write it (Go protojson defaults:
// lowerCamelCase names, enum names, 64-bit integers as strings, bytes in base64, RFC 3339
// timestamps, fields at their default left out) and the lenient parse they read with
// (unknown fields ignored).
//
// ArchiveJson walks the message with reflection and writes JSON directly: protobuf's own
// printer (3.21) serializes to binary and parses that again, three times slower on
// histories, and archiving is bound by it. Well-known types other than Timestamp and
// Duration (Any, Struct, wrappers) are rare in histories and go through protobuf's printer.
#pragma once

#include <string>
#include <string_view>

#include <google/protobuf/message.h>

#include "absl/status/status.h"

namespace tock::archival {

std::string ArchiveJson(const google::protobuf::Message& message);
void AppendArchiveJson(const google::protobuf::Message& message, std::string& out);

// DATA_LOSS naming `what` when `json` is not a valid encoding of the message.
absl::Status ParseArchiveJson(std::string_view json, google::protobuf::Message& message,
                              const std::string& what);

}  // namespace tock::archival
