// Reading configuration YAML with errors that name the key: shared by the sections of the
// server configuration (server_config.cc, archival_config.cc).
#pragma once

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tock::server::config_yaml {

// INVALID_ARGUMENT "config <path>: <problem>".
inline absl::Status FieldError(const std::string& path, const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat("config ", path, ": ", problem));
}

// Refuses keys outside `allowed`, so that a typo is an error rather than a silent default.
inline absl::Status CheckKeys(const YAML::Node& node, const std::string& path,
                              const std::set<std::string>& allowed) {
  if (!node.IsMap()) return FieldError(path.empty() ? "(top level)" : path, "must be a mapping");
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    if (!allowed.contains(key)) {
      return FieldError(path.empty() ? key : absl::StrCat(path, ".", key),
                        absl::StrCat("unknown key; allowed: ", absl::StrJoin(allowed, ", ")));
    }
  }
  return absl::OkStatus();
}

// Reads `node` (when present) into `out`; a value of the wrong type names `what` it must be.
template <typename T>
absl::Status Read(const YAML::Node& node, const std::string& path, const char* what, T* out) {
  if (!node) return absl::OkStatus();
  try {
    *out = node.as<T>();
  } catch (const YAML::Exception&) {
    return FieldError(path, absl::StrCat("must be ", what));
  }
  return absl::OkStatus();
}

}  // namespace tock::server::config_yaml

#define TOCK_CONFIG_RETURN_IF_ERROR(expr)              \
  do {                                                 \
    if (absl::Status _s = (expr); !_s.ok()) return _s; \
  } while (0)
