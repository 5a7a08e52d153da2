#include "tests/conformance/backends.h"

#include <sqlite3.h>

namespace tock::persistence {

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  switch (info.param) {
    case Backend::kSqliteMemory:
      return "SqliteMemory";
    case Backend::kSqliteFile:
      return "SqliteFile";
  }
  return "Unknown";
}

PersistenceConfig BackendTest::Config() const {
  PersistenceConfig config;
  config.engine = "sqlite";
  config.sqlite_path = GetParam() == Backend::kSqliteFile ? dir_.File("tock.db") : ":memory:";
  return config;
}

std::unique_ptr<Persistence> BackendTest::Open() {
  absl::StatusOr<std::unique_ptr<Persistence>> opened = OpenPersistence(Config());
  EXPECT_TRUE(opened.ok()) << opened.status();
  return opened.ok() ? std::move(*opened) : nullptr;
}

namespace {

// Opens the SQLite file of a closed Persistence; fails the test when it cannot.
sqlite3* OpenRaw(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK) << path;
  return db;
}

}  // namespace

std::vector<int64_t> BackendTest::AppliedSchemaVersions() const {
  std::vector<int64_t> versions;
  EXPECT_TRUE(Durable()) << "an in-memory database is gone once closed";
  if (!Durable()) return versions;
  sqlite3* db = OpenRaw(Config().sqlite_path);
  sqlite3_stmt* q = nullptr;
  EXPECT_EQ(
      sqlite3_prepare_v2(db, "SELECT version FROM schema_version ORDER BY rowid", -1, &q, nullptr),
      SQLITE_OK)
      << sqlite3_errmsg(db);
  while (q != nullptr && sqlite3_step(q) == SQLITE_ROW) {
    versions.push_back(sqlite3_column_int64(q, 0));
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  return versions;
}

void BackendTest::RecordSchemaVersion(int64_t version) const {
  ASSERT_TRUE(Durable()) << "an in-memory database is gone once closed";
  sqlite3* db = OpenRaw(Config().sqlite_path);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "INSERT INTO schema_version(version, description, applied_ms) "
                               "VALUES (?, 'written by a newer server', 0)",
                               -1, &q, nullptr),
            SQLITE_OK);
  sqlite3_bind_int64(q, 1, version);
  EXPECT_EQ(sqlite3_step(q), SQLITE_DONE) << sqlite3_errmsg(db);
  sqlite3_finalize(q);
  sqlite3_close(db);
}

}  // namespace tock::persistence
