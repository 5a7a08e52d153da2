// A namespace's archival setting (SPEC §3; Temporal's archival config state machine): the
// state (enabled or disabled) and the URI where its histories or visibility records go.
// Shared by the server (register and update) and tests; pure functions.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "temporal/api/enums/v1/namespace.pb.h"

namespace tock::admin {

using ArchivalStateEnum = temporal::api::enums::v1::ArchivalState;

// Exact messages (SPEC §3).
inline constexpr absl::string_view kEnableWithoutUriMessage =
    "Invalid to enable archival without specifying a uri.";
inline constexpr absl::string_view kUriChangeMessage = "Cannot update existing archival URI";

struct ArchivalSetting {
  ArchivalStateEnum state = temporal::api::enums::v1::ARCHIVAL_STATE_DISABLED;
  std::string uri;  // once set, never changes
  bool operator==(const ArchivalSetting&) const = default;
};

// What a register or update asks for: a state (UNSPECIFIED: keep) and a URI (empty: keep),
// with the cluster's default URI for that kind.
struct ArchivalRequest {
  ArchivalStateEnum state = temporal::api::enums::v1::ARCHIVAL_STATE_UNSPECIFIED;
  std::string uri;
  std::string default_uri;
};

// The next setting:
//   - a URI differing from one already set: INVALID_ARGUMENT kUriChangeMessage;
//   - enabling with no URI yet takes the default URI;
//   - enabled with no URI at all: INVALID_ARGUMENT kEnableWithoutUriMessage;
//   - a URI with state UNSPECIFIED or DISABLED is stored with the archival disabled.
// The URI's scheme is checked by ValidateArchivalUri.
absl::StatusOr<ArchivalSetting> NextArchivalSetting(const ArchivalSetting& current,
                                                    const ArchivalRequest& request);

// `file:///absolute/dir` or `s3://bucket[/prefix]`; INVALID_ARGUMENT naming the URI and what
// is allowed otherwise.
absl::Status ValidateArchivalUri(absl::string_view uri);

}  // namespace tock::admin
