#include "server-core/visibility/search_attributes.h"

#include <variant>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "lib/common/time_format.h"
#include "nlohmann/json.hpp"

namespace tock::server::visibility {
namespace {

namespace enums = temporal::api::enums::v1;
using persistence::CustomColumn;
using persistence::CustomType;

// Temporal's field prefixes, by persistence::CustomType.
constexpr const char* kFieldPrefixes[persistence::kCustomTypes] = {
    "Keyword", "Text", "Int", "Double", "Bool", "Datetime", "KeywordList"};

// A name or value quoted in a message: at most this many bytes of it.
constexpr size_t kQuotedLimit = 100;

std::string Quoted(absl::string_view text) {
  if (text.size() <= kQuotedLimit) return std::string(text);
  return absl::StrCat(text.substr(0, kQuotedLimit), "...");
}

// A JSON value as Go's %v prints the decoded value (Temporal's messages): strings bare,
// arrays as [a b], cut to kQuotedLimit.
std::string GoValue(const nlohmann::json& value) {
  if (value.is_string()) return Quoted(value.get<std::string>());
  if (value.is_array()) {
    std::vector<std::string> items;
    for (const auto& item : value) {
      items.push_back(item.is_string() ? item.get<std::string>() : item.dump());
    }
    return Quoted(absl::StrCat("[", absl::StrJoin(items, " "), "]"));
  }
  if (value.is_null()) return "<nil>";
  return Quoted(value.dump());
}

// The value a custom column holds for `value` of `type`; nullopt when it does not fit.
std::optional<persistence::VisibilityValue> Scalar(const nlohmann::json& value, CustomType type) {
  switch (type) {
    case CustomType::kKeyword:
      if (value.is_string()) return value.get<std::string>();
      break;
    case CustomType::kText:
      if (value.is_string()) return persistence::NormalizeText(value.get<std::string>());
      break;
    case CustomType::kInt:
      if (value.is_number_integer()) return value.get<int64_t>();
      if (value.is_number_float()) {
        const double d = value.get<double>();
        if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
      }
      break;
    case CustomType::kDouble:
      if (value.is_number()) return value.get<double>();
      break;
    case CustomType::kBool:
      if (value.is_boolean()) return int64_t{value.get<bool>() ? 1 : 0};
      break;
    case CustomType::kDatetime:
      if (value.is_string()) {
        absl::StatusOr<absl::Time> t =
            ParseTimestamp(value.get<std::string>(), absl::InfinitePast());
        if (t.ok() && value.get<std::string>() != "now") return absl::ToUnixNanos(*t);
      }
      break;
    case CustomType::kKeywordList:
      break;  // see Decode
  }
  return std::nullopt;
}

enum class Decoded { kValue, kUnset, kInvalid };

// Decodes a payload for a column of `type` into `out` (a KeywordList: the JSON array text).
Decoded Decode(const temporal::api::common::v1::Payload& payload, CustomType type,
               persistence::VisibilityValue* out, nlohmann::json* parsed) {
  auto encoding = payload.metadata().find("encoding");
  if (encoding != payload.metadata().end() && encoding->second == "binary/null") {
    return Decoded::kUnset;
  }
  *parsed = nlohmann::json::parse(payload.data(), nullptr, false);
  if (parsed->is_discarded()) return Decoded::kInvalid;
  const nlohmann::json& v = *parsed;
  if (v.is_null()) return Decoded::kUnset;
  if (type == CustomType::kKeywordList) {
    nlohmann::json list = v.is_string() ? nlohmann::json::array({v}) : v;
    if (!list.is_array()) return Decoded::kInvalid;
    for (const auto& item : list) {
      if (!item.is_string()) return Decoded::kInvalid;
    }
    if (list.empty()) return Decoded::kUnset;
    *out = list.dump();
    return Decoded::kValue;
  }
  if (v.is_array()) {
    if (v.empty()) return Decoded::kUnset;
    if (v.size() > 1) return Decoded::kInvalid;
    std::optional<persistence::VisibilityValue> scalar = Scalar(v[0], type);
    if (!scalar) return Decoded::kInvalid;
    *out = std::move(*scalar);
    return Decoded::kValue;
  }
  std::optional<persistence::VisibilityValue> scalar = Scalar(v, type);
  if (!scalar) return Decoded::kInvalid;
  *out = std::move(*scalar);
  return Decoded::kValue;
}

}  // namespace

std::string TypeName(IndexedValueType type) {
  switch (type) {
    case enums::INDEXED_VALUE_TYPE_TEXT:
      return "Text";
    case enums::INDEXED_VALUE_TYPE_KEYWORD:
      return "Keyword";
    case enums::INDEXED_VALUE_TYPE_INT:
      return "Int";
    case enums::INDEXED_VALUE_TYPE_DOUBLE:
      return "Double";
    case enums::INDEXED_VALUE_TYPE_BOOL:
      return "Bool";
    case enums::INDEXED_VALUE_TYPE_DATETIME:
      return "Datetime";
    case enums::INDEXED_VALUE_TYPE_KEYWORD_LIST:
      return "KeywordList";
    default:
      return "Unspecified";
  }
}

std::optional<CustomType> CustomTypeOf(IndexedValueType type) {
  switch (type) {
    case enums::INDEXED_VALUE_TYPE_TEXT:
      return CustomType::kText;
    case enums::INDEXED_VALUE_TYPE_KEYWORD:
      return CustomType::kKeyword;
    case enums::INDEXED_VALUE_TYPE_INT:
      return CustomType::kInt;
    case enums::INDEXED_VALUE_TYPE_DOUBLE:
      return CustomType::kDouble;
    case enums::INDEXED_VALUE_TYPE_BOOL:
      return CustomType::kBool;
    case enums::INDEXED_VALUE_TYPE_DATETIME:
      return CustomType::kDatetime;
    case enums::INDEXED_VALUE_TYPE_KEYWORD_LIST:
      return CustomType::kKeywordList;
    default:
      return std::nullopt;
  }
}

IndexedValueType ApiTypeOf(CustomType type) {
  switch (type) {
    case CustomType::kKeyword:
      return enums::INDEXED_VALUE_TYPE_KEYWORD;
    case CustomType::kText:
      return enums::INDEXED_VALUE_TYPE_TEXT;
    case CustomType::kInt:
      return enums::INDEXED_VALUE_TYPE_INT;
    case CustomType::kDouble:
      return enums::INDEXED_VALUE_TYPE_DOUBLE;
    case CustomType::kBool:
      return enums::INDEXED_VALUE_TYPE_BOOL;
    case CustomType::kDatetime:
      return enums::INDEXED_VALUE_TYPE_DATETIME;
    case CustomType::kKeywordList:
      return enums::INDEXED_VALUE_TYPE_KEYWORD_LIST;
  }
  return enums::INDEXED_VALUE_TYPE_UNSPECIFIED;
}

std::string FieldName(const CustomColumn& column) {
  return absl::StrFormat("%s%02d", kFieldPrefixes[static_cast<int>(column.type)], column.slot);
}

std::optional<CustomColumn> ColumnOfField(absl::string_view field) {
  // Longest prefix first: "KeywordList01" is not "Keyword" + "List01".
  for (int t = persistence::kCustomTypes - 1; t >= 0; --t) {
    const absl::string_view prefix = kFieldPrefixes[t];
    if (!absl::StartsWith(field, prefix)) continue;
    const absl::string_view digits = field.substr(prefix.size());
    int slot = 0;
    if (digits.size() == 2 && absl::SimpleAtoi(digits, &slot) && slot >= 1 &&
        slot <= persistence::kCustomSlots[t] && FieldName({static_cast<CustomType>(t), slot}) == field) {
      return CustomColumn{static_cast<CustomType>(t), slot};
    }
  }
  return std::nullopt;
}

const std::map<std::string, IndexedValueType, std::less<>>& SystemSearchAttributes() {
  static const auto* names = new std::map<std::string, IndexedValueType, std::less<>>{
      {"WorkflowId", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"RunId", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"WorkflowType", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"StartTime", enums::INDEXED_VALUE_TYPE_DATETIME},
      {"ExecutionTime", enums::INDEXED_VALUE_TYPE_DATETIME},
      {"CloseTime", enums::INDEXED_VALUE_TYPE_DATETIME},
      {"ExecutionStatus", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"TaskQueue", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"HistoryLength", enums::INDEXED_VALUE_TYPE_INT},
      {"HistorySizeBytes", enums::INDEXED_VALUE_TYPE_INT},
      {"ExecutionDuration", enums::INDEXED_VALUE_TYPE_INT},
      {"StateTransitionCount", enums::INDEXED_VALUE_TYPE_INT},
      {"TemporalNamespaceDivision", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"ParentWorkflowId", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"ParentRunId", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"RootWorkflowId", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"RootRunId", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"TemporalWorkerDeployment", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"TemporalWorkerDeploymentVersion", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"TemporalWorkflowVersioningBehavior", enums::INDEXED_VALUE_TYPE_KEYWORD},
  };
  return *names;
}

const std::map<std::string, IndexedValueType, std::less<>>& PredefinedSearchAttributes() {
  static const auto* names = new std::map<std::string, IndexedValueType, std::less<>>{
      {"TemporalChangeVersion", enums::INDEXED_VALUE_TYPE_KEYWORD_LIST},
      {"BinaryChecksums", enums::INDEXED_VALUE_TYPE_KEYWORD_LIST},
      {"BuildIds", enums::INDEXED_VALUE_TYPE_KEYWORD_LIST},
      {"BatcherNamespace", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"BatcherUser", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"TemporalScheduledStartTime", enums::INDEXED_VALUE_TYPE_DATETIME},
      {"TemporalScheduledById", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"TemporalSchedulePaused", enums::INDEXED_VALUE_TYPE_BOOL},
  };
  return *names;
}

bool IsReservedSearchAttribute(absl::string_view name) {
  return SystemSearchAttributes().contains(name) || PredefinedSearchAttributes().contains(name) ||
         absl::StartsWith(name, "Temporal");
}

SearchAttributeSchema::SearchAttributeSchema(
    const google::protobuf::Map<std::string, std::string>& aliases) {
  for (const auto& [field, alias] : aliases) {
    std::optional<CustomColumn> column = ColumnOfField(field);
    if (!column || alias.empty()) continue;
    custom_[alias] = Attribute{*column, ApiTypeOf(column->type)};
  }
}

const SearchAttributeSchema::Attribute* SearchAttributeSchema::Find(absl::string_view alias) const {
  auto it = custom_.find(alias);
  return it == custom_.end() ? nullptr : &it->second;
}

absl::Status CheckSearchAttributes(const temporal::api::common::v1::SearchAttributes& attributes,
                                   const SearchAttributeSchema& schema) {
  for (const auto& [name, value] : attributes.indexed_fields()) {
    if (SystemSearchAttributes().contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Quoted(name), " attribute can't be set in SearchAttributes"));
    }
    const SearchAttributeSchema::Attribute* custom = schema.Find(name);
    if (custom == nullptr) {
      if (PredefinedSearchAttributes().contains(name)) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("search attribute ", Quoted(name), " is not defined"));
    }
    persistence::VisibilityValue decoded;
    nlohmann::json parsed;
    if (Decode(value, custom->column.type, &decoded, &parsed) == Decoded::kInvalid) {
      const std::string shown = parsed.is_discarded()
                                    ? absl::StrCat("value from <", Quoted(value.data()), ">")
                                    : GoValue(parsed);
      return absl::InvalidArgumentError(absl::StrCat("invalid value for search attribute ",
                                                     Quoted(name), " of type ",
                                                     TypeName(custom->type), ": ", shown));
    }
  }
  return absl::OkStatus();
}

