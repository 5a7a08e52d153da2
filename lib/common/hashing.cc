#include "lib/common/hashing.h"

#include <farmhash.h>

namespace tock {

uint32_t Fingerprint32(absl::string_view data) {
  return util::Fingerprint32(data.data(), data.size());
}

uint64_t Fingerprint64(absl::string_view data) {
  return util::Fingerprint64(data.data(), data.size());
}

}  // namespace tock
