// The archives of the cluster's archival config, opened on first use and kept (an S3 store
// keeps its connections): history and visibility archives by URI, with the provider
// settings of their kind, and whether each kind is archived and read back at all; and the
// threads that requests reading or writing archives run on (RunBlocking), so a slow store
// never holds gRPC's threads.
//
// Thread safety: safe from many threads; archives are never closed while the registry lives.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "lib/common/blocking_pool.h"
#include "lib/archival/archive_stores.h"
#include "lib/archival/history_archive.h"
#include "lib/archival/visibility_archive.h"

namespace tock::server::archiver {

struct ArchivalKindSetup {
  bool enabled = false;       // the cluster archives this kind
  bool read_enabled = false;  // and serves reads from the archive
  archival::ArchiveProviders providers;
};

class ArchiveRegistry {
 public:
  ArchiveRegistry(ArchivalKindSetup history, ArchivalKindSetup visibility)
      : history_setup_(std::move(history)), visibility_setup_(std::move(visibility)) {}

  // Runs `job` on one of the registry's threads (4): for request handlers that touch a store.
  // RESOURCE_EXHAUSTED (job not run) when kMaxQueuedIo jobs wait already; UNAVAILABLE when
  // stopping. The caller then answers its request with that status.
  static constexpr size_t kMaxQueuedIo = 256;
  absl::Status RunBlocking(std::function<void()> job) {
    if (io_.Run(std::move(job))) return absl::OkStatus();
    return absl::ResourceExhaustedError(
        "too many archive reads and archival requests are waiting (256); try again later");
  }
  // At shutdown, before what those jobs use goes: finishes the queued ones, takes no more.
  void StopBlocking() { io_.Stop(); }

  const ArchivalKindSetup& history_setup() const { return history_setup_; }
  const ArchivalKindSetup& visibility_setup() const { return visibility_setup_; }

  // INVALID_ARGUMENT / FAILED_PRECONDITION from archival::OpenArchive for a URI that cannot
  // be opened with this kind's providers.
  absl::StatusOr<archival::HistoryArchive*> History(const std::string& uri);
  absl::StatusOr<archival::VisibilityArchive*> Visibility(const std::string& uri);

 private:
  template <typename Archive>
  struct Opened {
    archival::OpenedArchive store;
    std::unique_ptr<Archive> archive;
  };
  template <typename Archive>
  absl::StatusOr<Archive*> Open(std::map<std::string, Opened<Archive>>& cache,
                                const ArchivalKindSetup& setup, const std::string& uri);

  const ArchivalKindSetup history_setup_;
  const ArchivalKindSetup visibility_setup_;
  std::mutex mu_;
  std::map<std::string, Opened<archival::HistoryArchive>> histories_;
  std::map<std::string, Opened<archival::VisibilityArchive>> visibilities_;
  BlockingPool io_{4, kMaxQueuedIo};  // last: its jobs use the archives above
};

}  // namespace tock::server::archiver
