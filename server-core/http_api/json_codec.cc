#include "server-core/http_api/json_codec.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"
#include "server-core/http_api/json_text.h"
#include "temporal/api/common/v1/message.pb.h"

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
using common_payload = temporal::api::common::v1::Payload;
using common_payloads = temporal::api::common::v1::Payloads;

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

// ---- Output, directly: a message's JSON written from reflection ----
//
// protobuf 3.21's MessageToJsonString goes through the binary form and a type resolver, and
// the shorthand pass then parsed and wrote the text again: 25 µs an event of a history. This
// writer walks the message once and writes the JSON, the shorthand in place. Well-known
// types other than Timestamp and Duration (rare in Temporal's messages) are written by
// protobuf's printer and spliced in.
class JsonWriter : public JsonText {
 public:
  explicit JsonWriter(bool shorthand) : shorthand_(shorthand) {}

  absl::Status Message(const google::protobuf::Message& m, int depth = 0) {
    if (depth > kMaxJsonDepth) return absl::InternalError("the answer nests too deep to write");
    const Descriptor* d = m.GetDescriptor();
    if (WellKnown(d)) return WellKnownValue(m);
    const Reflection* r = m.GetReflection();
    std::vector<const FieldDescriptor*> fields;
    r->ListFields(m, &fields);
    out_.push_back('{');
    bool first = true;
    for (const FieldDescriptor* f : fields) {
      if (!first) out_.push_back(',');
      first = false;
      String(f->json_name());
      out_.push_back(':');
      if (absl::Status s = Field(m, f, depth); !s.ok()) return s;
    }
    out_.push_back('}');
    return absl::OkStatus();
  }

 private:
  absl::Status Field(const google::protobuf::Message& m, const FieldDescriptor* f, int depth) {
    const Reflection* r = m.GetReflection();
    if (f->is_map()) {
      const FieldDescriptor* key = f->message_type()->map_key();
      const FieldDescriptor* value = f->message_type()->map_value();
      out_.push_back('{');
      const int n = r->FieldSize(m, f);
      for (int i = 0; i < n; ++i) {
        const google::protobuf::Message& entry = r->GetRepeatedMessage(m, f, i);
        if (i > 0) out_.push_back(',');
        String(MapKey(entry, key));
        out_.push_back(':');
        if (absl::Status s = Value(entry, value, -1, depth); !s.ok()) return s;
      }
      out_.push_back('}');
      return absl::OkStatus();
    }
    if (f->is_repeated()) {
      out_.push_back('[');
      const int n = r->FieldSize(m, f);
      for (int i = 0; i < n; ++i) {
        if (i > 0) out_.push_back(',');
        if (absl::Status s = Value(m, f, i, depth); !s.ok()) return s;
      }
      out_.push_back(']');
      return absl::OkStatus();
    }
    return Value(m, f, -1, depth);
  }

