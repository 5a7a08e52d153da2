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

// INVALID_ARGUMENT naming what is wrong: no scheme, an unknown scheme (what is allowed),
// an empty directory ("directory path is empty") or bucket ("no bucket specified").
absl::StatusOr<ArchivalUri> ParseArchivalUri(const std::string& uri);

}  // namespace tock::archival
