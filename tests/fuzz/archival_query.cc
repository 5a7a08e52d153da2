// The archived-visibility query languages (lib/archival/visibility_query.h), file and s3:
// any text is parsed or refused with a bounded INVALID_ARGUMENT, in bounded stack (a query of
// thousands of '(' used to recurse once per parenthesis).
#include "absl/time/time.h"
#include "lib/archival/visibility_query.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

void CheckRefusal(const absl::Status& status) {
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument, status.ToString());
  FUZZ_CHECK(status.message().size() <= tock::fuzz::kMaxMessageBytes, status.message());
}

void Parse(std::string_view query) {
  const absl::Time now = absl::FromUnixSeconds(1795873062);  // 2026-11-28T13:37:42Z
  auto file = tock::archival::ParseFileVisibilityQuery(query, now);
  if (!file.ok()) {
    CheckRefusal(file.status());
  } else if (!file->matches_nothing) {
    FUZZ_CHECK(file->earliest_close <= file->latest_close, std::string(query));
    FUZZ_CHECK(file->latest_close <= now, std::string(query));
  }
  auto s3 = tock::archival::ParseS3VisibilityQuery(query);
  if (!s3.ok()) {
    CheckRefusal(s3.status());
  } else if (!s3->empty) {
    FUZZ_CHECK(s3->workflow_id.has_value() != s3->workflow_type.has_value(), std::string(query));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Plenty of stack for the 100 parentheses allowed, too little for thousands.
  tock::fuzz::OnSmallStack(tock::fuzz::kParserStackBytes,
                           [&] { Parse(tock::fuzz::AsText(data, size)); });
  return 0;
}
