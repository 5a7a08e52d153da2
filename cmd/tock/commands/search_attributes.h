// Search attributes as operators type and read them: the type names of
// `tock operator search-attribute create --type` and the NAME=VALUE words of
// `tock workflow start --search-attribute`. Pure functions, no server.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "temporal/api/common/v1/message.pb.h"
#include "temporal/api/enums/v1/common.pb.h"

namespace tock::cli {

// "Keyword", "Text", "Int", "Double", "Bool", "Datetime", "KeywordList": Temporal's
// shorthand of temporal.api.enums.v1.IndexedValueType, in that order.
const std::vector<std::string>& SearchAttributeTypeNames();

// The type named `text`, case-insensitively ("keyword", "KEYWORDLIST"); INVALID_ARGUMENT
// naming the allowed types otherwise.
absl::StatusOr<temporal::api::enums::v1::IndexedValueType> ParseSearchAttributeType(
    const std::string& text);

// "Keyword" for INDEXED_VALUE_TYPE_KEYWORD; the enum's own name for a value without a
// shorthand (a newer server's type).
std::string SearchAttributeTypeName(temporal::api::enums::v1::IndexedValueType type);

// The CLI11 check of --type: accepts a type name in any case and rewrites it to its
// canonical spelling. Its description is the set ("{Keyword,Text,...}"), so help, man pages
// and completion list the types.
CLI::Validator SearchAttributeTypeCheck();

// The --search-attribute words, NAME=VALUE each: VALUE is JSON ('"c-42"', 42, true,
// '["a","b"]'), or, when it does not parse as JSON, a plain string (CustomerId=c-42). Each
// becomes a "json/plain" payload of the compact JSON text, as the Temporal CLI sends it.
// INVALID_ARGUMENT naming the flag for a word without '=' or with an empty name, and for a
// name given twice.
absl::StatusOr<temporal::api::common::v1::SearchAttributes> ParseSearchAttributeFlags(
    const std::vector<std::string>& words);

// `Amount=42, CustomerId="c-42"`: the attributes sorted by name, values decoded as JSON.
std::string SearchAttributesText(const temporal::api::common::v1::SearchAttributes& attributes);

}  // namespace tock::cli
