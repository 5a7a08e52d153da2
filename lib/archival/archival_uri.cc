#include "lib/archival/archival_uri.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tock::archival {

absl::StatusOr<ArchivalUri> ParseArchivalUri(const std::string& uri) {
  ArchivalUri out;
  out.text = uri;
  const size_t sep = uri.find("://");
  if (sep == std::string::npos || sep == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "archival URI \"", uri, "\" has no scheme; use file:///DIR or s3://BUCKET[/PREFIX]"));
  }
  out.scheme = uri.substr(0, sep);
  std::string rest = uri.substr(sep + 3);
  const size_t slash = rest.find('/');
  std::string host = slash == std::string::npos ? rest : rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  if (out.scheme == "file") {
    if (!host.empty() && host != "localhost") {
      return absl::InvalidArgumentError(absl::StrCat(
          "archival URI \"", uri, "\": a file URI names a local directory, file:///DIR"));
    }
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    if (path.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("archival URI \"", uri, "\": directory path is empty"));
    }
    out.path = path;
  } else if (out.scheme == "s3") {
    if (host.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("archival URI \"", uri, "\": no bucket specified"));
    }
    out.bucket = host;
    absl::string_view p = path;
    absl::ConsumePrefix(&p, "/");
    while (absl::ConsumeSuffix(&p, "/")) {
    }
    out.path = std::string(p);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("archival URI \"", uri,
                                                   "\": unknown archiver scheme \"", out.scheme,
                                                   "\"; the schemes are file and s3"));
  }
  return out;
}

}  // namespace tock::archival
