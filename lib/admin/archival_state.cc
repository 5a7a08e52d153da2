#include "lib/admin/archival_state.h"

#include "lib/archival/archival_uri.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tock::admin {

namespace enums = temporal::api::enums::v1;

absl::StatusOr<ArchivalSetting> NextArchivalSetting(const ArchivalSetting& current,
                                                    const ArchivalRequest& request) {
  if (!request.uri.empty() && !current.uri.empty() && request.uri != current.uri) {
    return absl::InvalidArgumentError(kUriChangeMessage);
  }
  ArchivalSetting next = current;
  if (next.uri.empty()) next.uri = request.uri;
  if (request.state == enums::ARCHIVAL_STATE_ENABLED) {
    if (next.uri.empty()) next.uri = request.default_uri;
    next.state = enums::ARCHIVAL_STATE_ENABLED;
  } else if (request.state == enums::ARCHIVAL_STATE_DISABLED) {
    next.state = enums::ARCHIVAL_STATE_DISABLED;
  }
  if (next.state == enums::ARCHIVAL_STATE_ENABLED && next.uri.empty()) {
    return absl::InvalidArgumentError(kEnableWithoutUriMessage);
  }
  if (next.uri != current.uri) {
    if (absl::Status s = ValidateArchivalUri(next.uri); !s.ok()) return s;
  }
  return next;
}

absl::Status ValidateArchivalUri(absl::string_view uri) {
  return archival::ParseArchivalUri(std::string(uri)).status();
}

}  // namespace tock::admin
