#include "lib/admin/payloads.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace tock::admin {
namespace {

bool IsUtf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

nlohmann::json Decode(const std::string& encoding, const std::string& data) {
  if (encoding == "json/plain") {
    nlohmann::json parsed = nlohmann::json::parse(data, nullptr, false);
    if (!parsed.is_discarded()) return parsed;
  }
  if (encoding == "binary/null") return nullptr;
  if ((encoding == "binary/plain" || encoding == "json/plain") && IsUtf8(data)) return data;
  return {{"encoding", encoding}, {"base64", absl::Base64Escape(data)}};
}

}  // namespace

std::string EchoQuoted(const std::string& text) {
  if (text.size() <= kEchoLimit) return absl::StrCat("\"", text, "\"");
  size_t cut = kEchoLimit;
  // Not inside a UTF-8 sequence: back to the byte that starts a character.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat("\"", text.substr(0, cut), "...\" (", text.size(), " bytes)");
}

absl::StatusOr<temporal::api::common::v1::Payload> JsonPayload(const std::string& json_text) {
  nlohmann::json parsed = nlohmann::json::parse(json_text, nullptr, false);
  if (parsed.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid --input ", EchoQuoted(json_text),
        ": each input is one JSON value, for example '\"text\"', 42 or '{\"k\": 1}'"));
  }
  temporal::api::common::v1::Payload payload;
  (*payload.mutable_metadata())["encoding"] = "json/plain";
  payload.set_data(parsed.dump());
  return payload;
}

nlohmann::json DecodePayload(const temporal::api::common::v1::Payload& payload) {
  auto it = payload.metadata().find("encoding");
  return Decode(it == payload.metadata().end() ? "" : it->second, payload.data());
}

void DecodePayloadsInJson(nlohmann::json& json) {
  if (json.is_array()) {
    for (auto& item : json) DecodePayloadsInJson(item);
    return;
  }
  if (!json.is_object()) return;
  // A Payloads message ({"payloads": [...]}) reads as its value, or its values.
  if (json.size() == 1 && json.contains("payloads") && json["payloads"].is_array()) {
    nlohmann::json values = json["payloads"];
    DecodePayloadsInJson(values);
    json = values.size() == 1 ? values[0] : values;
    return;
  }
  if (json.contains("metadata") && json["metadata"].is_object() &&
      json["metadata"].contains("encoding")) {
    std::string encoding, data;
    absl::Base64Unescape(json["metadata"]["encoding"].get<std::string>(), &encoding);
    if (json.contains("data") && json["data"].is_string()) {
      absl::Base64Unescape(json["data"].get<std::string>(), &data);
    }
    json = Decode(encoding, data);
    return;
  }
  for (auto& [key, value] : json.items()) DecodePayloadsInJson(value);
}

}  // namespace tock::admin
