// A BlobStore in memory for the archive reader targets: keys in byte order, a listing token
// is the last key of the previous page.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "lib/archival/blob_store.h"

namespace tock::fuzz {

class MemoryBlobStore : public archival::BlobStore {
 public:
  absl::Status Put(const std::string& key, std::string_view bytes) override {
    std::lock_guard lock(mu_);
    objects_[key] = std::string(bytes);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Get(const std::string& key) override {
    std::lock_guard lock(mu_);
    auto it = objects_.find(key);
    if (it == objects_.end()) return absl::NotFoundError("no such key: " + key);
    return it->second;
  }
  absl::StatusOr<bool> Exists(const std::string& key) override {
    std::lock_guard lock(mu_);
    return objects_.contains(key);
  }
  absl::StatusOr<archival::BlobListPage> List(const std::string& prefix, int max_keys,
                                              const std::string& token) override {
    std::lock_guard lock(mu_);
    archival::BlobListPage page;
    auto it = token.empty() ? objects_.lower_bound(prefix) : objects_.upper_bound(token);
    for (; it != objects_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      if (static_cast<int>(page.keys.size()) >= max_keys) {
        page.next_token = page.keys.back();
        break;
      }
      page.keys.push_back(it->first);
    }
    return page;
  }
  std::string Describe() const override { return "memory://fuzz"; }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> objects_;
};

}  // namespace tock::fuzz
