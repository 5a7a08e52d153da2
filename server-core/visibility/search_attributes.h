// Search attributes: the system ones (set by the server), the predefined ones an SDK may set,
// and a namespace's custom ones, typed and stored in the visibility table's pre-allocated
// columns (persistence::CustomColumn).
//
// As in Temporal's SQL visibility, a namespace's custom attributes are its config's
// custom_search_attribute_aliases: Temporal's pre-allocated field name ("Keyword01",
// "Int02", "KeywordList03") → the attribute's name (its alias). The field fixes the type and
// the column, so a namespace holds at most persistence::kCustomSlots attributes per type,
// and DescribeNamespace shows the map exactly as Temporal does.
//
// Values arrive as payloads (json/plain, the SDKs' encoding); each type takes:
//   Keyword, Text: a string; Int: an integer; Double: a number; Bool: true or false;
//   Datetime: an RFC 3339 string; KeywordList: an array of strings (or one string).
// A scalar type also takes an array of at most one such value (the SDKs' legacy untyped
// attributes are arrays), and an empty array or a null unsets the attribute.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "server-core/persistence/visibility_store.h"
#include "temporal/api/common/v1/message.pb.h"
#include "temporal/api/enums/v1/common.pb.h"

namespace tock::server::visibility {

using IndexedValueType = temporal::api::enums::v1::IndexedValueType;

// "Keyword", "KeywordList", ... as Temporal's messages name the types.
std::string TypeName(IndexedValueType type);
// The column type of an API type; nullopt for UNSPECIFIED or an unknown number.
std::optional<persistence::CustomType> CustomTypeOf(IndexedValueType type);
IndexedValueType ApiTypeOf(persistence::CustomType type);
// Temporal's pre-allocated field name of a column ("Keyword01"), and back (nullopt for a name
// that is not one).
std::string FieldName(const persistence::CustomColumn& column);
std::optional<persistence::CustomColumn> ColumnOfField(absl::string_view field);

// System attributes (WorkflowId, StartTime, ...): set by the server only.
const std::map<std::string, IndexedValueType, std::less<>>& SystemSearchAttributes();
// Predefined attributes a client may set (TemporalChangeVersion, BuildIds, ...).
const std::map<std::string, IndexedValueType, std::less<>>& PredefinedSearchAttributes();
// Names no custom attribute may take: system, predefined, or starting with "Temporal".
bool IsReservedSearchAttribute(absl::string_view name);

class SearchAttributeSchema {
 public:
  struct Attribute {
    persistence::CustomColumn column;
    IndexedValueType type;
  };

  SearchAttributeSchema() = default;
  // From a NamespaceConfig's custom_search_attribute_aliases (field → alias); entries whose
  // field is not a pre-allocated one, or whose alias is empty, are ignored.
  explicit SearchAttributeSchema(const google::protobuf::Map<std::string, std::string>& aliases);

  // The custom attribute named `alias`, or null.
  const Attribute* Find(absl::string_view alias) const;
  // By name.
  const std::map<std::string, Attribute, std::less<>>& custom() const { return custom_; }

 private:
  std::map<std::string, Attribute, std::less<>> custom_;
};

// Whether each attribute is defined (custom or predefined; a system one is refused) and its
// value fits its type: INVALID_ARGUMENT with Temporal's messages ("search attribute X is not
// defined", "invalid value for search attribute X of type Int: abc", "X attribute can't be
// set in SearchAttributes"). Sizes are checked by the caller (request_limits.h).
absl::Status CheckSearchAttributes(const temporal::api::common::v1::SearchAttributes& attributes,
                                   const SearchAttributeSchema& schema);

// The columns a run's custom attributes fill, for its visibility record. Attributes that are
// not (or no longer) in the schema, unset ones and values that do not decode are left out.
std::vector<persistence::CustomValue> IndexedValues(
    const temporal::api::common::v1::SearchAttributes& attributes,
    const SearchAttributeSchema& schema);

// The run's Worker Deployment attributes (TemporalWorkerDeployment,
// TemporalWorkerDeploymentVersion, TemporalWorkflowVersioningBehavior) as (column, value) for
// their visibility columns (persistence::VersioningColumns); those unset or not a keyword are
// left out.
std::vector<std::pair<std::string, std::string>> VersioningValues(
    const temporal::api::common::v1::SearchAttributes& attributes);

// A namespace's schema by namespace id, for the history engine (which knows ids only).
// Implementations cache; an unknown id gives an empty schema.
class SearchAttributeSchemas {
 public:
  virtual ~SearchAttributeSchemas() = default;
  virtual std::shared_ptr<const SearchAttributeSchema> ForNamespaceId(
      const std::string& namespace_id) = 0;
};

}  // namespace tock::server::visibility
