#include "lib/archival/archive_json.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/duration.pb.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/timestamp.pb.h>
#include <google/protobuf/util/json_util.h>

#include <charconv>
#include <cmath>
#include <cstdio>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace tock::archival {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

void AppendString(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t plain = 0;  // start of the run of characters that need no escape
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default:
        out.append("\\u00");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
    }
  }
  out.append(s.data() + plain, s.size() - plain);
  out.push_back('"');
}

template <typename Float>
void AppendFloat(Float v, std::string& out) {
  if (std::isnan(v)) {
    out.append("\"NaN\"");
  } else if (std::isinf(v)) {
    out.append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  } else {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest that round-trips
    out.append(buf, end);
  }
}

// ".123", ".123456" or ".123456789" as protobuf prints nanoseconds; "" for none.
void AppendNanos(int32_t nanos, std::string& out) {
  if (nanos == 0) return;
  char buf[16];
  if (nanos % 1'000'000 == 0) {
    std::snprintf(buf, sizeof buf, ".%03d", nanos / 1'000'000);
  } else if (nanos % 1'000 == 0) {
    std::snprintf(buf, sizeof buf, ".%06d", nanos / 1'000);
  } else {
    std::snprintf(buf, sizeof buf, ".%09d", nanos);
  }
  out.append(buf);
}

void AppendMessage(const Message& m, std::string& out);

void AppendWellKnown(const Message& m, const std::string& name, std::string& out) {
  const Reflection* r = m.GetReflection();
  const Descriptor* d = m.GetDescriptor();
  if (name == "google.protobuf.Timestamp") {
    const int64_t seconds = r->GetInt64(m, d->FindFieldByNumber(1));
    const int32_t nanos = r->GetInt32(m, d->FindFieldByNumber(2));
    out.push_back('"');
    out.append(absl::FormatTime("%Y-%m-%dT%H:%M:%S", absl::FromUnixSeconds(seconds),
                                absl::UTCTimeZone()));
    AppendNanos(nanos, out);
    out.append("Z\"");
    return;
  }
  // google.protobuf.Duration
  int64_t seconds = r->GetInt64(m, d->FindFieldByNumber(1));
  int32_t nanos = r->GetInt32(m, d->FindFieldByNumber(2));
  out.push_back('"');
  if (seconds < 0 || nanos < 0) {
    out.push_back('-');
    seconds = -seconds;
    nanos = -nanos;
  }
  absl::StrAppend(&out, seconds);
  AppendNanos(nanos, out);
  out.append("s\"");
}

void AppendScalar(const Message& m, const Reflection* r, const FieldDescriptor* f, int index,
                  std::string& out) {
  const bool repeated = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      absl::StrAppend(&out, repeated ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      absl::StrAppend(&out, repeated ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      absl::StrAppend(&out, "\"", repeated ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f),
                      "\"");
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      absl::StrAppend(&out, "\"",
                      repeated ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f), "\"");
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      AppendFloat(repeated ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f), out);
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      AppendFloat(repeated ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f), out);
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      out.append((repeated ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false");
      break;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int number = repeated ? r->GetRepeatedEnumValue(m, f, index) : r->GetEnumValue(m, f);
      const auto* value = f->enum_type()->FindValueByNumber(number);
      if (value != nullptr) {
        out.push_back('"');
        out.append(value->name());
        out.push_back('"');
      } else {
        absl::StrAppend(&out, number);
      }
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& s = repeated ? r->GetRepeatedStringReference(m, f, index, &scratch)
                                      : r->GetStringReference(m, f, &scratch);
      if (f->type() == FieldDescriptor::TYPE_BYTES) {
        out.push_back('"');
        out.append(absl::Base64Escape(s));
        out.push_back('"');
      } else {
        AppendString(s, out);
      }
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      AppendMessage(repeated ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f), out);
      break;
  }
}

// A map key: always a JSON string.
void AppendMapKey(const Message& entry, std::string& out) {
  const Reflection* r = entry.GetReflection();
  const FieldDescriptor* key = entry.GetDescriptor()->FindFieldByNumber(1);
  if (key->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
    std::string scratch;
    AppendString(r->GetStringReference(entry, key, &scratch), out);
    return;
  }
  std::string text;
  AppendScalar(entry, r, key, -1, text);
  if (text.front() != '"') text = absl::StrCat("\"", text, "\"");
  out.append(text);
}

void AppendMessage(const Message& m, std::string& out) {
  const Descriptor* d = m.GetDescriptor();
  const std::string& full_name = d->full_name();
  if (full_name.size() > 16 && full_name.compare(0, 16, "google.protobuf.") == 0) {
    if (full_name == "google.protobuf.Timestamp" || full_name == "google.protobuf.Duration") {
      return AppendWellKnown(m, full_name, out);
    }
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(m, &json);
    out.append(json.empty() ? "{}" : json);
    return;
  }
  const Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);  // set fields only, by number: defaults are left out
  out.push_back('{');
  bool first = true;
  for (const FieldDescriptor* f : fields) {
    if (!first) out.push_back(',');
    first = false;
    out.push_back('"');
    out.append(f->json_name());
    out.append("\":");
    if (f->is_map()) {
      out.push_back('{');
      const int n = r->FieldSize(m, f);
      for (int i = 0; i < n; ++i) {
        if (i > 0) out.push_back(',');
        const Message& entry = r->GetRepeatedMessage(m, f, i);
        AppendMapKey(entry, out);
        out.push_back(':');
        AppendScalar(entry, entry.GetReflection(), entry.GetDescriptor()->FindFieldByNumber(2), -1,
                     out);
      }
      out.push_back('}');
    } else if (f->is_repeated()) {
      out.push_back('[');
      const int n = r->FieldSize(m, f);
      for (int i = 0; i < n; ++i) {
        if (i > 0) out.push_back(',');
        AppendScalar(m, r, f, i, out);
      }
      out.push_back(']');
    } else {
      AppendScalar(m, r, f, -1, out);
    }
  }
  out.push_back('}');
}

}  // namespace

void AppendArchiveJson(const google::protobuf::Message& message, std::string& out) {
  AppendMessage(message, out);
}

std::string ArchiveJson(const google::protobuf::Message& message) {
  std::string out;
  out.reserve(static_cast<size_t>(message.ByteSizeLong()) * 2);
  AppendMessage(message, out);
  return out;
}

absl::Status ParseArchiveJson(std::string_view json, google::protobuf::Message& message,
                              const std::string& what) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  auto s = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &message, options);
  if (!s.ok()) {
    return absl::DataLossError(
        absl::StrCat("archive ", what, " is not valid: ", s.message().as_string()));
  }
  return absl::OkStatus();
}

}  // namespace tock::archival
