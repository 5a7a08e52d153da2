#include "server-core/archiver/archive_registry.h"

namespace tock::server::archiver {

template <typename Archive>
absl::StatusOr<Archive*> ArchiveRegistry::Open(std::map<std::string, Opened<Archive>>& cache,
                                               const ArchivalKindSetup& setup,
                                               const std::string& uri) {
  std::lock_guard lock(mu_);
  auto it = cache.find(uri);
  if (it != cache.end()) return it->second.archive.get();
  absl::StatusOr<archival::OpenedArchive> opened = archival::OpenArchive(uri, setup.providers);
  if (!opened.ok()) return opened.status();
  Opened<Archive> entry;
  entry.store = std::move(*opened);
  entry.archive = std::make_unique<Archive>(entry.store.uri, *entry.store.store);
  Archive* archive = entry.archive.get();
  cache.emplace(uri, std::move(entry));
  return archive;
}

absl::StatusOr<archival::HistoryArchive*> ArchiveRegistry::History(const std::string& uri) {
  return Open(histories_, history_setup_, uri);
}

absl::StatusOr<archival::VisibilityArchive*> ArchiveRegistry::Visibility(const std::string& uri) {
  return Open(visibilities_, visibility_setup_, uri);
}

}  // namespace tock::server::archiver
