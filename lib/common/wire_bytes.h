// Serialized protobuf bytes that start `begin` bytes into `buffer`. A writer that only
// learns a message's length after writing its body (a history page read row by row) leaves
// room in front and writes the length prefix last, so the body is never moved; the gRPC
// edge sends the bytes from `begin` without copying them.
#pragma once

#include <cstddef>
#include <string>

namespace tock {

struct WireBytes {
  std::string buffer;
  size_t begin = 0;
};

// Appends `v` as a protobuf base-128 varint.
inline void AppendVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

}  // namespace tock
