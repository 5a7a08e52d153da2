// The in-memory SQLite database: one memdb buffer whose large blocks live on mappings of
// their own (sqlite_allocator.h), and a clear error, losing nothing, when it is full.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/sqlite/sqlite_allocator.h"
#include "server-core/persistence/sqlite/sqlite_db.h"

namespace tock::persistence {
namespace {

// Whether /proc/self/maps lists a mapping from `start` to exactly `start + length`.
bool MappedExactly(const void* start, size_t length) {
  const auto from = reinterpret_cast<uintptr_t>(start);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && lo == from) {
      return hi - lo == length;
    }
  }
  return false;
}

// The header SQLite's blocks carry in front (sqlite_allocator.cc): a mapping starts there.
const void* MappingStart(const void* block) { return static_cast<const char*>(block) - 8; }

size_t PageRounded(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + 8 + page - 1) / page * page;
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
  EXPECT_TRUE(MappedExactly(MappingStart(block), PageRounded(kLarge)));
  Fill(block, kLarge, 2);

  block = sqlite3_realloc64(block, kLarger);  // grown by mremap
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(Holds(block, kLarge, 2));
  EXPECT_EQ(sqlite3_msize(block), kLarger);
  EXPECT_TRUE(MappedExactly(MappingStart(block), PageRounded(kLarger)));
  const void* mapping = MappingStart(block);

  block = sqlite3_realloc64(block, kBack);  // below the threshold again: back on the heap
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(Holds(block, kBack, 2));
  EXPECT_EQ(sqlite3_msize(block), kBack);
  EXPECT_FALSE(MappedExactly(mapping, PageRounded(kLarger))) << "the mapping went back";
  sqlite3_free(block);

  void* large = sqlite3_malloc64(kLarge);
  ASSERT_NE(large, nullptr);
  const void* start = MappingStart(large);
  EXPECT_TRUE(MappedExactly(start, PageRounded(kLarge)));
  sqlite3_free(large);
  EXPECT_FALSE(MappedExactly(start, PageRounded(kLarge))) << "freed blocks are unmapped at once";
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
