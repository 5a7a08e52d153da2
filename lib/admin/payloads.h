// Temporal payloads as operators read and type them: JSON and text shown decoded, not as
// base64 (DESIGN.md "CLI contract").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "temporal/api/common/v1/message.pb.h"

namespace tock::admin {

// At most this many characters of a value typed by the operator appear in an error message.
inline constexpr size_t kEchoLimit = 64;

// `text` quoted for a message, cut after kEchoLimit characters ("\"abc...\" (1200 bytes)").
std::string EchoQuoted(const std::string& text);

// A "json/plain" payload holding `json_text`; INVALID_ARGUMENT naming the text (quoted up to
// kEchoLimit characters) when it is not JSON.
absl::StatusOr<temporal::api::common::v1::Payload> JsonPayload(const std::string& json_text);

// The payload's value: parsed JSON for json/plain, a string for text (binary/plain and
// valid UTF-8), otherwise {"encoding": ..., "base64": ...}.
nlohmann::json DecodePayload(const temporal::api::common::v1::Payload& payload);

// Rewrites, in a proto3-JSON document, every Payload object ({"metadata": {...}, "data": ...})
// into its decoded value, and every Payloads object into its value (one) or values (several).
void DecodePayloadsInJson(nlohmann::json& json);

}  // namespace tock::admin
