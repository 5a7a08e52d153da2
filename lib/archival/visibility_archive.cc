#include "lib/archival/visibility_archive.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/archival/archive_json.h"
#include "lib/archival/visibility_query.h"
#include "lib/common/hashing.h"
#include "lib/common/proto_time.h"

namespace tock::archival {
namespace av = tock::archiver::v1;
namespace wfpb = temporal::api::workflow::v1;
namespace {

absl::Time TimeOf(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

// Go's time.RFC3339 in UTC: whole seconds, "Z".
std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

std::string PrecisionPrefix(absl::Time t, const std::string& precision) {
  const char* format = precision == "Second"   ? "%Y-%m-%dT%H:%M:%S"
                       : precision == "Minute" ? "%Y-%m-%dT%H:%M"
                       : precision == "Hour"   ? "%Y-%m-%dT%H"
                                               : "%Y-%m-%dT";
  return absl::FormatTime(format, t, absl::UTCTimeZone());
}

std::string S3IndexPrefix(const std::string& namespace_id, const std::string& primary_key,
                          const std::string& primary_value, const std::string& secondary) {
  return absl::StrCat(namespace_id, "/visibility/", primary_key, "/", primary_value, "/",
                      secondary, "/");
}

const char kBadToken[] = "next page token is corrupted";

}  // namespace

wfpb::WorkflowExecutionInfo ExecutionInfoOf(const av::VisibilityRecord& record) {
  wfpb::WorkflowExecutionInfo info;
  info.mutable_execution()->set_workflow_id(record.workflow_id());
  info.mutable_execution()->set_run_id(record.run_id());
  info.mutable_type()->set_name(record.workflow_type_name());
  *info.mutable_start_time() = record.start_time();
  *info.mutable_execution_time() =
      record.has_execution_time() && record.execution_time().seconds() != 0
          ? record.execution_time()
          : record.start_time();
  *info.mutable_close_time() = record.close_time();
  info.set_status(record.status());
  info.set_history_length(record.history_length());
  if (record.has_memo()) *info.mutable_memo() = record.memo();
  if (record.has_execution_duration()) *info.mutable_execution_duration() = record.execution_duration();
  return info;
}

absl::Status VisibilityArchive::Archive(const av::VisibilityRecord& record) {
  if (record.namespace_id().empty()) return absl::InvalidArgumentError("field NamespaceId is empty");
  if (record.workflow_id().empty()) return absl::InvalidArgumentError("field WorkflowId is empty");
  if (record.run_id().empty()) return absl::InvalidArgumentError("field RunId is empty");
  if (record.workflow_type_name().empty()) {
    return absl::InvalidArgumentError("field WorkflowTypeName is empty");
  }
  if (!record.has_start_time()) return absl::InvalidArgumentError("field StartTime is empty");
  if (!record.has_close_time()) return absl::InvalidArgumentError("field CloseTime is empty");
  const std::string json = ArchiveJson(record);
  const absl::Time close = TimeOf(record.close_time());
  if (uri_.scheme == "file") {
    return store_.Put(absl::StrCat(record.namespace_id(), "/", absl::ToUnixNanos(close), "_",
                                   Fingerprint64(record.run_id()), ".visibility"),
                      json);
  }
  const absl::Time start = TimeOf(record.start_time());
  for (const auto& [key, value] :
       {std::pair{"workflowTypeName", record.workflow_type_name()},
        std::pair{"workflowID", record.workflow_id()}}) {
    for (const auto& [index, t] : {std::pair{"closeTimeout", close}, std::pair{"startTimeout", start}}) {
      const std::string object =
          absl::StrCat(S3IndexPrefix(record.namespace_id(), key, value, index), Rfc3339(t), "/",
                       record.run_id());
      if (absl::Status s = store_.Put(object, json); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<av::VisibilityRecord> VisibilityArchive::Load(const std::string& key) {
  absl::StatusOr<std::string> bytes = store_.Get(key);
  if (!bytes.ok()) return bytes.status();
  av::VisibilityRecord record;
  if (absl::Status s = ParseArchiveJson(*bytes, record, key); !s.ok()) return s;
  return record;
}

absl::StatusOr<ArchivedVisibilityPage> VisibilityArchive::Query(const std::string& namespace_id,
                                                                const std::string& query,
                                                                int page_size,
                                                                const std::string& page_token,
                                                                absl::Time now) {
  if (namespace_id.empty()) return absl::InvalidArgumentError("field NamespaceId is empty");
  if (page_size <= 0) return absl::InvalidArgumentError("field PageSize should be greater than 0");
  if (uri_.scheme == "file") return QueryFile(namespace_id, query, page_size, page_token, now);
  return QueryS3(namespace_id, query, page_size, page_token);
}

absl::StatusOr<ArchivedVisibilityPage> VisibilityArchive::QueryFile(
    const std::string& namespace_id, const std::string& query, int page_size,
    const std::string& page_token, absl::Time now) {
  absl::StatusOr<FileVisibilityQuery> q = ParseFileVisibilityQuery(query, now);
  if (!q.ok()) return q.status();
  ArchivedVisibilityPage page;
  if (q->matches_nothing) return page;
  // Newest first: (close nanos, run hash) descending; the token is the last one returned.
  struct Entry {
    int64_t close_nanos;
    uint64_t run_hash;
    std::string key;
  };
  std::optional<std::pair<int64_t, uint64_t>> after;
  if (!page_token.empty()) {
    nlohmann::json token = nlohmann::json::parse(page_token, nullptr, false);
    if (token.is_discarded() || !token.contains("LastCloseTime") || !token.contains("LastRunID")) {
      return absl::InvalidArgumentError(kBadToken);
    }
    uint64_t run_hash = 0;
    if (!token["LastCloseTime"].is_number_integer() || !token["LastRunID"].is_string() ||
        !absl::SimpleAtoi(token["LastRunID"].get<std::string>(), &run_hash)) {
      return absl::InvalidArgumentError(kBadToken);
    }
    after = std::pair{token["LastCloseTime"].get<int64_t>(), run_hash};
  }
  std::vector<Entry> entries;
  const std::string prefix = namespace_id + "/";
  std::string token;
  for (int round = 0; round < 100'000; ++round) {
    absl::StatusOr<BlobListPage> listed = store_.List(prefix, 10'000, token);
    if (!listed.ok()) return listed.status();
    for (const std::string& key : listed->keys) {
      absl::string_view name = absl::string_view(key).substr(prefix.size());
      if (!absl::ConsumeSuffix(&name, ".visibility")) continue;
      const size_t underscore = name.find('_');
      Entry e{0, 0, key};
      if (underscore == std::string_view::npos ||
          !absl::SimpleAtoi(name.substr(0, underscore), &e.close_nanos) ||
          !absl::SimpleAtoi(name.substr(underscore + 1), &e.run_hash)) {
        continue;  // not a record file
      }
      const absl::Time close = absl::FromUnixNanos(e.close_nanos);
      if (close < q->earliest_close || close > q->latest_close) continue;
      if (after && std::pair{e.close_nanos, e.run_hash} >= *after) continue;
      entries.push_back(std::move(e));
    }
    if (listed->next_token.empty()) break;
    token = listed->next_token;
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::pair{a.close_nanos, a.run_hash} > std::pair{b.close_nanos, b.run_hash};
  });
  for (const Entry& e : entries) {
    absl::StatusOr<av::VisibilityRecord> record = Load(e.key);
    if (!record.ok()) return record.status();
    if ((q->workflow_id && record->workflow_id() != *q->workflow_id) ||
        (q->run_id && record->run_id() != *q->run_id) ||
        (q->workflow_type && record->workflow_type_name() != *q->workflow_type) ||
        (q->status && static_cast<int>(record->status()) != *q->status)) {
      continue;
    }
    if (page.executions.size() == static_cast<size_t>(page_size)) {
      // There is at least one more: continue after the last one returned.
      const auto& last = page.executions.back();
      const absl::Time last_close = TimeOf(last.close_time());
      page.next_page_token = nlohmann::json{{"LastCloseTime", absl::ToUnixNanos(last_close)},
                                            {"LastRunID", std::to_string(Fingerprint64(
                                                              last.execution().run_id()))}}
                                 .dump();
      break;
    }
    page.executions.push_back(ExecutionInfoOf(*record));
  }
  return page;
}

absl::StatusOr<ArchivedVisibilityPage> VisibilityArchive::QueryS3(const std::string& namespace_id,
                                                                  const std::string& query,
                                                                  int page_size,
                                                                  const std::string& page_token) {
  absl::StatusOr<S3VisibilityQuery> q = ParseS3VisibilityQuery(query);
  if (!q.ok()) return q.status();
  std::string prefix;
  if (q->empty) {
    prefix = absl::StrCat(namespace_id, "/visibility/workflowTypeName/");
  } else {
    const bool by_id = q->workflow_id.has_value();
    prefix = S3IndexPrefix(namespace_id, by_id ? "workflowID" : "workflowTypeName",
                           by_id ? *q->workflow_id : *q->workflow_type,
                           q->start_time ? "startTimeout" : "closeTimeout");
    if (q->start_time) prefix += PrecisionPrefix(*q->start_time, q->precision);
    if (q->close_time) prefix += PrecisionPrefix(*q->close_time, q->precision);
  }
  ArchivedVisibilityPage page;
  std::string token = page_token;
  // An empty query lists every index key and keeps the closeTimeout ones (one per record),
  // so a page may need several listings.
  for (int round = 0; round < 10'000; ++round) {
    absl::StatusOr<BlobListPage> listed =
        store_.List(prefix, page_size - static_cast<int>(page.executions.size()), token);
    if (!listed.ok()) {
      if (listed.status().code() == absl::StatusCode::kFailedPrecondition && !token.empty()) {
        return absl::InvalidArgumentError(kBadToken);
      }
      return listed.status();
    }
    for (const std::string& key : listed->keys) {
      if (q->empty && !absl::StrContains(key, "/closeTimeout/")) continue;
      absl::StatusOr<av::VisibilityRecord> record = Load(key);
      if (!record.ok()) return record.status();
      page.executions.push_back(ExecutionInfoOf(*record));
    }
    token = listed->next_token;
    if (token.empty() || page.executions.size() >= static_cast<size_t>(page_size)) break;
  }
  page.next_page_token = token;
  return page;
}

}  // namespace tock::archival
