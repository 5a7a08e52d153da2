#include "server-core/config/archival_config.h"

#include <filesystem>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "absl/strings/match.h"
#include "lib/archival/archival_uri.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server-core/config/yaml_fields.h"

namespace tock::server {
namespace {

using config_yaml::CheckKeys;
using config_yaml::FieldError;
using config_yaml::Read;

// "0666" (octal with the leading 0, as Temporal's configs write it) or a decimal number.
absl::Status ReadMode(const YAML::Node& node, const std::string& path, const char* what,
                      uint32_t& out) {
  if (!node) return absl::OkStatus();
  std::string text;
  if (absl::Status s = Read(node, path, "a mode such as \"0644\"", &text); !s.ok()) return s;
  char* end = nullptr;
  const unsigned long mode = std::strtoul(text.c_str(), &end, 0);
  if (text.empty() || *end != '\0' || mode > 07777) {
    return FieldError(
        path, absl::StrCat("invalid ", what, " \"", text, "\"; use octal such as \"0644\""));
  }
  out = static_cast<uint32_t>(mode);
  return absl::OkStatus();
}

absl::Status ParseKind(const YAML::Node& node, const std::string& path, ArchivalKindConfig& kind) {
  if (!node) return absl::OkStatus();
  TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(node, path, {"state", "enable_read", "provider"}));
  TOCK_CONFIG_RETURN_IF_ERROR(Read(node["state"], path + ".state", "a string", &kind.state));
  if (kind.state.empty()) kind.state = "disabled";
  if (kind.state != "disabled" && kind.state != "paused" && kind.state != "enabled") {
    return FieldError(path + ".state", absl::StrCat("invalid archival state \"", kind.state,
                                                    "\"; allowed: disabled, paused, enabled"));
  }
  TOCK_CONFIG_RETURN_IF_ERROR(
      Read(node["enable_read"], path + ".enable_read", "true or false", &kind.enable_read));
  if (const YAML::Node provider = node["provider"]) {
    const std::string pp = path + ".provider";
    TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(provider, pp, {"filestore", "s3store"}));
    if (const YAML::Node fs = provider["filestore"]) {
      TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(fs, pp + ".filestore", {"file_mode", "dir_mode"}));
      archival::FileProviderOptions f;
      TOCK_CONFIG_RETURN_IF_ERROR(
          ReadMode(fs["file_mode"], pp + ".filestore.file_mode", "file mode", f.file_mode));
      TOCK_CONFIG_RETURN_IF_ERROR(
          ReadMode(fs["dir_mode"], pp + ".filestore.dir_mode", "directory mode", f.dir_mode));
      kind.providers.file = f;
    }
    if (const YAML::Node s3 = provider["s3store"]) {
      TOCK_CONFIG_RETURN_IF_ERROR(
          CheckKeys(s3, pp + ".s3store",
                    {"region", "endpoint", "force_path_style", "access_key_id",
                     "secret_access_key", "session_token"}));
      archival::S3ProviderOptions c;
      TOCK_CONFIG_RETURN_IF_ERROR(
          Read(s3["region"], pp + ".s3store.region", "a string", &c.region));
      TOCK_CONFIG_RETURN_IF_ERROR(
          Read(s3["endpoint"], pp + ".s3store.endpoint", "a string", &c.endpoint));
      TOCK_CONFIG_RETURN_IF_ERROR(Read(s3["force_path_style"], pp + ".s3store.force_path_style",
                                       "true or false", &c.force_path_style));
      for (auto [key, field] : {std::pair{"access_key_id", &c.credentials.access_key_id},
                                std::pair{"secret_access_key", &c.credentials.secret_access_key},
                                std::pair{"session_token", &c.credentials.session_token}}) {
        TOCK_CONFIG_RETURN_IF_ERROR(
            Read(s3[key], pp + ".s3store." + key, "a string", field));
      }
      kind.providers.s3 = c;
    }
  }
  return absl::OkStatus();
}

