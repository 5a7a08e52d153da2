// The slower disk of persistence.fault_injection.sync_delay (slow_sync_vfs.h): every sync
// of a database file waits first, and everything else reaches the real files unchanged.
// A binary of its own: the VFS becomes the process's default.
#include "server-core/persistence/sqlite/slow_sync_vfs.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>

#include "server-core/persistence/sqlite/sqlite_db.h"
#include "tests/support/process.h"

namespace tock::persistence {
namespace {

using tock::testing::TempDir;

TEST(SlowSyncVfsTest, EachSyncWaitsAndTheDatabaseStillWorks) {
  TempDir dir;
  const std::string path = dir.File("slow.db");
  constexpr auto kDelay = std::chrono::milliseconds(30);
  InstallSlowSyncVfs(absl::Milliseconds(30));
  {
    auto db = SqliteDb::Open(path, SqliteDb::kInMemoryLimitBytes, SqliteDb::Synchronous::kFull);
    ASSERT_TRUE(db.ok()) << db.status();
    std::lock_guard lock((*db)->mutex());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)").ok());
    const uint64_t before = SlowSyncCount();
    const auto start = std::chrono::steady_clock::now();
    // Two commits at FULL: each syncs the write-ahead log once, through the slow VFS.
    ASSERT_TRUE((*db)->Exec("INSERT INTO t(v) VALUES ('a')").ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO t(v) VALUES ('b')").ok());
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_GE(SlowSyncCount() - before, 2u);
    EXPECT_GE(took, 2 * kDelay) << "each commit's sync waits the delay first";
  }
  // Reopened (the WAL, its shared memory and the checkpoint at close went through the
  // forwarding methods): both rows are there.
  auto db = SqliteDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  std::lock_guard lock((*db)->mutex());
  absl::StatusOr<Statement*> count = (*db)->Prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(count.ok()) << count.status();
  ASSERT_TRUE((*count)->Step().value_or(false));
  EXPECT_EQ((*count)->Int(0), 2);
}

}  // namespace
}  // namespace tock::persistence
