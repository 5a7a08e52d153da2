#include "lib/common/json_flatten.h"

namespace tock {
namespace {

void Flatten(const nlohmann::json& json, const std::string& path,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (json.is_object()) {
    for (const auto& [key, value] : json.items()) {
      Flatten(value, path.empty() ? key : path + "." + key, out);
    }
  } else if (json.is_array()) {
    for (size_t i = 0; i < json.size(); ++i) {
      Flatten(json[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else if (json.is_string()) {
    out.emplace_back(path, json.get<std::string>());
  } else if (!json.is_null()) {
    out.emplace_back(path, json.dump());
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> FlattenJson(const nlohmann::json& json) {
  std::vector<std::pair<std::string, std::string>> out;
  Flatten(json, "", out);
  return out;
}

}  // namespace tock
