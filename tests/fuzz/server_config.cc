// The YAML configuration of tock-server (server-core/config/server_config.h): any document
// is parsed or refused with INVALID_ARGUMENT (never an exception of the YAML library or a
// crash); what parses validates or is refused with INVALID_ARGUMENT.
#include "server-core/config/server_config.h"

#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string yaml(tock::fuzz::AsText(data, size));
  auto config = tock::server::ParseServerConfig(yaml);
  if (!config.ok()) {
    FUZZ_CHECK(config.status().code() == absl::StatusCode::kInvalidArgument,
               config.status().ToString());
    return 0;
  }
  const absl::Status valid = config->Validate();
  FUZZ_CHECK(valid.ok() || valid.code() == absl::StatusCode::kInvalidArgument, valid.ToString());
  if (valid.ok()) (void)config->EffectiveClusterMetadata();
  return 0;
}
