// FarmHash fingerprints, byte-for-byte those Temporal uses for shard placement and archive
// paths (Debian's libfarmhash is the same algorithm as Go's dgryski/go-farm).
#pragma once

#include <cstdint>
#include "absl/strings/string_view.h"

namespace tock {

uint32_t Fingerprint32(absl::string_view data);
uint64_t Fingerprint64(absl::string_view data);

}  // namespace tock
