// Protobuf messages as canonical proto3 JSON (camelCase names, int64 as strings, durations
// as "259200s"), the form `jq` scripts written for the Temporal CLI expect.
#pragma once

#include <string>

#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

namespace tock {

// Compact canonical JSON; primitive fields are printed even when they hold their default,
// so scripts see `"isGlobalNamespace": false` rather than a missing key. A message protobuf
// refuses to print (a Duration or Timestamp out of its range, an Any of an unknown type)
// gives "{}". Thread-safe.
std::string ProtoToJsonString(const google::protobuf::Message& message);

// The same document parsed, for printers and FlattenJson.
nlohmann::json ProtoToJson(const google::protobuf::Message& message);

}  // namespace tock
