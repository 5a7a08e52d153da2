#include "cmd/tock/output/history_format.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cmd/tock/output/printer.h"
#include "lib/admin/payloads.h"
#include "lib/common/json_flatten.h"
#include "lib/common/proto_json.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::cli {

namespace enums = temporal::api::enums::v1;
using temporal::api::history::v1::HistoryEvent;

nlohmann::json DecodedJson(const google::protobuf::Message& message) {
  nlohmann::json json = ProtoToJson(message);
  admin::DecodePayloadsInJson(json);
  return json;
}

std::string EventTypeLabel(const HistoryEvent& event) {
  return EnumLabel(enums::EventType_Name(event.event_type()), "EVENT_TYPE_");
}

std::string TimestampText(const google::protobuf::Timestamp& t) {
  return t.seconds() == 0 && t.nanos() == 0 ? "" : FormatTimestamp(FromProtoTime(t));
}

std::string EventSummary(const HistoryEvent& event) {
  nlohmann::json json = DecodedJson(event);
  std::string out;
  for (const auto& [key, value] : json.items()) {
    if (!absl::EndsWith(key, "Attributes")) continue;
    for (const auto& [path, v] : FlattenJson(value)) {
      if (v.empty() || v == "0" || v == "0s" || v == "false" || absl::EndsWith(v, "_UNSPECIFIED")) {
        continue;  // defaults say nothing
      }
      if (!out.empty()) out += " ";
      absl::StrAppend(&out, path, "=", v);
    }
  }
  constexpr size_t kMax = 120;
  if (out.size() > kMax) out = out.substr(0, kMax - 3) + "...";
  return out;
}

std::vector<std::string> EventRow(const HistoryEvent& event) {
  return {std::to_string(event.event_id()), TimestampText(event.event_time()),
          EventTypeLabel(event), EventSummary(event)};
}

std::vector<std::string> ExecutionColumns() {
  return {"WORKFLOW ID", "RUN ID", "TYPE", "STATUS", "START TIME", "CLOSE TIME"};
}

std::vector<std::string> ExecutionRow(const temporal::api::workflow::v1::WorkflowExecutionInfo& e) {
  return {e.execution().workflow_id(),
          e.execution().run_id(),
          e.type().name(),
          EnumLabel(temporal::api::enums::v1::WorkflowExecutionStatus_Name(e.status()),
                    "WORKFLOW_EXECUTION_STATUS_"),
          TimestampText(e.start_time()),
          TimestampText(e.close_time())};
}

}  // namespace tock::cli