std::vector<persistence::CustomValue> IndexedValues(
    const temporal::api::common::v1::SearchAttributes& attributes,
    const SearchAttributeSchema& schema) {
  std::vector<persistence::CustomValue> out;
  for (const auto& [name, value] : attributes.indexed_fields()) {
    const SearchAttributeSchema::Attribute* custom = schema.Find(name);
    if (custom == nullptr) continue;
    persistence::VisibilityValue decoded;
    nlohmann::json parsed;
    if (Decode(value, custom->column.type, &decoded, &parsed) != Decoded::kValue) continue;
    out.push_back({custom->column, std::move(decoded)});
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> VersioningValues(
    const temporal::api::common::v1::SearchAttributes& attributes) {
  using persistence::VisibilityField;
  static const std::pair<const char*, VisibilityField> kNames[] = {
      {"TemporalWorkerDeployment", VisibilityField::kWorkerDeployment},
      {"TemporalWorkerDeploymentVersion", VisibilityField::kWorkerDeploymentVersion},
      {"TemporalWorkflowVersioningBehavior", VisibilityField::kVersioningBehavior}};
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, field] : kNames) {
    auto it = attributes.indexed_fields().find(name);
    if (it == attributes.indexed_fields().end()) continue;
    persistence::VisibilityValue decoded;
    nlohmann::json parsed;
    if (Decode(it->second, CustomType::kKeyword, &decoded, &parsed) != Decoded::kValue) continue;
    out.emplace_back(persistence::VisibilityColumn(field, {}), std::get<std::string>(decoded));
  }
  return out;
}

}  // namespace tock::server::visibility
