#include "lib/archival/history_archive.h"

#include "lib/archival/archive_json.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/common/hashing.h"
#include "tock/archiver/v1/archive.pb.h"

namespace tock::archival {
namespace hist = temporal::api::history::v1;
namespace {

// Temporal cuts histories into blobs of about this size; readers take any size.
constexpr size_t kTargetBatchBytes = 2 << 20;

const char kNotFound[] = "requested workflow history does not exist";

std::string FileStem(const std::string& namespace_id, const std::string& workflow_id,
                     const std::string& run_id) {
  return absl::StrCat(Fingerprint64(namespace_id), Fingerprint64(workflow_id),
                      Fingerprint64(run_id), "_");
}

std::string S3RunPrefix(const std::string& namespace_id, const std::string& workflow_id,
                        const std::string& run_id) {
  return absl::StrCat(namespace_id, "/history/", workflow_id, "/", run_id, "/");
}

// Consecutive events in batches of about kTargetBatchBytes: [begin, end) index ranges;
// `total_bytes` gets the events' serialized size (each size is computed once, here).
std::vector<std::pair<size_t, size_t>> Batches(const std::vector<hist::HistoryEvent>& events,
                                               size_t* total_bytes) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t bytes = 0;
  *total_bytes = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const size_t size = events[i].ByteSizeLong();
    *total_bytes += size;
    // The first event opens the first batch whatever its size (an empty event is 0 bytes:
    // fuzzing found a history starting with one, which left no batch to add it to).
    if (out.empty() || (bytes + size > kTargetBatchBytes && bytes > 0)) {
      out.emplace_back(i, i);
      bytes = 0;
    }
    out.back().second = i + 1;
    bytes += size;
  }
  return out;
}

// {"events":[...]} of events [begin, end): the JSON of a History holding them, written from
// the events in place (no copy into a History message).
void AppendHistoryJson(const std::vector<hist::HistoryEvent>& events,
                       std::pair<size_t, size_t> range, std::string& out) {
  out += "{\"events\":[";
  for (size_t i = range.first; i < range.second; ++i) {
    if (i > range.first) out += ',';
    AppendArchiveJson(events[i], out);
  }
  out += "]}";
}

}  // namespace

std::string HistoryArchive::KeyOf(const std::string& namespace_id, const std::string& workflow_id,
                                  const std::string& run_id, int64_t close_version) const {
  if (uri_.scheme == "file") {
    return absl::StrCat(FileStem(namespace_id, workflow_id, run_id), close_version, ".history");
  }
  return absl::StrCat(S3RunPrefix(namespace_id, workflow_id, run_id), close_version, "/0");
}

