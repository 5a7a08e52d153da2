// Flattens a JSON document into (dotted path, scalar) pairs, for card output and diffs:
//   {"config": {"retention": "3d"}, "clusters": [{"name": "a"}]}
//   -> config.retention = 3d, clusters[0].name = a
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tock {

// Ordered as in the document (nlohmann orders object keys alphabetically). Strings are
// unquoted; empty objects and arrays produce nothing.
std::vector<std::pair<std::string, std::string>> FlattenJson(const nlohmann::json& json);

}  // namespace tock
