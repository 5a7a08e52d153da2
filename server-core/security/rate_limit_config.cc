#include "server-core/security/rate_limit_config.h"

#include "absl/strings/str_cat.h"
#include "lib/common/status.h"
#include "server-core/config/yaml_fields.h"

namespace tock::server::security {
namespace {

using config_yaml::FieldError;

absl::Status ReadRate(const YAML::Node& node, const std::string& path, int64_t* out) {
  if (!node) return absl::OkStatus();  // absent: the default stays
  int64_t value = 0;
  TOCK_CONFIG_RETURN_IF_ERROR(config_yaml::Read(node, path, "an integer (requests per second)", &value));
  if (value < 0 || value > RateLimitConfig::kMaxRps) {
    return FieldError(path, absl::StrCat("must be between 0 (no limit) and ",
                                         RateLimitConfig::kMaxRps, " requests per second; got ",
                                         value));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ReadOverrides(const YAML::Node& node, const std::string& path,
                           std::map<std::string, int64_t>& out) {
  if (!node.IsMap()) {
    return FieldError(path, "must be a mapping of namespace name to requests per second, "
                            "e.g. {orders: 100}");
  }
  if (node.size() > RateLimitConfig::kMaxOverrides) {
    return FieldError(path, absl::StrCat("lists ", node.size(), " namespaces; at most ",
                                         RateLimitConfig::kMaxOverrides));
  }
  for (const auto& entry : node) {
    std::string name;
    try {
      name = entry.first.as<std::string>();
    } catch (const YAML::Exception&) {
      return FieldError(path, "has a key that is not a namespace name");
    }
    if (name.empty() || name.size() > kMaxNamespaceNameLength) {
      return FieldError(path, absl::StrCat("has a namespace name of ", name.size(),
                                           " characters; names have 1 to ",
                                           kMaxNamespaceNameLength));
    }
    int64_t rate = 0;
    TOCK_CONFIG_RETURN_IF_ERROR(ReadRate(entry.second, absl::StrCat(path, ".", name), &rate));
    out[name] = rate;
  }
  return absl::OkStatus();
}

}  // namespace

std::string RateLimitConfig::Summary() const {
  auto rate = [](int64_t r) { return r == 0 ? std::string("no limit") : absl::StrCat(r); };
  std::set<std::string> overridden;
  for (const auto& [name, _] : namespace_rps_overrides) overridden.insert(name);
  for (const auto& [name, _] : namespace_poll_rps_overrides) overridden.insert(name);
  return absl::StrCat(rate(frontend_rps), " calls/s and ", rate(frontend_poll_rps),
                      " polls/s per host, ", rate(namespace_rps), " and ", rate(namespace_poll_rps),
                      " per namespace, ", overridden.size(),
                      overridden.size() == 1 ? " namespace" : " namespaces", " overridden");
}

const std::set<std::string>& RateLimitConfig::Keys() {
  static const auto* keys = new std::set<std::string>{
      "frontend_rps",  "frontend_poll_rps",       "namespace_rps",
      "namespace_poll_rps", "namespace_rps_overrides", "namespace_poll_rps_overrides"};
  return *keys;
}

absl::Status ParseRateLimits(const YAML::Node& limits, RateLimitConfig& out) {
  if (!limits || !limits.IsMap()) return absl::OkStatus();
  for (const std::string& key : RateLimitConfig::Keys()) {
    if (limits[key]) out.enabled = true;
  }
  if (!out.enabled) return absl::OkStatus();
  TOCK_CONFIG_RETURN_IF_ERROR(
      ReadRate(limits["frontend_rps"], "limits.frontend_rps", &out.frontend_rps));
  TOCK_CONFIG_RETURN_IF_ERROR(
      ReadRate(limits["namespace_rps"], "limits.namespace_rps", &out.namespace_rps));
  // A poll limit not given follows its call limit.
  out.frontend_poll_rps = out.frontend_rps;
  out.namespace_poll_rps = out.namespace_rps;
  TOCK_CONFIG_RETURN_IF_ERROR(
      ReadRate(limits["frontend_poll_rps"], "limits.frontend_poll_rps", &out.frontend_poll_rps));
  TOCK_CONFIG_RETURN_IF_ERROR(ReadRate(limits["namespace_poll_rps"], "limits.namespace_poll_rps",
                                       &out.namespace_poll_rps));
  if (const YAML::Node n = limits["namespace_rps_overrides"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(
        ReadOverrides(n, "limits.namespace_rps_overrides", out.namespace_rps_overrides));
  }
  if (const YAML::Node n = limits["namespace_poll_rps_overrides"]) {
    TOCK_CONFIG_RETURN_IF_ERROR(ReadOverrides(n, "limits.namespace_poll_rps_overrides",
                                              out.namespace_poll_rps_overrides));
  }
  return absl::OkStatus();
}

}  // namespace tock::server::security
