#include "lib/archival/archive_stores.h"

#include "absl/strings/str_cat.h"
#include "lib/archival/file_blob_store.h"
#include "lib/archival/s3_blob_store.h"

namespace tock::archival {

absl::StatusOr<OpenedArchive> OpenArchive(const std::string& uri,
                                          const ArchiveProviders& providers) {
  absl::StatusOr<ArchivalUri> parsed = ParseArchivalUri(uri);
  if (!parsed.ok()) return parsed.status();
  OpenedArchive out;
  out.uri = *parsed;
  if (parsed->scheme == "file") {
    if (!providers.file) {
      return absl::FailedPreconditionError(absl::StrCat(
          "archival URI \"", uri, "\": unable to find archiver config for the given scheme (file)"));
    }
    out.store = std::make_unique<FileBlobStore>(parsed->path, providers.file->file_mode,
                                                providers.file->dir_mode);
    return out;
  }
  if (!providers.s3) {
    return absl::FailedPreconditionError(absl::StrCat(
        "archival URI \"", uri, "\": unable to find archiver config for the given scheme (s3)"));
  }
  S3Options options;
  options.bucket = parsed->bucket;
  options.prefix = parsed->path;
  options.region = providers.s3->region;
  options.endpoint = providers.s3->endpoint;
  options.force_path_style = providers.s3->force_path_style;
  options.credentials = providers.s3->credentials.access_key_id.empty()
                            ? CredentialsFromEnvironment()
                            : providers.s3->credentials;
  options.max_attempts = providers.s3->max_attempts;
  absl::StatusOr<std::unique_ptr<S3BlobStore>> store = S3BlobStore::Create(std::move(options));
  if (!store.ok()) return store.status();
  out.store = std::move(*store);
  return out;
}

}  // namespace tock::archival
