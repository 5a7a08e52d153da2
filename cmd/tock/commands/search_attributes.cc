#include "cmd/tock/commands/search_attributes.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/admin/payloads.h"

namespace tock::cli {
namespace {

namespace enums = temporal::api::enums::v1;

const std::vector<std::pair<std::string, enums::IndexedValueType>>& Types() {
  static const auto* types = new std::vector<std::pair<std::string, enums::IndexedValueType>>{
      {"Keyword", enums::INDEXED_VALUE_TYPE_KEYWORD},
      {"Text", enums::INDEXED_VALUE_TYPE_TEXT},
      {"Int", enums::INDEXED_VALUE_TYPE_INT},
      {"Double", enums::INDEXED_VALUE_TYPE_DOUBLE},
      {"Bool", enums::INDEXED_VALUE_TYPE_BOOL},
      {"Datetime", enums::INDEXED_VALUE_TYPE_DATETIME},
      {"KeywordList", enums::INDEXED_VALUE_TYPE_KEYWORD_LIST},
  };
  return *types;
}

constexpr char kFlag[] = "--search-attribute";

}  // namespace

const std::vector<std::string>& SearchAttributeTypeNames() {
  static const auto* names = [] {
    auto* out = new std::vector<std::string>;
    for (const auto& [name, type] : Types()) out->push_back(name);
    return out;
  }();
  return *names;
}

absl::StatusOr<enums::IndexedValueType> ParseSearchAttributeType(const std::string& text) {
  for (const auto& [name, type] : Types()) {
    if (absl::EqualsIgnoreCase(name, text)) return type;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown search attribute type \"", text,
                   "\"; allowed: ", absl::StrJoin(SearchAttributeTypeNames(), ", ")));
}

std::string SearchAttributeTypeName(enums::IndexedValueType type) {
  for (const auto& [name, t] : Types()) {
    if (t == type) return name;
  }
  return enums::IndexedValueType_Name(type);
}

CLI::Validator SearchAttributeTypeCheck() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        absl::StatusOr<enums::IndexedValueType> type = ParseSearchAttributeType(input);
        if (!type.ok()) return std::string(type.status().message());
        input = SearchAttributeTypeName(*type);
        return "";
      },
      "{" + absl::StrJoin(SearchAttributeTypeNames(), ",") + "}");
}

absl::StatusOr<temporal::api::common::v1::SearchAttributes> ParseSearchAttributeFlags(
    const std::vector<std::string>& words) {
  temporal::api::common::v1::SearchAttributes out;
  std::set<std::string> seen;
  for (const std::string& word : words) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid ", kFlag, " \"", word,
          "\": use NAME=VALUE, the value as JSON or plain text (CustomerId=c-42, Amount=42, "
          "Tags='[\"a\",\"b\"]')"));
    }
    const std::string name = word.substr(0, eq);
    const std::string text = word.substr(eq + 1);
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat(kFlag, " ", name, " is given more than once"));
    }
    // JSON when it parses ('"c-42"', 42, true, ["a"]), else the text itself as a string.
    nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
    if (value.is_discarded()) value = text;
    temporal::api::common::v1::Payload payload;
    (*payload.mutable_metadata())["encoding"] = "json/plain";
    try {
      payload.set_data(value.dump());
    } catch (const nlohmann::json::exception&) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid ", kFlag, " ", name, ": the value is not valid UTF-8"));
    }
    (*out.mutable_indexed_fields())[name] = std::move(payload);
  }
  return out;
}

std::string SearchAttributesText(const temporal::api::common::v1::SearchAttributes& attributes) {
  std::map<std::string, std::string> sorted;
  for (const auto& [name, payload] : attributes.indexed_fields()) {
    sorted[name] = admin::DecodePayload(payload).dump();
  }
  std::vector<std::string> parts;
  for (const auto& [name, value] : sorted) parts.push_back(absl::StrCat(name, "=", value));
  return absl::StrJoin(parts, ", ");
}

}  // namespace tock::cli
