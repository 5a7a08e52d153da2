// The in-memory SQLite database: one memdb buffer whose large blocks live on mappings of
// their own (sqlite_allocator.h), and a clear error, losing nothing, when it is full.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/sqlite/sqlite_allocator.h"
#include "server-core/persistence/sqlite/sqlite_db.h"

namespace tock::persistence {
namespace {

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// How many pages of [start, start + length) are mapped (mincore fails with ENOMEM on one that
// is not). /proc/self/maps cannot say whether a block has a mapping of its own: the kernel
// merges neighbouring anonymous mappings into one entry. Being unmapped when freed says it.
size_t MappedPages(const void* start, size_t length) {
  size_t mapped = 0;
  for (size_t at = 0; at < length; at += PageSize()) {
    unsigned char resident = 0;
    mapped += mincore(const_cast<char*>(static_cast<const char*>(start) + at), 1, &resident) == 0;
  }
  return mapped;
}

// The header SQLite's blocks carry in front (sqlite_allocator.cc): a mapping starts there.
const void* MappingStart(const void* block) { return static_cast<const char*>(block) - 8; }

size_t PageRounded(size_t bytes) { return (bytes + 8 + PageSize() - 1) / PageSize() * PageSize(); }

bool NoneMapped(const void* start, size_t bytes) { return MappedPages(start, bytes) == 0; }

// A block of ours on a mapping starts one header past a page boundary (glibc's own mapped
// chunks, under SQLite's default header, would put it 24 bytes past one), and all its pages
// are mapped.
bool OnAMappingOfItsOwn(const void* block, size_t bytes) {
  const void* start = MappingStart(block);
  return reinterpret_cast<uintptr_t>(start) % PageSize() == 0 &&
         MappedPages(start, PageRounded(bytes)) == PageRounded(bytes) / PageSize();
}

void Fill(void* block, size_t bytes, unsigned char seed) {
  auto* p = static_cast<unsigned char*>(block);
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(seed + i * 31);
}

bool Holds(const void* block, size_t bytes, unsigned char seed) {
  const auto* p = static_cast<const unsigned char*>(block);
  for (size_t i = 0; i < bytes; ++i) {
    if (p[i] != static_cast<unsigned char>(seed + i * 31)) return false;
  }
  return true;
}

TEST(SqliteAllocatorTest, LargeBlocksLiveOnMappingsOfTheirOwnAndKeepTheirBytesAcrossResizes) {
  // Opening a database installs the allocator, before SQLite is first used.
  auto db = SqliteDb::Open(":memory:");
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE(InstallSqliteAllocator());

  constexpr size_t kSmall = 1000, kLarge = 3 << 20, kLarger = 40 << 20, kBack = 100 << 10;
  void* block = sqlite3_malloc64(kSmall);
  ASSERT_NE(block, nullptr);
  EXPECT_GE(sqlite3_msize(block), kSmall);
  Fill(block, kSmall, 1);

  block = sqlite3_realloc64(block, kLarge);  // across the threshold: copied onto a mapping
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(Holds(block, kSmall, 1));
  EXPECT_EQ(sqlite3_msize(block), kLarge);
  EXPECT_TRUE(OnAMappingOfItsOwn(block, kLarge));
  Fill(block, kLarge, 2);

  block = sqlite3_realloc64(block, kLarger);  // grown by mremap
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(Holds(block, kLarge, 2));
  EXPECT_EQ(sqlite3_msize(block), kLarger);
  EXPECT_TRUE(OnAMappingOfItsOwn(block, kLarger));
  const void* mapping = MappingStart(block);

  block = sqlite3_realloc64(block, kBack);  // below the threshold again: back on the heap
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(Holds(block, kBack, 2));
  EXPECT_EQ(sqlite3_msize(block), kBack);
  // Copied before the mapping went, so nothing else can have been placed there since.
  EXPECT_TRUE(NoneMapped(mapping, PageRounded(kLarger))) << "the mapping went back";
  sqlite3_free(block);

  void* large = sqlite3_malloc64(kLarge);
  ASSERT_NE(large, nullptr);
  const void* start = MappingStart(large);
  EXPECT_TRUE(OnAMappingOfItsOwn(large, kLarge));
  sqlite3_free(large);
  EXPECT_TRUE(NoneMapped(start, PageRounded(kLarge))) << "freed blocks are unmapped at once";
}

TEST(SqliteInMemoryTest, AFullDatabaseSaysSoAndKeepsWhatItHad) {
  constexpr int64_t kLimit = 1 << 20;
  auto db = SqliteDb::Open(":memory:", kLimit);
  ASSERT_TRUE(db.ok()) << db.status();
  std::lock_guard lock((*db)->mutex());
  ASSERT_TRUE((*db)->Exec("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)").ok());

  const std::string chunk(64 << 10, 'x');
  int stored = 0;
  absl::Status refused;
  for (int i = 0; i < 100 && refused.ok(); ++i) {  // 100 chunks are 6 MiB: more than the limit
    auto insert = (*db)->Prepare("INSERT INTO blobs (data) VALUES (?)");
    ASSERT_TRUE(insert.ok()) << insert.status();
    refused = (*insert)->BindBlob(1, chunk).Run();
    if (refused.ok()) ++stored;
  }
  ASSERT_FALSE(refused.ok()) << "a 1 MiB database took 6 MiB";
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(refused.message(),
            "sqlite: the in-memory database is full (it holds at most 1 MiB); give "
            "tock-server a database file (--db-file) to keep more");
  EXPECT_GE(stored, 10);

  // The failed statement rolled back alone: every row stored before it is intact.
  auto count = (*db)->Prepare("SELECT count(*), sum(length(data)) FROM blobs");
  ASSERT_TRUE(count.ok());
  ASSERT_TRUE(*(*count)->Step());
  EXPECT_EQ((*count)->Int(0), stored);
  EXPECT_EQ((*count)->Int(1), int64_t{stored} * static_cast<int64_t>(chunk.size()));
  (*count)->Reset();
  // Freeing space makes room again.
  ASSERT_TRUE((*db)->Exec("DELETE FROM blobs WHERE id % 2 = 0").ok());
  auto insert = (*db)->Prepare("INSERT INTO blobs (data) VALUES (?)");
  ASSERT_TRUE(insert.ok());
  EXPECT_TRUE((*insert)->BindBlob(1, chunk).Run().ok());
}

}  // namespace
}  // namespace tock::persistence
