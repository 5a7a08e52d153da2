#include "server-core/http_api/json_codec.h"

#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace tock::server::http_api {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using nlohmann::json;

constexpr absl::string_view kPayload = "temporal.api.common.v1.Payload";
constexpr absl::string_view kPayloads = "temporal.api.common.v1.Payloads";
constexpr absl::string_view kShorthandType = "_protoMessageType";
constexpr size_t kQuotedInput = 80;  // at most this much of a bad value in a message

// A piece of client input fit to quote in an error message.
std::string Quote(absl::string_view text) {
  if (text.size() <= kQuotedInput) return absl::StrCat("\"", text, "\"");
  return absl::StrCat("\"", text.substr(0, kQuotedInput), "...\" (", text.size(), " bytes)");
}

struct TooDeep {};

// `text` parsed, refusing nesting deeper than kMaxJsonDepth (nlohmann's parser is iterative,
// but destroying and dumping a value recurse). nullopt when it does not parse.
std::optional<json> ParseBounded(absl::string_view text, bool* too_deep = nullptr) {
  json::parser_callback_t bound = [](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) throw TooDeep{};
    return true;
  };
  try {
    json value = json::parse(text.begin(), text.end(), bound, /*allow_exceptions=*/false);
    if (value.is_discarded()) return std::nullopt;
    return value;
  } catch (const TooDeep&) {
    if (too_deep != nullptr) *too_deep = true;
    return std::nullopt;
  }
}

std::string Dump(const json& value, int indent = -1) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

// Standard or URL-safe base64, padded or not.
std::optional<std::string> DecodeBase64(absl::string_view text) {
  std::string out;
  const bool web = text.find_first_of("-_") != absl::string_view::npos;
  if (web ? absl::WebSafeBase64Unescape(text, &out) : absl::Base64Unescape(text, &out)) return out;
  return std::nullopt;
}

// The field `key` names in `d`: its JSON name or its proto name.
const FieldDescriptor* FieldByKey(const Descriptor* d, const std::string& key) {
  if (const FieldDescriptor* f = d->FindFieldByCamelcaseName(key)) return f;
  if (const FieldDescriptor* f = d->FindFieldByName(key)) return f;
  for (int i = 0; i < d->field_count(); ++i) {
    if (d->field(i)->json_name() == key) return d->field(i);
  }
  return nullptr;
}

bool WellKnown(const Descriptor* d) { return absl::StartsWith(d->full_name(), "google.protobuf."); }

// ---- Output: the proto form to the shorthand ----

// The short form of a proto-form payload, or nullopt when it has none.
std::optional<json> ShortPayload(const json& raw) {
  if (!raw.is_object()) return std::nullopt;
  auto metadata = raw.find("metadata");
  if (metadata == raw.end() || !metadata->is_object()) return std::nullopt;
  auto encoding_b64 = metadata->find("encoding");
  if (encoding_b64 == metadata->end() || !encoding_b64->is_string()) return std::nullopt;
  std::optional<std::string> encoding = DecodeBase64(encoding_b64->get<std::string>());
  if (!encoding.has_value()) return std::nullopt;
  if (*encoding == "binary/null") return json(nullptr);
  std::string data;
  if (auto d = raw.find("data"); d != raw.end() && d->is_string()) {
    std::optional<std::string> decoded = DecodeBase64(d->get<std::string>());
    if (!decoded.has_value()) return std::nullopt;
    data = std::move(*decoded);
  }
  if (*encoding == "json/plain" && metadata->size() == 1) return ParseBounded(data);
  if (*encoding == "json/protobuf" && metadata->size() == 2) {
    auto type_b64 = metadata->find("messageType");
    if (type_b64 == metadata->end() || !type_b64->is_string()) return std::nullopt;
    std::optional<std::string> type = DecodeBase64(type_b64->get<std::string>());
    if (!type.has_value() || type->empty()) return std::nullopt;
    std::optional<json> value = ParseBounded(data);
    if (!value.has_value() || !value->is_object()) return std::nullopt;
    (*value)[std::string(kShorthandType)] = *type;
    return value;
  }
  return std::nullopt;
}

