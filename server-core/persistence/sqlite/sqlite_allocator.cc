#include "server-core/persistence/sqlite/sqlite_allocator.h"

#include <sqlite3.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace tock::persistence {
namespace {

constexpr uint64_t kMappedFrom = uint64_t{1} << 20;
// The header: the block's size, shifted left by one, with the low bit set for a mapping.
constexpr size_t kHeader = sizeof(uint64_t);

uint64_t& Header(void* block) { return *(static_cast<uint64_t*>(block) - 1); }
uint64_t Size(void* block) { return Header(block) >> 1; }
bool Mapped(void* block) { return (Header(block) & 1) != 0; }

size_t MappingLength(uint64_t size) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (size + kHeader + page - 1) / page * page;
}

void* Finish(void* raw, uint64_t size, bool mapped) {
  auto* header = static_cast<uint64_t*>(raw);
  *header = (size << 1) | (mapped ? 1 : 0);
  return header + 1;
}

void* Allocate(int n) {
  if (n <= 0) return nullptr;
  const uint64_t size = static_cast<uint64_t>(n);
  if (size >= kMappedFrom) {
    void* raw = mmap(nullptr, MappingLength(size), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return raw == MAP_FAILED ? nullptr : Finish(raw, size, true);
  }
  void* raw = std::malloc(size + kHeader);
  return raw == nullptr ? nullptr : Finish(raw, size, false);
}

void Free(void* block) {
  if (block == nullptr) return;
  void* raw = static_cast<uint64_t*>(block) - 1;
  if (Mapped(block)) {
    munmap(raw, MappingLength(Size(block)));
  } else {
    std::free(raw);
  }
}

void* Reallocate(void* block, int n) {
  if (n <= 0) return nullptr;  // SQLite frees with xFree, never with a zero realloc
  const uint64_t size = static_cast<uint64_t>(n);
  void* raw = static_cast<uint64_t*>(block) - 1;
  if (Mapped(block) && size >= kMappedFrom) {
    void* moved = mremap(raw, MappingLength(Size(block)), MappingLength(size), MREMAP_MAYMOVE);
    return moved == MAP_FAILED ? nullptr : Finish(moved, size, true);
  }
  if (!Mapped(block) && size < kMappedFrom) {
    void* grown = std::realloc(raw, size + kHeader);
    return grown == nullptr ? nullptr : Finish(grown, size, false);
  }
  void* copy = Allocate(n);  // across the threshold: once per block
  if (copy == nullptr) return nullptr;
  std::memcpy(copy, block, std::min(Size(block), size));
  Free(block);
  return copy;
}

int BlockSize(void* block) { return block == nullptr ? 0 : static_cast<int>(Size(block)); }
int Roundup(int n) { return (n + 7) & ~7; }
int Init(void*) { return SQLITE_OK; }
void Shutdown(void*) {}

}  // namespace

bool InstallSqliteAllocator() {
  static const bool installed = [] {
    static const sqlite3_mem_methods methods = {Allocate, Free, Reallocate, BlockSize,
                                                Roundup,  Init, Shutdown,   nullptr};
    return sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) == SQLITE_OK;
  }();
  return installed;
}

}  // namespace tock::persistence
