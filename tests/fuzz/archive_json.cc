// Archive JSON (lib/archival/archive_json.h) as Temporal's archivers and ours write it: any
// bytes parse or are refused with DATA_LOSS, as a History, a HistoryBlob and a visibility
// record; what parses is written by ArchiveJson in a form that parses to the same message.
#include "lib/archival/archive_json.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <memory>

#include "temporal/api/history/v1/message.pb.h"
#include "tests/fuzz/fuzz_check.h"
#include "tock/archiver/v1/archive.pb.h"

namespace {

std::string Deterministic(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

void RoundTrip(std::string_view json, const google::protobuf::Message& prototype) {
  std::unique_ptr<google::protobuf::Message> message(prototype.New());
  const absl::Status parsed = tock::archival::ParseArchiveJson(json, *message, "fuzz");
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.code() == absl::StatusCode::kDataLoss, parsed.ToString());
    return;
  }
  const std::string written = tock::archival::ArchiveJson(*message);
  std::unique_ptr<google::protobuf::Message> again(prototype.New());
  const absl::Status reparsed = tock::archival::ParseArchiveJson(written, *again, "fuzz");
  FUZZ_CHECK(reparsed.ok(), reparsed.ToString() + "\nwritten: " + written);
  FUZZ_CHECK(Deterministic(*message) == Deterministic(*again),
             std::string(json) + "\nwritten: " + written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(tock::fuzz::AsText(data, size));  // own buffer: ASan sees overreads
  RoundTrip(json, temporal::api::history::v1::History::default_instance());
  RoundTrip(json, tock::archiver::v1::HistoryBlob::default_instance());
  RoundTrip(json, tock::archiver::v1::VisibilityRecord::default_instance());
  return 0;
}
