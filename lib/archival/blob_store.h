// A flat key → bytes store that archives are written to: a directory (FileBlobStore) or an
// S3 bucket (S3BlobStore). Keys are '/'-separated paths relative to the store's root.
//
// Errors: NOT_FOUND for a key that is not there; UNAVAILABLE when the store cannot be
// reached (after the store's own retries), so callers retry later; PERMISSION_DENIED for
// refused credentials; INVALID_ARGUMENT for a bad key. Messages name the key and the store.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tock::archival {

struct BlobListPage {
  std::vector<std::string> keys;  // in byte order
  std::string next_token;         // empty on the last page
};

class BlobStore {
 public:
  virtual ~BlobStore() = default;

  // Writes `bytes` under `key`, replacing what was there. Atomic: a reader sees the old
  // object or the whole new one, never a part; OK means the bytes are durable.
  virtual absl::Status Put(const std::string& key, std::string_view bytes) = 0;
  virtual absl::StatusOr<std::string> Get(const std::string& key) = 0;
  virtual absl::StatusOr<bool> Exists(const std::string& key) = 0;
  // Keys that start with `prefix`, at most `max_keys` per page; `token` continues a page.
  virtual absl::StatusOr<BlobListPage> List(const std::string& prefix, int max_keys,
                                            const std::string& token) = 0;

  // "file:///dir" or "s3://bucket/prefix", for messages.
  virtual std::string Describe() const = 0;
};

}  // namespace tock::archival
