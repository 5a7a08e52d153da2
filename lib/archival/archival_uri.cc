#include "lib/archival/archival_uri.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tock::archival {

absl::StatusOr<ArchivalUri> ParseArchivalUri(const std::string& uri) {
  ArchivalUri out;
  out.text = uri;
  const size_t sep = uri.find("://");
  out.scheme = sep == std::string::npos ? "" : uri.substr(0, sep);
  const std::string rest = sep == std::string::npos ? "" : uri.substr(sep + 3);
  if (out.scheme == "file") {
    // file:///DIR: no host, an absolute directory.
    if (rest.size() < 2 || rest.front() != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid archival URI \"", uri,
                       "\": a file URI names an absolute directory, e.g. file:///var/tock/archive"));
    }
    out.path = rest;
    while (out.path.size() > 1 && out.path.back() == '/') out.path.pop_back();
    return out;
  }
  if (out.scheme == "s3") {
    const size_t slash = rest.find('/');
    out.bucket = rest.substr(0, slash);
    if (out.bucket.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid archival URI \"", uri, "\": the bucket is empty; use s3://BUCKET[/PREFIX]"));
    }
    absl::string_view prefix = slash == std::string::npos ? "" : absl::string_view(rest).substr(slash);
    absl::ConsumePrefix(&prefix, "/");
    while (absl::ConsumeSuffix(&prefix, "/")) {
    }
    out.path = std::string(prefix);
    return out;
  }
  return absl::InvalidArgumentError(absl::StrCat("invalid archival URI \"", uri,
                                                 "\": unknown archiver scheme \"", out.scheme,
                                                 "\"; use file:///DIR or s3://BUCKET[/PREFIX]"));
}

}  // namespace tock::archival
