#include "lib/common/proto_json.h"

#include <google/protobuf/util/json_util.h>

namespace tock {

std::string ProtoToJsonString(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = false;
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(message, &out, options).ok()) return "{}";
  return out;
}

nlohmann::json ProtoToJson(const google::protobuf::Message& message) {
  return nlohmann::json::parse(ProtoToJsonString(message));
}

}  // namespace tock