absl::Status HistoryArchive::Archive(const ArchivedRun& run,
                                     const std::vector<hist::HistoryEvent>& events) {
  if (run.namespace_id.empty()) return absl::InvalidArgumentError("field NamespaceId is empty");
  if (run.workflow_id.empty()) return absl::InvalidArgumentError("field WorkflowId is empty");
  if (run.run_id.empty()) return absl::InvalidArgumentError("field RunId is empty");
  if (events.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("run ", run.run_id, " has no events to archive"));
  }
  const int64_t close_version = events.back().version();
  size_t total = 0;
  const std::vector<std::pair<size_t, size_t>> batches = Batches(events, &total);
  if (uri_.scheme == "file") {
    std::string json;
    json.reserve(2 * total + 64);
    json += '[';
    for (size_t i = 0; i < batches.size(); ++i) {
      if (i > 0) json += ',';
      AppendHistoryJson(events, batches[i], json);
    }
    json += ']';
    return store_.Put(KeyOf(run.namespace_id, run.workflow_id, run.run_id, close_version), json);
  }
  const std::string prefix =
      absl::StrCat(S3RunPrefix(run.namespace_id, run.workflow_id, run.run_id), close_version, "/");
  for (size_t i = 0; i < batches.size(); ++i) {
    const auto [begin, end] = batches[i];
    tock::archiver::v1::HistoryBlobHeader header;
    header.set_namespace_(run.namespace_name);
    header.set_namespace_id(run.namespace_id);
    header.set_workflow_id(run.workflow_id);
    header.set_run_id(run.run_id);
    header.set_is_last(i + 1 == batches.size());
    header.set_first_failover_version(events[begin].version());
    header.set_last_failover_version(events[end - 1].version());
    header.set_first_event_id(events[begin].event_id());
    header.set_last_event_id(events[end - 1].event_id());
    header.set_event_count(static_cast<int64_t>(end - begin));
    // A HistoryBlob {header, body: [History]}, written field by field.
    std::string json;
    json.reserve(2 * total / batches.size() + 512);
    json += "{\"header\":";
    AppendArchiveJson(header, json);
    json += ",\"body\":[";
    AppendHistoryJson(events, batches[i], json);
    json += "]}";
    if (absl::Status s = store_.Put(absl::StrCat(prefix, i), json); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<int64_t>> HistoryArchive::HighestVersion(
    const std::string& namespace_id, const std::string& workflow_id, const std::string& run_id) {
  const std::string prefix = uri_.scheme == "file" ? FileStem(namespace_id, workflow_id, run_id)
                                                   : S3RunPrefix(namespace_id, workflow_id, run_id);
  std::optional<int64_t> best;
  std::string token;
  for (int page = 0; page < 10'000; ++page) {
    absl::StatusOr<BlobListPage> listed = store_.List(prefix, 1000, token);
    if (!listed.ok()) return listed.status();
    for (const std::string& key : listed->keys) {
      absl::string_view rest = absl::string_view(key).substr(prefix.size());
      rest = rest.substr(0, rest.find_first_of("./"));
      int64_t version = 0;
      if (absl::SimpleAtoi(rest, &version) && (!best || version > *best)) best = version;
    }
    if (listed->next_token.empty()) break;
    token = listed->next_token;
  }
  return best;
}

absl::StatusOr<hist::History> HistoryArchive::Get(const std::string& namespace_id,
                                                  const std::string& workflow_id,
                                                  const std::string& run_id,
                                                  std::optional<int64_t> close_version) {
  if (!close_version) {
    absl::StatusOr<std::optional<int64_t>> highest =
        HighestVersion(namespace_id, workflow_id, run_id);
    if (!highest.ok()) return highest.status();
    if (!highest->has_value()) return absl::NotFoundError(kNotFound);
    close_version = **highest;
  }
  hist::History out;
  if (uri_.scheme == "file") {
    const std::string key = KeyOf(namespace_id, workflow_id, run_id, *close_version);
    absl::StatusOr<std::string> bytes = store_.Get(key);
    if (!bytes.ok()) {
      if (bytes.status().code() == absl::StatusCode::kNotFound) return absl::NotFoundError(kNotFound);
      return bytes.status();
    }
    tock::archiver::v1::HistoryBatches batches;
    if (absl::Status s = ParseArchiveJson(absl::StrCat("{\"batches\":", *bytes, "}"), batches, key);
        !s.ok()) {
      return s;
    }
    for (hist::History& batch : *batches.mutable_batches()) {
      for (hist::HistoryEvent& e : *batch.mutable_events()) *out.add_events() = std::move(e);
    }
    return out;
  }
  const std::string prefix =
      absl::StrCat(S3RunPrefix(namespace_id, workflow_id, run_id), *close_version, "/");
  for (int64_t idx = 0;; ++idx) {
    absl::StatusOr<std::string> bytes = store_.Get(absl::StrCat(prefix, idx));
    if (!bytes.ok()) {
      if (bytes.status().code() == absl::StatusCode::kNotFound) {
        if (idx == 0) return absl::NotFoundError(kNotFound);
        return absl::DataLossError(absl::StrCat("archive ", prefix, idx,
                                                " is missing: the archive ends before its last batch"));
      }
      return bytes.status();
    }
    tock::archiver::v1::HistoryBlob blob;
    if (absl::Status s = ParseArchiveJson(*bytes, blob, absl::StrCat(prefix, idx)); !s.ok()) {
      return s;
    }
    for (hist::History& batch : *blob.mutable_body()) {
      for (hist::HistoryEvent& e : *batch.mutable_events()) *out.add_events() = std::move(e);
    }
    if (blob.header().is_last()) break;
  }
  return out;
}

}  // namespace tock::archival
