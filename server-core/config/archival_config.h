// The cluster's archival configuration (SPEC §3), per kind (history, visibility): whether
// the cluster archives at all, whether archives are read back, the blob-store providers,
// and the defaults new namespaces get. Disabled unless configured.
//
//   archival:
//     history:
//       state: enabled          # disabled (default), paused (= disabled) or enabled
//       enable_read: true
//       provider:
//         filestore: {file_mode: "0666", dir_mode: "0766"}
//         s3store: {region: us-east-1, endpoint: "http://127.0.0.1:9000", force_path_style: true,
//                   access_key_id: ..., secret_access_key: ...}  # else AWS_* env variables
//     visibility: {...the same keys...}
//   namespace_defaults:
//     archival:
//       history: {state: enabled, uri: "file:///var/tock/archive"}
//       visibility: {state: enabled, uri: "file:///var/tock/visibility"}
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/admin/archival_state.h"
#include "lib/archival/archive_stores.h"

namespace tock::server {

struct ArchivalKindConfig {
  std::string state = "disabled";  // disabled, paused or enabled
  bool enable_read = false;
  // filestore {file_mode, dir_mode} and s3store {region, endpoint, force_path_style,
  // access_key_id, secret_access_key, session_token}: without keys, the server's AWS_*
  // environment variables.
  archival::ArchiveProviders providers;
  // What a namespace registered without archival fields gets.
  std::string default_state = "disabled";  // disabled or enabled
  std::string default_uri;

  // The cluster archives this kind (Temporal's ClusterConfiguredForArchival).
  bool Enabled() const { return state == "enabled"; }
  bool ReadEnabled() const { return Enabled() && enable_read; }
  // The URI schemes a provider is configured for: "file" (filestore), "s3" (s3store).
  std::vector<std::string> Schemes() const;
};

struct ArchivalConfig {
  ArchivalKindConfig history;
  ArchivalKindConfig visibility;

  // Temporal's rule: an enabled kind needs a default URI whose scheme has a provider; a
  // kind that is not enabled may have no read, no default and no provider. INVALID_ARGUMENT
  // "config archival.<kind>: ..." naming what is wrong.
  absl::Status Validate() const;

  // `--archival-dir DIR`: both kinds enabled and read back with the file provider, and new
  // namespaces archive by default to file://DIR/history and file://DIR/visibility (DIR made
  // absolute).
  void UseDirectory(const std::string& dir);
};

// Parses the `archival` and `namespace_defaults` sections (either may be absent) into
// `config`, refusing unknown keys and bad values with a message naming the key.
absl::Status ParseArchivalConfig(const YAML::Node& archival, const YAML::Node& namespace_defaults,
                                 ArchivalConfig& config);

}  // namespace tock::server