  // Field `f` of `m` (element `index` of a repeated one; -1: singular).
  absl::Status Value(const google::protobuf::Message& m, const FieldDescriptor* f, int index,
                     int depth) {
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      Scalar(m, f, index);
      return absl::OkStatus();
    }
    const Reflection* r = m.GetReflection();
    const google::protobuf::Message& sub =
        index < 0 ? r->GetMessage(m, f) : r->GetRepeatedMessage(m, f, index);
    const Descriptor* type = sub.GetDescriptor();
    if (shorthand_ && (type == common_payload::descriptor() || type == common_payloads::descriptor())) {
      if (const auto* p = google::protobuf::DynamicCastToGenerated<common_payload>(&sub)) {
        if (ShortPayload(*p)) return absl::OkStatus();
      } else if (const auto* list = google::protobuf::DynamicCastToGenerated<common_payloads>(&sub)) {
        if (ShortPayloads(*list)) return absl::OkStatus();
        // The whole list in the proto form, its payloads too.
        shorthand_ = false;
        absl::Status s = Message(sub, depth + 1);
        shorthand_ = true;
        return s;
      }
    }
    return Message(sub, depth + 1);
  }

  // A map entry's key as the text of a JSON object's key.
  static std::string MapKey(const google::protobuf::Message& entry, const FieldDescriptor* f) {
    const Reflection* r = entry.GetReflection();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: return absl::StrCat(r->GetInt32(entry, f));
      case FieldDescriptor::CPPTYPE_UINT32: return absl::StrCat(r->GetUInt32(entry, f));
      case FieldDescriptor::CPPTYPE_INT64: return absl::StrCat(r->GetInt64(entry, f));
      case FieldDescriptor::CPPTYPE_UINT64: return absl::StrCat(r->GetUInt64(entry, f));
      case FieldDescriptor::CPPTYPE_BOOL: return r->GetBool(entry, f) ? "true" : "false";
      default: return r->GetString(entry, f);
    }
  }

  // A scalar field's value (element `index` of a repeated one; -1: singular).
  void Scalar(const google::protobuf::Message& m, const FieldDescriptor* f, int index) {
    const Reflection* r = m.GetReflection();
    const bool rep = index >= 0;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        absl::StrAppend(&out_, rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
        return;
      case FieldDescriptor::CPPTYPE_UINT32:
        absl::StrAppend(&out_, rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
        return;
      case FieldDescriptor::CPPTYPE_INT64:
        absl::StrAppend(&out_, "\"", rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f), "\"");
        return;
      case FieldDescriptor::CPPTYPE_UINT64:
        absl::StrAppend(&out_, "\"", rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f), "\"");
        return;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        Double(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f));
        return;
      case FieldDescriptor::CPPTYPE_FLOAT:
        Double(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
        return;
      case FieldDescriptor::CPPTYPE_BOOL:
        out_ += (rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false";
        return;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const int number = rep ? r->GetRepeatedEnumValue(m, f, index) : r->GetEnumValue(m, f);
        const google::protobuf::EnumValueDescriptor* v = f->enum_type()->FindValueByNumber(number);
        Enum(v != nullptr ? &v->name() : nullptr, number);
        return;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        const std::string& v = rep ? r->GetRepeatedStringReference(m, f, index, &scratch)
                                   : r->GetStringReference(m, f, &scratch);
        if (f->type() == FieldDescriptor::TYPE_BYTES) {
          Base64(v);
        } else {
          String(v);
        }
        return;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        return;
    }
  }

  // Timestamp and Duration in their JSON forms; other well-known types by protobuf's printer.
  absl::Status WellKnownValue(const google::protobuf::Message& m) {
    const std::string& name = m.GetDescriptor()->full_name();
    const Reflection* r = m.GetReflection();
    if (name == "google.protobuf.Timestamp" || name == "google.protobuf.Duration") {
      const int64_t seconds = r->GetInt64(m, m.GetDescriptor()->FindFieldByNumber(1));
      const int32_t nanos = r->GetInt32(m, m.GetDescriptor()->FindFieldByNumber(2));
      name == "google.protobuf.Timestamp" ? Timestamp(seconds, nanos) : Duration(seconds, nanos);
      return absl::OkStatus();
    }
    std::string text;
    if (auto s = google::protobuf::util::MessageToJsonString(m, &text); !s.ok()) {
      return absl::InternalError(absl::StrCat("the answer could not be written as JSON: ",
                                              std::string(s.message()).substr(0, 200)));
    }
    out_ += text;
    return absl::OkStatus();
  }

  bool shorthand_;
};

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
  JsonWriter writer(options.payload_shorthand);
  if (absl::Status s = writer.Message(message); !s.ok()) return s;
  std::string out = writer.Take();
  if (!options.pretty) return out;
  // Indented: written again (a reader's view, not the hot path).
  std::optional<json> value = ParseBounded(out);
  if (!value.has_value()) {
    return absl::InternalError("the answer's JSON nests deeper than the HTTP API writes");
  }
  return Dump(*value, 2);
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