absl::Status ParseDefault(const YAML::Node& node, const std::string& path,
                          ArchivalKindConfig& kind) {
  if (!node) return absl::OkStatus();
  TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(node, path, {"state", "uri"}));
  TOCK_CONFIG_RETURN_IF_ERROR(
      Read(node["state"], path + ".state", "a string", &kind.default_state));
  if (kind.default_state.empty()) kind.default_state = "disabled";
  if (kind.default_state != "disabled" && kind.default_state != "enabled") {
    return FieldError(path + ".state", absl::StrCat("invalid archival state \"", kind.default_state,
                                                    "\"; allowed: disabled, enabled"));
  }
  return Read(node["uri"], path + ".uri", "a string", &kind.default_uri);
}

absl::Status ValidateKind(const ArchivalKindConfig& kind, const std::string& name) {
  const std::string path = "archival." + name;
  const bool has_provider = kind.providers.file.has_value() || kind.providers.s3.has_value();
  if (!kind.Enabled()) {
    if (kind.enable_read || kind.default_state == "enabled" || !kind.default_uri.empty() ||
        has_provider) {
      return FieldError(
          path, absl::StrCat("invalid ", name,
                             " archival config: with the state not enabled, leave enable_read, "
                             "the provider and namespace_defaults.archival.",
                             name, " unset"));
    }
    return absl::OkStatus();
  }
  if (kind.default_uri.empty()) {
    return FieldError(path, absl::StrCat("invalid ", name,
                                         " archival config: enabled needs "
                                         "namespace_defaults.archival.",
                                         name, ".uri"));
  }
  if (!has_provider) {
    return FieldError(path, absl::StrCat("invalid ", name,
                                         " archival config: enabled needs a "
                                         "provider (filestore or s3store)"));
  }
  absl::StatusOr<archival::ArchivalUri> uri = archival::ParseArchivalUri(kind.default_uri);
  if (!uri.ok()) {
    return FieldError("namespace_defaults.archival." + name + ".uri",
                      std::string(uri.status().message()));
  }
  const std::string& scheme = uri->scheme;
  const std::vector<std::string> schemes = kind.Schemes();
  if (std::find(schemes.begin(), schemes.end(), scheme) == schemes.end()) {
    return FieldError(
        path + ".provider",
        absl::StrCat("unable to find archiver config for the scheme of ", kind.default_uri,
                     "; configure ", scheme == "file" ? "filestore" : "s3store"));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> ArchivalKindConfig::Schemes() const {
  std::vector<std::string> out;
  if (providers.file.has_value()) out.push_back("file");
  if (providers.s3.has_value()) out.push_back("s3");
  return out;
}

absl::Status ArchivalConfig::Validate() const {
  TOCK_CONFIG_RETURN_IF_ERROR(ValidateKind(history, "history"));
  return ValidateKind(visibility, "visibility");
}

absl::Status ParseArchivalConfig(const YAML::Node& archival, const YAML::Node& namespace_defaults,
                                 ArchivalConfig& config) {
  if (archival) {
    TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(archival, "archival", {"history", "visibility"}));
    TOCK_CONFIG_RETURN_IF_ERROR(ParseKind(archival["history"], "archival.history", config.history));
    TOCK_CONFIG_RETURN_IF_ERROR(
        ParseKind(archival["visibility"], "archival.visibility", config.visibility));
  }
  if (namespace_defaults) {
    TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(namespace_defaults, "namespace_defaults", {"archival"}));
    if (const YAML::Node a = namespace_defaults["archival"]) {
      const std::string p = "namespace_defaults.archival";
      TOCK_CONFIG_RETURN_IF_ERROR(CheckKeys(a, p, {"history", "visibility"}));
      TOCK_CONFIG_RETURN_IF_ERROR(ParseDefault(a["history"], p + ".history", config.history));
      TOCK_CONFIG_RETURN_IF_ERROR(
          ParseDefault(a["visibility"], p + ".visibility", config.visibility));
    }
  }
  return absl::OkStatus();
}

void ArchivalConfig::UseDirectory(const std::string& dir) {
  const std::string root = std::filesystem::absolute(dir).lexically_normal().string();
  for (auto [kind, sub] : {std::pair{&history, "history"}, std::pair{&visibility, "visibility"}}) {
    kind->state = "enabled";
    kind->enable_read = true;
    kind->providers.file = archival::FileProviderOptions{};
    kind->default_state = "enabled";
    kind->default_uri = absl::StrCat("file://", root, root.back() == '/' ? "" : "/", sub);
  }
}

}  // namespace tock::server
