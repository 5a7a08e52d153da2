// The SQLite prepared-statement cache: fixed statements stay cached, statements built at run
// time are bounded by count and by text size (issue 10, §1.5).
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/sqlite/sqlite_db.h"

namespace tock::persistence {
namespace {

TEST(SqliteStatementCacheTest, DynamicStatementsAreBoundedByCount) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_TRUE(db.ok()) << db.status();
  std::lock_guard lock((*db)->mutex());
  for (int i = 0; i < 1'000; ++i) {
    auto q = (*db)->PrepareDynamic(absl::StrCat("SELECT ", i));
    ASSERT_TRUE(q.ok()) << q.status();
    auto row = (*q)->Step();
    ASSERT_TRUE(row.ok() && *row);
    EXPECT_EQ((*q)->Int(0), i);
    (*q)->Reset();
    EXPECT_LE((*db)->dynamic_statements(), SqliteDb::kDynamicStatements);
  }
  EXPECT_EQ((*db)->dynamic_statements(), SqliteDb::kDynamicStatements);
  // A recently used statement is still cached and still works after others came and went.
  for (int round = 0; round < 3; ++round) {
    for (int i = 990; i < 1'000; ++i) {
      auto q = (*db)->PrepareDynamic(absl::StrCat("SELECT ", i));
      ASSERT_TRUE(q.ok());
      ASSERT_TRUE(*(*q)->Step());
      EXPECT_EQ((*q)->Int(0), i);
      (*q)->Reset();
    }
  }
  EXPECT_EQ((*db)->dynamic_statements(), SqliteDb::kDynamicStatements);
}

TEST(SqliteStatementCacheTest, DynamicStatementsAreBoundedBySize) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_TRUE(db.ok()) << db.status();
  std::lock_guard lock((*db)->mutex());
  const std::string padding(300'000, ' ');
  for (int i = 0; i < 10; ++i) {
    auto q = (*db)->PrepareDynamic(absl::StrCat("SELECT ", i, padding));
    ASSERT_TRUE(q.ok()) << q.status();
    ASSERT_TRUE(*(*q)->Step());
    EXPECT_EQ((*q)->Int(0), i);
    (*q)->Reset();
    EXPECT_LE((*db)->dynamic_statements(), SqliteDb::kDynamicBytes / padding.size());
  }
  // One larger than the whole budget still runs, and is dropped by the next one.
  const std::string huge(SqliteDb::kDynamicBytes + 10, ' ');
  auto big = (*db)->PrepareDynamic("SELECT 7" + huge);
  ASSERT_TRUE(big.ok());
  ASSERT_TRUE(*(*big)->Step());
  (*big)->Reset();
  EXPECT_EQ((*db)->dynamic_statements(), 1u);
  ASSERT_TRUE((*db)->PrepareDynamic("SELECT 8").ok());
  EXPECT_EQ((*db)->dynamic_statements(), 1u);
}

TEST(SqliteStatementCacheTest, FixedStatementsStayCachedAndErrorsOmitTheText) {
  auto db = SqliteDb::Open(":memory:");
  ASSERT_TRUE(db.ok()) << db.status();
  std::lock_guard lock((*db)->mutex());
  auto first = (*db)->Prepare("SELECT 1");
  auto again = (*db)->Prepare("SELECT 1");
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(*first, *again) << "the same statement object";
  EXPECT_EQ((*db)->dynamic_statements(), 0u);
  auto bad = (*db)->PrepareDynamic("SELECT 1 FROM nowhere WHERE 1 = 1 AND 'a secret' = 'x'");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find("a secret"), std::string::npos) << bad.status();
  EXPECT_EQ((*db)->dynamic_statements(), 0u) << "a failed statement is not cached";
}

}  // namespace
}  // namespace tock::persistence