void ShortenMessage(json& object, const Descriptor* d, int depth);

// `value` of type `t` in its short form where it has one.
void ShortenValue(json& value, const Descriptor* t, int depth) {
  if (t->full_name() == kPayload) {
    if (std::optional<json> s = ShortPayload(value)) value = std::move(*s);
  } else if (t->full_name() == kPayloads) {
    if (!value.is_object()) return;
    auto list = value.find("payloads");
    if (list == value.end()) {
      if (value.empty()) value = json::array();
      return;
    }
    if (!list->is_array()) return;
    json shortened = json::array();
    for (const json& payload : *list) {
      std::optional<json> s = ShortPayload(payload);
      if (!s.has_value()) return;  // one without a short form keeps the whole list
      shortened.push_back(std::move(*s));
    }
    value = std::move(shortened);
  } else if (!WellKnown(t)) {
    ShortenMessage(value, t, depth + 1);
  }
}

void ShortenMessage(json& object, const Descriptor* d, int depth) {
  if (!object.is_object() || depth > kMaxJsonDepth) return;
  for (auto& [key, value] : object.items()) {
    const FieldDescriptor* f = FieldByKey(d, key);
    if (f == nullptr || f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_map()) {
      const FieldDescriptor* v = f->message_type()->map_value();
      if (v->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || !value.is_object()) continue;
      for (auto& [k, entry] : value.items()) ShortenValue(entry, v->message_type(), depth);
    } else if (f->is_repeated()) {
      if (!value.is_array()) continue;
      for (json& element : value) ShortenValue(element, f->message_type(), depth);
    } else {
      ShortenValue(value, f->message_type(), depth);
    }
  }
}

// ---- Input: the shorthand to the proto form ----

bool IsBase64(const json& value) {
  return value.is_string() && DecodeBase64(value.get<std::string>()).has_value();
}

// Whether `value` parses strictly as a proto-form payload (then it is taken as one).
bool ProtoFormPayload(const json& value) {
  if (!value.is_object()) return false;
  auto metadata = value.find("metadata");
  if (metadata == value.end() || !metadata->is_object()) return false;
  auto encoding = metadata->find("encoding");
  if (encoding == metadata->end()) return false;
  for (const auto& [k, v] : metadata->items()) {
    if (!IsBase64(v)) return false;
  }
  auto data = value.find("data");
  if (data == value.end()) {
    return value.size() == 1 && *encoding == absl::Base64Escape("binary/null");
  }
  return value.size() == 2 && IsBase64(*data);
}

json Base64Payload(absl::string_view encoding, const std::string& data) {
  json payload = {{"metadata", {{"encoding", absl::Base64Escape(encoding)}}}};
  payload["data"] = absl::Base64Escape(data);
  return payload;
}

absl::StatusOr<json> LongPayload(const json& value) {
  if (value.is_null()) return json{{"metadata", {{"encoding", absl::Base64Escape("binary/null")}}}};
  if (ProtoFormPayload(value)) return value;
  if (value.is_object()) {
    if (auto type = value.find(std::string(kShorthandType)); type != value.end()) {
      if (!type->is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat("a payload's \"", kShorthandType, "\" must be a string (the message type)"));
      }
      json message = value;
      message.erase(std::string(kShorthandType));
      json payload = Base64Payload("json/protobuf", Dump(message));
      payload["metadata"]["messageType"] = absl::Base64Escape(type->get<std::string>());
      return payload;
    }
  }
  return Base64Payload("json/plain", Dump(value));
}

absl::Status LengthenMessage(json& object, const Descriptor* d, int depth);

