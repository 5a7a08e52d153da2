#include "lib/admin/archival_state.h"

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

absl::string_view ArchivalUriScheme(absl::string_view uri) {
  const size_t colon = uri.find("://");
  return colon == absl::string_view::npos ? absl::string_view() : uri.substr(0, colon);
}

absl::Status ValidateArchivalUri(absl::string_view uri) {
  const absl::string_view scheme = ArchivalUriScheme(uri);
  const absl::string_view rest = scheme.empty() ? "" : uri.substr(scheme.size() + 3);
  if (scheme == "file") {
    if (!absl::StartsWith(rest, "/") || rest.size() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid archival URI \"", uri,
                       "\": a file URI names an absolute directory, e.g. "
                       "file:///var/tock/archive"));
    }
    return absl::OkStatus();
  }
  if (scheme == "s3") {
    const absl::string_view bucket = rest.substr(0, rest.find('/'));
    if (bucket.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid archival URI \"", uri, "\": the bucket is empty; use s3://BUCKET[/PREFIX]"));
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("invalid archival URI \"", uri,
                                                 "\": unknown archiver scheme \"", scheme,
                                                 "\"; use file:///DIR or s3://BUCKET[/PREFIX]"));
}

}  // namespace tock::admin
