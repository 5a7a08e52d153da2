// The archive readers (lib/archival/history_archive.h, visibility_archive.h) over archives
// anyone with write access to the store could have left: a history file, the batches of an
// s3 history, visibility records under any key, with a query and a page token from a client.
//
// Input: the first byte picks the reader (0 file history, 1 s3 history, 2 file visibility,
// 3 s3 visibility, modulo 4); the rest is split on "\n--\n". Histories: the parts are the
// file, or batches 0, 1, ...; visibility: the query, the page token, then records, each
// "<key below the namespace>\n<JSON>".
//
// Checked: no crash; a history that reads back is archived again and reads back the same;
// the page tokens the visibility reader hands out are accepted by it.
#include <google/protobuf/util/message_differencer.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/archival/history_archive.h"
#include "lib/archival/visibility_archive.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/memory_blob_store.h"

namespace {

using tock::archival::ArchivalUri;
using tock::fuzz::MemoryBlobStore;

constexpr char kNamespaceId[] = "3b7e5c9a-fuzz";
constexpr char kWorkflowId[] = "wf";
constexpr char kRunId[] = "run";

ArchivalUri Uri(bool file) {
  return file ? ArchivalUri{"file", "", "/archive", "file:///archive"}
              : ArchivalUri{"s3", "bucket", "prefix", "s3://bucket/prefix"};
}

void Histories(bool file, const std::vector<std::string>& parts, const std::string& rest) {
  MemoryBlobStore store;
  tock::archival::HistoryArchive archive(Uri(file), store);
  if (file) {
    (void)store.Put(archive.KeyOf(kNamespaceId, kWorkflowId, kRunId, 7), rest);
  } else {
    const std::string prefix =
        absl::StrCat(kNamespaceId, "/history/", kWorkflowId, "/", kRunId, "/7/");
    for (size_t i = 0; i < parts.size(); ++i) (void)store.Put(absl::StrCat(prefix, i), parts[i]);
  }
  auto history = archive.Get(kNamespaceId, kWorkflowId, kRunId);
  if (!history.ok() || history->events().empty()) return;

  // What was read is archived again (in the same layout) and reads back the same.
  std::vector<temporal::api::history::v1::HistoryEvent> events(history->events().begin(),
                                                               history->events().end());
  MemoryBlobStore again_store;
  tock::archival::HistoryArchive again(Uri(file), again_store);
  const absl::Status archived = again.Archive({kNamespaceId, "fuzz", kWorkflowId, kRunId}, events);
  FUZZ_CHECK(archived.ok(), archived.ToString());
  auto reread = again.Get(kNamespaceId, kWorkflowId, kRunId, events.back().version());
  FUZZ_CHECK(reread.ok(), reread.status().ToString());
  FUZZ_CHECK(google::protobuf::util::MessageDifferencer::Equivalent(*history, *reread),
             history->DebugString() + "\nread back as\n" + reread->DebugString());
}

void Visibility(bool file, const std::vector<std::string>& parts) {
  MemoryBlobStore store;
  const std::string below =
      file ? absl::StrCat(kNamespaceId, "/") : absl::StrCat(kNamespaceId, "/visibility/");
  for (size_t i = 2; i < parts.size(); ++i) {
    const size_t newline = parts[i].find('\n');
    if (newline == std::string::npos) continue;
    (void)store.Put(below + parts[i].substr(0, newline), parts[i].substr(newline + 1));
  }
  tock::archival::VisibilityArchive archive(Uri(file), store);
  const std::string query = parts.empty() ? "" : parts[0];
  std::string token = parts.size() > 1 ? parts[1] : "";
  const absl::Time now = absl::FromUnixSeconds(1795873062);
  for (int page = 0; page < 8; ++page) {
    auto listed = archive.Query(kNamespaceId, query, 2, token, now);
    if (!listed.ok()) {
      // A token of ours is never refused (a record that does not parse may still be).
      FUZZ_CHECK(page == 0 || listed.status().code() != absl::StatusCode::kInvalidArgument,
                 listed.status().ToString());
      return;
    }
    if (listed->next_page_token.empty()) return;
    token = listed->next_page_token;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string rest(tock::fuzz::AsText(data + 1, size - 1));
  const std::vector<std::string> parts = absl::StrSplit(rest, "\n--\n");
  switch (data[0] % 4) {
    case 0:
      Histories(true, parts, rest);
      break;
    case 1:
      Histories(false, parts, rest);
      break;
    case 2:
      Visibility(true, parts);
      break;
    default:
      Visibility(false, parts);
      break;
  }
  return 0;
}