absl::Status LengthenValue(json& value, const Descriptor* t, int depth) {
  if (t->full_name() == kPayload) {
    absl::StatusOr<json> long_form = LongPayload(value);
    if (!long_form.ok()) return long_form.status();
    value = std::move(*long_form);
  } else if (t->full_name() == kPayloads) {
    json* list = nullptr;
    if (value.is_array()) {
      value = json{{"payloads", std::move(value)}};
      list = &value["payloads"];
    } else if (value.is_object() && value.contains("payloads") && value["payloads"].is_array()) {
      list = &value["payloads"];
    }
    if (list == nullptr) return absl::OkStatus();  // the JSON parser says what is wrong
    for (json& payload : *list) {
      absl::StatusOr<json> long_form = LongPayload(payload);
      if (!long_form.ok()) return long_form.status();
      payload = std::move(*long_form);
    }
  } else if (!WellKnown(t)) {
    return LengthenMessage(value, t, depth + 1);
  }
  return absl::OkStatus();
}

absl::Status LengthenMessage(json& object, const Descriptor* d, int depth) {
  if (!object.is_object() || depth > kMaxJsonDepth) return absl::OkStatus();
  for (auto& [key, value] : object.items()) {
    const FieldDescriptor* f = FieldByKey(d, key);
    if (f == nullptr || f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    absl::Status s;
    if (f->is_map()) {
      const FieldDescriptor* v = f->message_type()->map_value();
      if (v->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || !value.is_object()) continue;
      for (auto& [k, entry] : value.items()) {
        if (s = LengthenValue(entry, v->message_type(), depth); !s.ok()) return s;
      }
    } else if (f->is_repeated()) {
      if (!value.is_array()) continue;
      for (json& element : value) {
        if (s = LengthenValue(element, f->message_type(), depth); !s.ok()) return s;
      }
    } else if (s = LengthenValue(value, f->message_type(), depth); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// ---- Text values (path variables, query parameters) ----

absl::Status BadValue(const FieldDescriptor* f, const std::string& text, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid value ", Quote(text), " for ", f->json_name(), ": ", what));
}

absl::Status SetOne(Message* m, const FieldDescriptor* f, const std::string& text) {
  const Reflection* r = m->GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string value = text;
      if (f->type() == FieldDescriptor::TYPE_BYTES) {
        std::optional<std::string> decoded = DecodeBase64(text);
        if (!decoded.has_value()) return BadValue(f, text, "expected base64");
        value = std::move(*decoded);
      }
      rep ? r->AddString(m, f, std::move(value)) : r->SetString(m, f, std::move(value));
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t v;
      if (!absl::SimpleAtoi(text, &v)) return BadValue(f, text, "expected a 32-bit integer");
      rep ? r->AddInt32(m, f, v) : r->SetInt32(m, f, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t v;
      if (!absl::SimpleAtoi(text, &v)) return BadValue(f, text, "expected a 64-bit integer");
      rep ? r->AddInt64(m, f, v) : r->SetInt64(m, f, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v;
      if (!absl::SimpleAtoi(text, &v)) return BadValue(f, text, "expected an unsigned integer");
      rep ? r->AddUInt32(m, f, v) : r->SetUInt32(m, f, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v;
      if (!absl::SimpleAtoi(text, &v)) return BadValue(f, text, "expected an unsigned integer");
      rep ? r->AddUInt64(m, f, v) : r->SetUInt64(m, f, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double v;
      if (!absl::SimpleAtod(text, &v)) return BadValue(f, text, "expected a number");
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        rep ? r->AddDouble(m, f, v) : r->SetDouble(m, f, v);
      } else {
        rep ? r->AddFloat(m, f, static_cast<float>(v)) : r->SetFloat(m, f, static_cast<float>(v));
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      bool v;
      if (text == "true" || text == "1") {
        v = true;
      } else if (text == "false" || text == "0") {
        v = false;
      } else {
        return BadValue(f, text, "expected true or false");
      }
      rep ? r->AddBool(m, f, v) : r->SetBool(m, f, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const google::protobuf::EnumValueDescriptor* v = f->enum_type()->FindValueByName(text);
      int number;
      if (v == nullptr && absl::SimpleAtoi(text, &number)) {
        v = f->enum_type()->FindValueByNumber(number);
      }
      if (v == nullptr) {
        return BadValue(f, text, absl::StrCat("not a value of ", f->enum_type()->name()));
      }
      rep ? r->AddEnum(m, f, v) : r->SetEnum(m, f, v);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_MESSAGE: {
      // Timestamp, Duration and the wrappers take their JSON form, quoted.
      Message* target = rep ? r->AddMessage(m, f) : r->MutableMessage(m, f);
      google::protobuf::util::JsonParseOptions options;
      const std::string quoted = Dump(json(text));
      if (!google::protobuf::util::JsonStringToMessage(quoted, target, options).ok()) {
        return BadValue(f, text, absl::StrCat("expected a ", f->message_type()->name(),
                                              " in its JSON form"));
      }
      return absl::OkStatus();
    }
  }
  return BadValue(f, text, "unsupported field type");
}

}  // namespace

absl::StatusOr<std::string> ToJson(const Message& message, const JsonOptions& options) {
  google::protobuf::util::JsonPrintOptions print;
  std::string out;
  if (auto s = google::protobuf::util::MessageToJsonString(message, &out, print); !s.ok()) {
    return absl::InternalError(absl::StrCat("the answer could not be written as JSON: ",
                                            std::string(s.message()).substr(0, 200)));
  }
  if (!options.payload_shorthand && !options.pretty) return out;
  std::optional<json> value = ParseBounded(out);
  if (!value.has_value()) {
    return absl::InternalError("the answer's JSON nests deeper than the HTTP API writes");
  }
  if (options.payload_shorthand) ShortenMessage(*value, message.GetDescriptor(), 0);
  return Dump(*value, options.pretty ? 2 : -1);
}

absl::Status FromJson(std::string_view body, Message* message, bool payload_shorthand) {
  bool too_deep = false;
  std::optional<json> value = ParseBounded(absl::string_view(body.data(), body.size()), &too_deep);
  if (!value.has_value()) {
    return absl::InvalidArgumentError(
        too_deep ? absl::StrCat("the body nests deeper than ", kMaxJsonDepth, " levels")
                 : "the body is not valid JSON");
  }
  if (!value->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("the body must be a JSON object (",
                                                   message->GetDescriptor()->name(), ")"));
  }
  if (payload_shorthand) {
    if (absl::Status s = LengthenMessage(*value, message->GetDescriptor(), 0); !s.ok()) return s;
  }
  google::protobuf::util::JsonParseOptions options;  // unknown fields refused
  auto s = google::protobuf::util::JsonStringToMessage(Dump(*value), message, options);
  if (!s.ok()) {
    std::string why(s.message());
    if (why.size() > 200) why = why.substr(0, 200) + "...";
    return absl::InvalidArgumentError(
        absl::StrCat("the body is not a ", message->GetDescriptor()->name(), ": ", why));
  }
  return absl::OkStatus();
}

absl::Status SetFromText(Message* message, const std::string& path,
                         const std::vector<std::string>& values) {
  std::vector<std::string> parts = absl::StrSplit(path, '.');
  Message* at = message;
  for (size_t i = 0; i < parts.size(); ++i) {
    const FieldDescriptor* f = FieldByKey(at->GetDescriptor(), parts[i]);
    if (f == nullptr) {
      return absl::NotFoundError(absl::StrCat("no field ", Quote(path), " in ",
                                              message->GetDescriptor()->name()));
    }
    if (i + 1 < parts.size()) {
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || f->is_repeated()) {
        return absl::NotFoundError(absl::StrCat("no field ", Quote(path), " in ",
                                                message->GetDescriptor()->name()));
      }
      at = at->GetReflection()->MutableMessage(at, f);
      continue;
    }
    if (f->is_map()) {
      return absl::InvalidArgumentError(
          absl::StrCat(f->json_name(), " is a map: send it in a JSON body"));
    }
    if (!f->is_repeated()) {
      if (values.empty()) return absl::OkStatus();
      return SetOne(at, f, values.back());
    }
    for (const std::string& value : values) {
      if (absl::Status s = SetOne(at, f, value); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace tock::server::http_api
