// Archival URIs (SPEC §3): "file:///absolute/dir" and "s3://bucket[/prefix]", parsed the way
// Temporal's archivers read them (Go url.ParseRequestURI: scheme, host, path).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace tock::archival {

struct ArchivalUri {
  std::string scheme;  // "file" or "s3"
  std::string bucket;  // s3: the host part
  std::string path;    // file: the directory; s3: the key prefix without leading '/' ("" for none)
  std::string text;    // as given
};

// The one parser of archival URIs (namespace settings, cluster defaults, the archiver, the
// CLI's offline reads). INVALID_ARGUMENT "invalid archival URI "<uri>": ..." naming what is
// wrong and what is allowed: an unknown or missing scheme, a file URI that is not an
// absolute directory, an s3 URI without a bucket.
absl::StatusOr<ArchivalUri> ParseArchivalUri(const std::string& uri);

}  // namespace tock::archival
