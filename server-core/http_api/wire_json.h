// Temporal's JSON written straight from a message's wire bytes, without parsing the message:
// the HTTP API's answers come from the in-process gRPC call as bytes, and a history page of
// 1,000 events parsed into messages and then walked by reflection cost more than the rest of
// the call. The transcoder reads the bytes once with a table per message type (built once
// from the descriptors: each field's JSON key, wire type and, for messages, the table of its
// type) and writes the same JSON as ToJson (json_codec.h), payload shorthand included.
//
// It relies on what protobuf's C++ serializer guarantees: fields in field-number order, a
// repeated field's elements together. Bytes that break that (or a well-known type other
// than Timestamp and Duration, rare in Temporal's messages) are left to ToJson on the parsed
// message, so the answer is always right; the tables only make it fast.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "google/protobuf/descriptor.h"
#include "server-core/http_api/json_codec.h"

namespace tock::server::http_api {

// The message of type `type` serialized in `bytes`, as Temporal's JSON. INTERNAL when the
// bytes are not a message of that type.
absl::StatusOr<std::string> WireToJson(const google::protobuf::Descriptor* type,
                                       std::string_view bytes, const JsonOptions& options);

// The transcoder alone (compact output): nullopt where WireToJson leaves the bytes to ToJson.
std::optional<std::string> TranscodeWire(const google::protobuf::Descriptor* type,
                                         std::string_view bytes, bool payload_shorthand);

}  // namespace tock::server::http_api
