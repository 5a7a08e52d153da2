#include "lib/admin/namespace_diff.h"

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <variant>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/common/duration.h"
#include "lib/common/json_flatten.h"
#include "lib/common/proto_json.h"

namespace tock::admin {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using tock::persistence::v1::NamespaceRecord;

constexpr absl::string_view kDurationType = "google.protobuf.Duration";

// Flattened paths carry no types, so a path is resolved against the message descriptor to
// learn what its value is: a Duration to humanize, a string to quote. Paths are split on
// '.'; a segment may end in "[i]" (repeated field). A map key may itself contain dots, so
// for a map of messages every split between key and value path is tried.
const FieldDescriptor* FindByJsonName(const Descriptor* message, absl::string_view name) {
  for (int i = 0; i < message->field_count(); ++i) {
    if (message->field(i)->json_name() == name) return message->field(i);
  }
  return nullptr;
}

bool PrintsAsScalar(const FieldDescriptor* field) {
  // Well-known types that canonical JSON prints as one string.
  if (field->type() != FieldDescriptor::TYPE_MESSAGE) return true;
  const std::string& type = field->message_type()->full_name();
  return type == kDurationType || type == "google.protobuf.Timestamp";
}

const FieldDescriptor* ResolveLeaf(const Descriptor* message,
                                   const std::vector<absl::string_view>& segments, size_t i) {
  if (i >= segments.size()) return nullptr;
  absl::string_view segment = segments[i];
  const FieldDescriptor* field = FindByJsonName(message, segment.substr(0, segment.find('[')));
  if (field == nullptr) return nullptr;
  if (field->is_map()) {
    const FieldDescriptor* value = field->message_type()->map_value();
    if (PrintsAsScalar(value)) return i + 1 < segments.size() ? value : nullptr;
    for (size_t rest = i + 2; rest < segments.size(); ++rest) {
      if (const FieldDescriptor* leaf = ResolveLeaf(value->message_type(), segments, rest)) {
        return leaf;
      }
    }
    return nullptr;
  }
  if (i + 1 == segments.size()) return field;
  if (PrintsAsScalar(field)) return nullptr;
  return ResolveLeaf(field->message_type(), segments, i + 1);
}

// The field a flattened NamespaceRecord path ends in; nullptr when it does not resolve.
const FieldDescriptor* LeafField(const std::string& path) {
  std::vector<absl::string_view> segments = absl::StrSplit(path, '.');
  return ResolveLeaf(NamespaceRecord::descriptor(), segments, 0);
}

bool IsDuration(const FieldDescriptor* field) {
  return field != nullptr && field->type() == FieldDescriptor::TYPE_MESSAGE &&
         field->message_type()->full_name() == kDurationType;
}

bool IsString(const FieldDescriptor* field) {
  return field != nullptr && (field->type() == FieldDescriptor::TYPE_STRING ||
                              field->type() == FieldDescriptor::TYPE_BYTES);
}

// Canonical JSON of a Duration ("259200s", "1.500s", "-0.250s") as operators write it
// ("3d", "1s500ms"). Parsed exactly, seconds and nanoseconds apart (a double would turn
// 0.1s into 99.999...ms). Anything else is returned unchanged.
std::string HumanizeDuration(const std::string& json) {
  if (json.size() < 2 || json.back() != 's') return json;
  absl::string_view number(json.data(), json.size() - 1);
  bool negative = !number.empty() && number.front() == '-';
  if (negative) number.remove_prefix(1);
  absl::string_view whole = number.substr(0, number.find('.'));
  absl::string_view fraction =
      whole.size() < number.size() ? number.substr(whole.size() + 1) : absl::string_view();
  int64_t seconds = 0;
  int64_t nanos = 0;
  if (whole.empty() || fraction.size() > 9 ||
      whole.find_first_not_of("0123456789") != absl::string_view::npos ||
      fraction.find_first_not_of("0123456789") != absl::string_view::npos ||
      !absl::SimpleAtoi(whole, &seconds)) {
    return json;
  }
  if (!fraction.empty()) {
    std::string padded(fraction);
    padded.resize(9, '0');
    if (!absl::SimpleAtoi(padded, &nanos)) return json;
  }
  absl::Duration d = absl::Seconds(seconds) + absl::Nanoseconds(nanos);
  return FormatHumanDuration(negative ? -d : d);
}

std::map<std::string, std::string> Fields(const NamespaceRecord& record) {
  NamespaceRecord copy = record;
  copy.clear_failover_history();  // the failover version itself is compared
  copy.clear_config_version();    // bookkeeping: it changes with every change
  std::map<std::string, std::string> out;
  for (auto& [path, value] : FlattenJson(ProtoToJson(copy))) {
    out[path] = IsDuration(LeafField(path)) ? HumanizeDuration(value) : std::move(value);
  }
  return out;
}

// A path as keys and indexes, so that "clusters[2]" sorts before "clusters[10]" (the
// document order of FlattenJson) rather than after it as plain text would.
std::vector<std::variant<uint64_t, absl::string_view>> PathTokens(absl::string_view path) {
  std::vector<std::variant<uint64_t, absl::string_view>> tokens;
  while (!path.empty()) {
    if (path.front() == '.') {
      path.remove_prefix(1);
      continue;
    }
    size_t close = path.find(']');
    uint64_t index = 0;
    if (path.front() == '[' && close != absl::string_view::npos &&
        absl::SimpleAtoi(path.substr(1, close - 1), &index)) {
      tokens.emplace_back(index);
      path.remove_prefix(close + 1);
      continue;
    }
    size_t end = path.find_first_of(".[", path.front() == '[' ? 1 : 0);
    tokens.emplace_back(path.substr(0, end));
    path.remove_prefix(end == absl::string_view::npos ? path.size() : end);
  }
  return tokens;
}

bool PathLess(const std::string& a, const std::string& b) { return PathTokens(a) < PathTokens(b); }

std::string Quote(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string Show(const FieldDescriptor* field, const std::string& value) {
  if (value.empty() || IsString(field)) return Quote(value);
  // A path the descriptor does not know: quote when the bare text would be ambiguous.
  if (field == nullptr && value.find_first_of(" ;\"\\") != std::string::npos) {
    return Quote(value);
  }
  return value;
}

}  // namespace

std::vector<FieldChange> DiffNamespaceRecords(const NamespaceRecord& before,
                                              const NamespaceRecord& after) {
  std::map<std::string, std::string> a = Fields(before), b = Fields(after);
  std::vector<FieldChange> changes;
  for (const auto& [path, value] : b) {
    auto it = a.find(path);
    std::string old = it == a.end() ? "" : it->second;
    if (old != value) changes.push_back({path, std::move(old), value});
  }
  for (const auto& [path, value] : a) {
    if (!b.contains(path)) changes.push_back({path, value, ""});
  }
  std::sort(changes.begin(), changes.end(),
            [](const FieldChange& x, const FieldChange& y) { return PathLess(x.field, y.field); });
  return changes;
}

std::string SummarizeChanges(const std::vector<FieldChange>& changes) {
  if (changes.empty()) return "no change";
  std::string out;
  for (const FieldChange& c : changes) {
    if (!out.empty()) out += "; ";
    const FieldDescriptor* field = LeafField(c.field);
    absl::StrAppend(&out, c.field, ": ", Show(field, c.before), " -> ", Show(field, c.after));
  }
  return out;
}

}  // namespace tock::admin
