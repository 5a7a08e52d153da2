// Opens the blob store an archival URI names, with the provider settings of its scheme
// (the cluster config's filestore / s3store, or the CLI's flags when reading offline).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/archival/archival_uri.h"
#include "lib/archival/blob_store.h"
#include "lib/archival/sigv4.h"

namespace tock::archival {

struct FileProviderOptions {
  // Owner only: archives hold payloads (issue 15). Configurable for an operator who wants a
  // group of readers (filestore: {file_mode: "0640", dir_mode: "0750"}).
  uint32_t file_mode = 0600;
  uint32_t dir_mode = 0700;
};

struct S3ProviderOptions {
  std::string region;
  std::string endpoint;  // "" for AWS
  bool force_path_style = false;
  AwsCredentials credentials;  // empty: from the environment (AWS_ACCESS_KEY_ID, ...)
  int max_attempts = 4;
};

struct ArchiveProviders {
  std::optional<FileProviderOptions> file;
  std::optional<S3ProviderOptions> s3;
};

struct OpenedArchive {
  ArchivalUri uri;
  std::unique_ptr<BlobStore> store;
};

// INVALID_ARGUMENT for a bad URI; FAILED_PRECONDITION "unable to find archiver config for
// the given scheme" when `providers` has none for it.
absl::StatusOr<OpenedArchive> OpenArchive(const std::string& uri, const ArchiveProviders& providers);

}  // namespace tock::archival
