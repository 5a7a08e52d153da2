// Archived visibility records, in the layout of Temporal's archiver for the URI's scheme
// (SPEC §3):
//   file: <dir>/<namespace_id>/<close_unix_nanos>_<fp64(run_id)>.visibility, one record;
//   s3:   the record four times, under <prefix>/<namespace_id>/visibility/
//         {workflowTypeName/<type>|workflowID/<id>}/{closeTimeout|startTimeout}/<RFC3339>/<run_id>,
//         so a query by id or type and by close or start time is one prefix listing.
// Records are proto3 JSON of VisibilityRecord. Archive is idempotent (same keys, same bytes).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/archival/archival_uri.h"
#include "lib/archival/blob_store.h"
#include "temporal/api/workflow/v1/message.pb.h"
#include "tock/archiver/v1/archive.pb.h"

namespace tock::archival {

struct ArchivedVisibilityPage {
  std::vector<temporal::api::workflow::v1::WorkflowExecutionInfo> executions;
  std::string next_page_token;  // empty on the last page
};

class VisibilityArchive {
 public:
  VisibilityArchive(ArchivalUri uri, BlobStore& store) : uri_(std::move(uri)), store_(store) {}

  // INVALID_ARGUMENT for a record without ids, type, start or close time.
  absl::Status Archive(const tock::archiver::v1::VisibilityRecord& record);

  // Records of `namespace_id` that match `query` (the language of the URI's scheme,
  // visibility_query.h): file newest close first; s3 in key order. `now` bounds the file
  // query's default close-time window.
  absl::StatusOr<ArchivedVisibilityPage> Query(const std::string& namespace_id,
                                               const std::string& query, int page_size,
                                               const std::string& page_token, absl::Time now);

 private:
  absl::StatusOr<ArchivedVisibilityPage> QueryFile(const std::string& namespace_id,
                                                   const std::string& query, int page_size,
                                                   const std::string& page_token, absl::Time now);
  absl::StatusOr<ArchivedVisibilityPage> QueryS3(const std::string& namespace_id,
                                                 const std::string& query, int page_size,
                                                 const std::string& page_token);
  absl::StatusOr<tock::archiver::v1::VisibilityRecord> Load(const std::string& key);

  ArchivalUri uri_;
  BlobStore& store_;
};

// The WorkflowExecutionInfo a record lists as (execution time defaults to start time).
temporal::api::workflow::v1::WorkflowExecutionInfo ExecutionInfoOf(
    const tock::archiver::v1::VisibilityRecord& record);

}  // namespace tock::archival
