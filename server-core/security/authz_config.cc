#include "server-core/security/authz_config.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/duration.h"
#include "server-core/config/yaml_fields.h"

namespace tock::server::security {
namespace {

using config_yaml::CheckKeys;
using config_yaml::FieldError;
using config_yaml::Read;

absl::Status ReadString(const YAML::Node& node, const std::string& path, std::string* out) {
  if (!node) return absl::OkStatus();
  if (!node.IsScalar()) return FieldError(path, "must be a string");
  TOCK_CONFIG_RETURN_IF_ERROR(Read(node, path, "a string", out));
  if (out->size() > AuthorizationConfig::kMaxStringBytes) {
    return FieldError(path, absl::StrCat("must be at most ", AuthorizationConfig::kMaxStringBytes,
                                         " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

bool AuthorizationConfig::JwksIsUrl() const {
  return absl::StartsWithIgnoreCase(jwks, "http://") || absl::StartsWithIgnoreCase(jwks, "https://");
}

absl::Status ParseAuthorizationConfig(const YAML::Node& node,
                                      std::optional<AuthorizationConfig>* out) {
  if (!node) return absl::OkStatus();
  const std::string p = "authorization";
  TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(node, p,
                                        {"jwks", "jwks_refresh", "issuer", "audience",
                                         "permissions_claim", "subjects",
                                         "plaintext_host_calls"}));
  AuthorizationConfig config;
  TOCK_CONFIG_RETURN_IF_ERROR(ReadString(node["jwks"], p + ".jwks", &config.jwks));
  TOCK_CONFIG_RETURN_IF_ERROR(ReadString(node["issuer"], p + ".issuer", &config.issuer));
  TOCK_CONFIG_RETURN_IF_ERROR(ReadString(node["audience"], p + ".audience", &config.audience));
  TOCK_CONFIG_RETURN_IF_ERROR(
      ReadString(node["permissions_claim"], p + ".permissions_claim", &config.permissions_claim));
  TOCK_CONFIG_RETURN_IF_ERROR(Read(node["plaintext_host_calls"], p + ".plaintext_host_calls",
                                   "true or false", &config.plaintext_host_calls));
  if (config.permissions_claim.empty()) {
    return FieldError(p + ".permissions_claim", "must not be empty");
  }
  if (const YAML::Node refresh = node["jwks_refresh"]) {
    std::string text;
    TOCK_CONFIG_RETURN_IF_ERROR(ReadString(refresh, p + ".jwks_refresh", &text));
    absl::StatusOr<absl::Duration> d = ParseHumanDuration(text);
    if (!d.ok() || *d < absl::Seconds(10) || *d > absl::Hours(24)) {
      return FieldError(p + ".jwks_refresh", "must be a duration from 10s to 24h, such as 5m");
    }
    config.jwks_refresh = *d;
  }
  if (const YAML::Node subjects = node["subjects"]) {
    if (!subjects.IsMap()) {
      return FieldError(p + ".subjects",
                        "must be a mapping of certificate subjects to lists of permissions");
    }
    if (subjects.size() > AuthorizationConfig::kMaxSubjects) {
      return FieldError(p + ".subjects",
                        absl::StrCat("at most ", AuthorizationConfig::kMaxSubjects, " subjects"));
    }
    for (const auto& entry : subjects) {
      std::string subject;
      TOCK_CONFIG_RETURN_IF_ERROR(ReadString(entry.first, p + ".subjects", &subject));
      const std::string sp = absl::StrCat(p, ".subjects[\"", subject, "\"]");
      if (subject.empty()) return FieldError(p + ".subjects", "a subject must not be empty");
      if (!entry.second.IsSequence() ||
          entry.second.size() > AuthorizationConfig::kMaxPermissionsPerSubject) {
        return FieldError(sp, absl::StrCat("must be a list of at most ",
                                           AuthorizationConfig::kMaxPermissionsPerSubject,
                                           " permissions such as orders:worker"));
      }
      std::vector<std::string>& permissions = config.subjects[subject];
      for (const auto& item : entry.second) {
        std::string permission;
        TOCK_CONFIG_RETURN_IF_ERROR(ReadString(item, sp, &permission));
        // Unlike a token's claim (which may hold other applications' entries), the config
        // is ours: an entry that grants nothing is a mistake.
        const size_t colon = permission.rfind(':');
        const std::string role = colon == std::string::npos ? "" : permission.substr(colon + 1);
        if (colon == std::string::npos || colon == 0 ||
            (role != "read" && role != "worker" && role != "write" && role != "admin")) {
          return FieldError(sp, absl::StrCat("\"", permission,
                                             "\" is not NAMESPACE:read|worker|write|admin"));
        }
        permissions.push_back(permission);
      }
    }
  }
  if (config.jwks.empty() && config.subjects.empty()) {
    return FieldError(p, "needs jwks (to accept tokens) or subjects (client certificates)");
  }
  *out = std::move(config);
  return absl::OkStatus();
}

}  // namespace tock::server::security
