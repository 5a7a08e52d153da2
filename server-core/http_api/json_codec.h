// Temporal's JSON for its HTTP API: proto3 canonical JSON (lowerCamelCase names, 64-bit
// integers as strings, enum names, RFC 3339 times, base64 bytes, defaults omitted; input
// takes proto names too) and, on by default, Temporal's payload shorthand:
//
//   Payloads  <-> a JSON array of the payloads' values, when every payload has a short form
//                 (else the whole list stays in the proto form);
//   Payload   <-> its value: `json/plain` (the only metadata key) as the JSON it holds,
//                 `binary/null` as null, `json/protobuf` (with `messageType`, nothing else) as
//                 the object with "_protoMessageType" added; any other payload stays in the
//                 proto form {"metadata": {"encoding": base64}, "data": base64}.
//   On input, an object that parses strictly as a proto-form payload is taken as one;
//   anything else is a value (json/plain), an object with "_protoMessageType" a
//   json/protobuf payload, null binary/null.
//
// The shorthand applies wherever a Payload or Payloads field sits, also as the values of a
// map (memo, search attributes, headers). Bounded: JSON nested deeper than kMaxJsonDepth is
// refused, and no walk recurses deeper than that.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace tock::server::http_api {

inline constexpr int kMaxJsonDepth = 100;

struct JsonOptions {
  bool payload_shorthand = true;
  bool pretty = false;  // indented by two spaces
};

// `message` as Temporal's JSON.
absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message,
                                   const JsonOptions& options);

// Merges the JSON object `body` into `message`. INVALID_ARGUMENT naming what is wrong (an
// unknown field, a value of the wrong type, JSON that does not parse or nests too deep),
// without echoing more than a short piece of the body.
absl::Status FromJson(std::string_view body, google::protobuf::Message* message,
                      bool payload_shorthand);

// Sets the field at `path` (dotted; each part a proto or JSON name: "execution.runId") from
// the text of a path variable or query parameter: strings as they are, numbers and bools
// parsed, enums by name or number, bytes from base64 (standard or URL-safe, padded or not),
// Timestamp and Duration in their JSON forms. A repeated field takes every value; a
// singular one the last. NOT_FOUND when the path names no field; INVALID_ARGUMENT when a
// value does not parse.
absl::Status SetFromText(google::protobuf::Message* message, const std::string& path,
                         const std::vector<std::string>& values);

}  // namespace tock::server::http_api
