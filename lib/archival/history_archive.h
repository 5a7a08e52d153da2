// Run histories in an archive, in the layout Temporal's archiver for the URI's scheme uses
// (SPEC §3), so either side reads what the other wrote:
//   file: <dir>/<fp64(namespace_id)><fp64(workflow_id)><fp64(run_id)>_<close_version>.history,
//         a JSON array of History objects;
//   s3:   <prefix>/<namespace_id>/history/<workflow_id>/<run_id>/<close_version>/<batch>,
//         one HistoryBlob (header + History batches) per object, the last one is_last.
// fp64 is FarmHash Fingerprint64 in decimal. JSON is proto3 JSON; reads ignore unknown fields.
//
// Archive is idempotent: it rewrites the same objects with the same bytes, each write atomic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/archival/archival_uri.h"
#include "lib/archival/blob_store.h"
#include "temporal/api/history/v1/message.pb.h"

namespace tock::archival {

struct ArchivedRun {
  std::string namespace_id;
  std::string namespace_name;
  std::string workflow_id;
  std::string run_id;
};

class HistoryArchive {
 public:
  // `store` is rooted at the URI (its directory or bucket and prefix); not owned.
  HistoryArchive(ArchivalUri uri, BlobStore& store) : uri_(std::move(uri)), store_(store) {}

  // Writes the whole history of a closed run; the close failover version is the last
  // event's version. INVALID_ARGUMENT for an empty history or a missing id.
  absl::Status Archive(const ArchivedRun& run,
                       const std::vector<temporal::api::history::v1::HistoryEvent>& events);

  // The archived history, all batches joined. With no `close_version` the highest one
  // archived is read. NOT_FOUND "requested workflow history does not exist".
  absl::StatusOr<temporal::api::history::v1::History> Get(
      const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id,
      std::optional<int64_t> close_version = std::nullopt);

  // The key of the first object of an archive (the file, or batch 0), for messages.
  std::string KeyOf(const std::string& namespace_id, const std::string& workflow_id,
                    const std::string& run_id, int64_t close_version) const;

 private:
  absl::StatusOr<std::optional<int64_t>> HighestVersion(const std::string& namespace_id,
                                                        const std::string& workflow_id,
                                                        const std::string& run_id);
  ArchivalUri uri_;
  BlobStore& store_;
};

}  // namespace tock::archival
