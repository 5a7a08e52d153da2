// Custom search attributes of a namespace, as Temporal's OperatorService manages them on SQL
// visibility: the namespace config's custom_search_attribute_aliases maps a pre-allocated
// field ("Keyword01") to the attribute's name; adding takes the first free field of the
// type, removing frees it. Each change is a new namespace version ("add-search-attributes",
// "remove-search-attributes"), so `tock namespace history` shows it.
#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "server-core/namespaces/namespace_engine.h"
#include "server-core/namespaces/namespace_name.h"
#include "server-core/persistence/read_retry.h"

namespace tock::server::namespaces {
namespace {

namespace enums = temporal::api::enums::v1;
using visibility::IndexedValueType;

// A name the query language can write bare (a word) and a message can quote whole.
constexpr size_t kMaxNameBytes = 64;

absl::Status CheckName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= kMaxNameBytes &&
            (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (const char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (ok) return absl::OkStatus();
  const std::string shown =
      name.size() <= kMaxNameBytes ? name : name.substr(0, kMaxNameBytes) + "...";
  return absl::InvalidArgumentError(
      absl::StrCat("Search attribute name ", shown, " is invalid: use 1 to ", kMaxNameBytes,
                   " letters, digits and underscores, starting with a letter or underscore."));
}

absl::Status NamespaceNotSet() {
  return absl::InvalidArgumentError("Namespace is not set on request.");
}

}  // namespace

absl::Status NamespaceEngine::ChangeSearchAttributes(
    const std::string& namespace_name, const std::string& operation,
    const std::function<absl::Status(persistence::NamespaceRecord&)>& change) {
  if (absl::Status s = ValidateNamespaceName(namespace_name); !s.ok()) return s;
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<persistence::NamespaceVersion> current =
        persistence::ReadWithRetries([&] { return store_.GetNamespaceByName(namespace_name); });
    if (!current.ok()) return current.status();
    persistence::NamespaceRecord record = current->record;
    auto& aliases = *record.mutable_config()->mutable_custom_search_attribute_aliases();
    const google::protobuf::Map<std::string, std::string> before = aliases;
    // Fields given out before the used list existed count as used too.
    auto& used = *record.mutable_used_search_attribute_fields();
    for (const auto& [field, alias] : aliases) {
      if (!alias.empty() && std::find(used.begin(), used.end(), field) == used.end()) {
        *used.Add() = field;
      }
    }
    if (absl::Status s = change(record); !s.ok()) return s;
    if (aliases.size() == before.size() &&
        std::all_of(aliases.begin(), aliases.end(), [&](const auto& entry) {
          auto it = before.find(entry.first);
          return it != before.end() && it->second == entry.second;
        })) {
      return absl::OkStatus();  // nothing to change: no new version
    }
    record.set_config_version(record.config_version() + 1);
    absl::StatusOr<persistence::NamespaceVersion> appended =
        Append(*current, std::move(record), operation);
    if (appended.ok()) return absl::OkStatus();
    if (appended.status().code() != absl::StatusCode::kAborted || attempt >= 20) {
      return appended.status();
    }
  }
}

absl::StatusOr<op::AddSearchAttributesResponse> NamespaceEngine::AddSearchAttributes(
    const op::AddSearchAttributesRequest& req) {
  if (req.search_attributes().empty()) {
    return absl::InvalidArgumentError("SearchAttributes are not set on request.");
  }
  for (const auto& [name, type] : req.search_attributes()) {
    if (visibility::IsReservedSearchAttribute(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Search attribute ", name, " is reserved by system."));
    }
    if (absl::Status s = CheckName(name); !s.ok()) return s;
    if (!visibility::CustomTypeOf(static_cast<IndexedValueType>(type)).has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Unknown search attribute type: ", static_cast<int>(type), "."));
    }
  }
  if (req.namespace_().empty()) return NamespaceNotSet();
  absl::Status s = ChangeSearchAttributes(
      req.namespace_(), "add-search-attributes",
      [&req](persistence::NamespaceRecord& record) -> absl::Status {
        auto& aliases = *record.mutable_config()->mutable_custom_search_attribute_aliases();
        auto& used = *record.mutable_used_search_attribute_fields();
        // In name order, so that which field an attribute gets does not depend on the map's
        // iteration order.
        std::map<std::string, IndexedValueType> wanted;
        for (const auto& [name, type] : req.search_attributes()) {
          wanted[name] = static_cast<IndexedValueType>(type);
        }
        for (const auto& [name, type] : wanted) {
          const visibility::SearchAttributeSchema schema(aliases);
          if (const auto* existing = schema.Find(name)) {
            if (existing->type == type) continue;  // added before: nothing to do
            return absl::InvalidArgumentError(
                absl::StrCat("Search attribute ", name, " already exists."));
          }
          const persistence::CustomType column_type = *visibility::CustomTypeOf(type);
          const int slots = persistence::kCustomSlots[static_cast<int>(column_type)];
          // A free field never used first (its column holds no old run's value), then any
          // free one.
          std::string chosen;
          int taken = 0;
          for (int slot = 1; slot <= slots; ++slot) {
            const std::string field = visibility::FieldName({column_type, slot});
            auto it = aliases.find(field);
            if (it != aliases.end() && !it->second.empty()) {
              ++taken;
              continue;
            }
            const bool fresh = std::find(used.begin(), used.end(), field) == used.end();
            if (chosen.empty() || fresh) chosen = field;
            if (fresh) break;
          }
          if (taken == slots) {
            return absl::InvalidArgumentError(
                absl::StrCat("Unable to create search attributes: cannot have more than ", slots,
                             " search attribute of type ", visibility::TypeName(type), "."));
          }
          aliases[chosen] = name;
          if (std::find(used.begin(), used.end(), chosen) == used.end()) *used.Add() = chosen;
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return op::AddSearchAttributesResponse();
}

absl::StatusOr<op::RemoveSearchAttributesResponse> NamespaceEngine::RemoveSearchAttributes(
    const op::RemoveSearchAttributesRequest& req) {
  if (req.search_attributes().empty()) {
    return absl::InvalidArgumentError("SearchAttributes are not set on request.");
  }
  if (req.namespace_().empty()) return NamespaceNotSet();
  absl::Status s = ChangeSearchAttributes(
      req.namespace_(), "remove-search-attributes",
      [&req](persistence::NamespaceRecord& record) -> absl::Status {
        auto& aliases = *record.mutable_config()->mutable_custom_search_attribute_aliases();
        for (const std::string& name : req.search_attributes()) {
          auto it = std::find_if(aliases.begin(), aliases.end(),
                                 [&](const auto& entry) { return entry.second == name; });
          if (it != aliases.end()) {
            aliases.erase(it);
            continue;
          }
          if (visibility::SystemSearchAttributes().contains(name) ||
              visibility::PredefinedSearchAttributes().contains(name)) {
            return absl::InvalidArgumentError(
                absl::StrCat("Unable to remove non-custom search attributes: ", name, "."));
          }
          const std::string shown =
              name.size() <= kMaxNameBytes ? name : name.substr(0, kMaxNameBytes) + "...";
          return absl::NotFoundError(absl::StrCat("Search attribute ", shown, " doesn't exist."));
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return op::RemoveSearchAttributesResponse();
}

absl::StatusOr<op::ListSearchAttributesResponse> NamespaceEngine::ListSearchAttributes(
    const op::ListSearchAttributesRequest& req) {
  if (req.namespace_().empty()) return NamespaceNotSet();
  if (absl::Status s = ValidateNamespaceName(req.namespace_()); !s.ok()) return s;
  absl::StatusOr<persistence::NamespaceVersion> current =
      persistence::ReadWithRetries([&] { return store_.GetNamespaceByName(req.namespace_()); });
  if (!current.ok()) return current.status();
  op::ListSearchAttributesResponse out;
  const visibility::SearchAttributeSchema schema(
      current->record.config().custom_search_attribute_aliases());
  for (const auto& [name, attribute] : schema.custom()) {
    (*out.mutable_custom_attributes())[name] = attribute.type;
  }
  for (const auto* attributes :
       {&visibility::SystemSearchAttributes(), &visibility::PredefinedSearchAttributes()}) {
    for (const auto& [name, type] : *attributes) (*out.mutable_system_attributes())[name] = type;
  }
  return out;
}

std::shared_ptr<const visibility::SearchAttributeSchema> NamespaceEngine::ForNamespaceId(
    const std::string& namespace_id) {
  absl::StatusOr<std::shared_ptr<const visibility::SearchAttributeSchema>> schema =
      SchemaForNamespaceId(namespace_id);
  if (schema.ok()) return *std::move(schema);
  return std::make_shared<const visibility::SearchAttributeSchema>();
}

absl::StatusOr<std::shared_ptr<const visibility::SearchAttributeSchema>>
NamespaceEngine::SchemaForNamespaceId(const std::string& namespace_id) {
  {
    std::lock_guard lock(cache_mu_);
    auto it = schemas_by_id_.find(namespace_id);
    if (it != schemas_by_id_.end() && Fresh(it->second.loaded)) return it->second.schema;
  }
  absl::StatusOr<persistence::NamespaceVersion> ns =
      persistence::ReadWithRetries([&] { return store_.GetNamespaceById(namespace_id); });
  if (!ns.ok()) return ns.status();  // not cached: the next call reads again
  auto schema = std::make_shared<const visibility::SearchAttributeSchema>(
      ns->record.config().custom_search_attribute_aliases());
  std::lock_guard lock(cache_mu_);
  if (schemas_by_id_.size() > 10000) schemas_by_id_.clear();
  schemas_by_id_[namespace_id] = CachedSchema{schema, clock_.Now()};
  return schema;
}

}  // namespace tock::server::namespaces
