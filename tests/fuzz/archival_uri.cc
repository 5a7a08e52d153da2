// Archival URIs (lib/archival/archival_uri.h) from RegisterNamespace / UpdateNamespace and
// the configuration: any text is parsed or refused with INVALID_ARGUMENT; a parsed URI is a
// file URI with an absolute directory or an s3 URI with a bucket, and parses the same again.
#include "lib/archival/archival_uri.h"

#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(tock::fuzz::AsText(data, size));
  auto uri = tock::archival::ParseArchivalUri(text);
  if (!uri.ok()) {
    FUZZ_CHECK(uri.status().code() == absl::StatusCode::kInvalidArgument, uri.status().ToString());
    return 0;
  }
  FUZZ_CHECK(uri->scheme == "file" || uri->scheme == "s3", text);
  if (uri->scheme == "file") FUZZ_CHECK(!uri->path.empty() && uri->path[0] == '/', text);
  if (uri->scheme == "s3") FUZZ_CHECK(!uri->bucket.empty(), text);
  auto again = tock::archival::ParseArchivalUri(uri->text);
  FUZZ_CHECK(again.ok() && again->scheme == uri->scheme && again->bucket == uri->bucket &&
                 again->path == uri->path,
             text);
  return 0;
}
