// The output side of Temporal's JSON that both writers share: json_codec's reflection
// writer (any message) and wire_json's transcoder (a response's wire bytes): strings
// escaped, numbers, times and durations in protobuf's JSON forms, and the payload shorthand.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "temporal/api/common/v1/message.pb.h"

namespace tock::server::http_api {

class JsonText {
 public:
  std::string Take() { return std::move(out_); }

 protected:
  // A JSON string: quotes, backslashes and control characters escaped, invalid UTF-8
  // replaced by U+FFFD (as the rest of the API's output does).
  void String(std::string_view text);
  void Base64(std::string_view bytes);
  // A double as protobuf's JSON writes it: shortest round trip, "NaN" and "Infinity" quoted.
  void Double(double value);
  // Enum values by name when `name` is known, else by number.
  void Enum(const std::string* name, int number);
  // google.protobuf.Timestamp ("1970-01-01T00:00:00.5Z") and Duration ("-1.5s").
  void Timestamp(int64_t seconds, int32_t nanos);
  void Duration(int64_t seconds, int32_t nanos);

  // A payload's short form written, or false (nothing written) when it has none.
  bool ShortPayload(const temporal::api::common::v1::Payload& payload);
  // The list as an array of short forms, or false (nothing written) when one has none.
  bool ShortPayloads(const temporal::api::common::v1::Payloads& list);

  std::string out_;

 private:
  void Fraction(int32_t nanos);
};

}  // namespace tock::server::http_api
