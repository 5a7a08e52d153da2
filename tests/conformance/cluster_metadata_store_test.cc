// The ClusterMetadataStore contract and schema migrations on every backend.
#include "server-core/persistence/cluster_metadata_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

using ClusterMetadataStoreTest = BackendTest;

TEST_P(ClusterMetadataStoreTest, ShardCountIsFixedAtCreation) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p->cluster_metadata().InitHistoryShardCount(4), 4);
  EXPECT_EQ(*p->cluster_metadata().InitHistoryShardCount(4), 4);
  absl::Status s = p->cluster_metadata().InitHistoryShardCount(8).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("8 in the configuration but 4 in the database"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(p->location()), std::string::npos);
}

TEST_P(ClusterMetadataStoreTest, ClusterNameIsFixedAtCreation) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->cluster_metadata().InitClusterName("a").ok());
  EXPECT_TRUE(p->cluster_metadata().InitClusterName("a").ok());
  absl::Status s = p->cluster_metadata().InitClusterName("b");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("\"b\""), std::string::npos);
  EXPECT_NE(s.message().find("\"a\""), std::string::npos);
}

TEST_P(ClusterMetadataStoreTest, ReopenKeepsFactsAndMigrationsAreIdempotent) {
  {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(p->cluster_metadata().InitHistoryShardCount(16).ok());
  }
  auto p = Open();
  ASSERT_NE(p, nullptr);
  if (Durable()) {
    EXPECT_EQ(p->cluster_metadata().InitHistoryShardCount(4).status().code(),
              absl::StatusCode::kFailedPrecondition);
  } else {
    EXPECT_TRUE(p->cluster_metadata().InitHistoryShardCount(4).ok());
  }
}

TEST_P(ClusterMetadataStoreTest, NewerSchemaIsRefused) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database cannot be prepared beforehand";
  { ASSERT_NE(Open(), nullptr); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.File("tock.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "INSERT INTO schema_version(version, description, applied_ms) "
                         "VALUES (999, 'from the future', 0)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto opened = OpenPersistence(Config());
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(opened.status().message().find("999"), std::string::npos);
}

TEST(PersistenceOpenTest, UnknownEngineAndMissingDirectory) {
  PersistenceConfig config;
  config.engine = "mongo";
  EXPECT_EQ(OpenPersistence(config).status().message(),
            "persistence.engine: unknown engine \"mongo\"; allowed: sqlite");
  config.engine = "sqlite";
  config.sqlite_path = "/nonexistent-dir-for-tock-tests/x.db";
  absl::Status s = OpenPersistence(config).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("/nonexistent-dir-for-tock-tests"), std::string::npos);
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(ClusterMetadataStoreTest);

}  // namespace
}  // namespace tock::persistence
