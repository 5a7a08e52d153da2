// BlobStore on a local directory (Temporal's filestore provider): a key is a file path under
// the root. Writes go to a temporary file in the same directory, are fsynced and renamed
// over the key, so a crash leaves the old file or the whole new one. Directories are created
// with `dir_mode`, files get `file_mode` (the provider's config).
#pragma once

#include <sys/types.h>

#include <string>

#include "lib/archival/blob_store.h"

namespace tock::archival {

class FileBlobStore : public BlobStore {
 public:
  FileBlobStore(std::string root, mode_t file_mode = 0640, mode_t dir_mode = 0750);

  absl::Status Put(const std::string& key, std::string_view bytes) override;
  absl::StatusOr<std::string> Get(const std::string& key) override;
  absl::StatusOr<bool> Exists(const std::string& key) override;
  absl::StatusOr<BlobListPage> List(const std::string& prefix, int max_keys,
                                    const std::string& token) override;
  std::string Describe() const override { return "file://" + root_; }

 private:
  absl::StatusOr<std::string> PathOf(const std::string& key) const;

  const std::string root_;
  const mode_t file_mode_;
  const mode_t dir_mode_;
};

}  // namespace tock::archival
