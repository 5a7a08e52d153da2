#include "lib/common/ids.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <mutex>
#include <random>
#include <utility>

#include "absl/strings/str_format.h"

namespace tock {

namespace {

// Seeded with 256 bits from the OS: one random_device() call gives only 32 bits, so two
// processes would share a UUID sequence with probability 2^-32 per pair (run ids would
// collide across servers).
std::mt19937_64 SeededEngine() {
  std::random_device device;
  std::seed_seq seed{device(), device(), device(), device(),
                     device(), device(), device(), device()};
  return std::mt19937_64(seed);
}

// 128 random bits, from one engine seeded once per process.
std::pair<uint64_t, uint64_t> RandomBits() {
  static std::mutex mu;
  static std::mt19937_64 rng = SeededEngine();
  std::lock_guard lock(mu);
  const uint64_t hi = rng();
  return {hi, rng()};
}

// The canonical form of a UUID of `version` whose other bits are `hi` and `lo`.
std::string Format(uint64_t hi, uint64_t lo, uint64_t version) {
  hi = (hi & 0xffffffffffff0fffULL) | (version << 12);
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // RFC 4122 variant
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff,
                         lo >> 48, lo & 0xffffffffffffULL);
}

}  // namespace

std::string NewUuid() {
  const auto [hi, lo] = RandomBits();
  return Format(hi, lo, 4);
}

std::string NewTimeOrderedUuid(absl::Time now) {
  const auto [hi, lo] = RandomBits();
  const uint64_t ms = static_cast<uint64_t>(std::max<int64_t>(0, absl::ToUnixMillis(now)));
  return Format((ms << 16) | (hi & 0xffff), lo, 7);
}

bool IsUuid(const std::string& text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (text[i] == '-')) return false;
    if (!dash && !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

}  // namespace tock
