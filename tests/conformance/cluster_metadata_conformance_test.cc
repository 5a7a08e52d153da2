// The ClusterMetadataStore contract (cluster_metadata_store.h), schema migrations and
// OpenPersistence (persistence.h) on every backend.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "server-core/persistence/cluster_metadata_store.h"
#include "tests/conformance/backends.h"

namespace tock::persistence {
namespace {

using ::testing::HasSubstr;

class ClusterMetadataStoreTest : public BackendTest {};

TEST_P(ClusterMetadataStoreTest, ShardCountIsFixedAtCreation) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  absl::StatusOr<int32_t> first = p->cluster_metadata().InitHistoryShardCount(4);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, 4);
  EXPECT_EQ(*p->cluster_metadata().InitHistoryShardCount(4), 4);

  absl::Status s = p->cluster_metadata().InitHistoryShardCount(8).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            absl::StrCat("history shard count is 8 in the configuration but 4 in the database at ",
                         p->location(),
                         "; the number of history shards is fixed when the database is created"));
  // The refusal stored nothing.
  EXPECT_EQ(*p->cluster_metadata().InitHistoryShardCount(4), 4);
}

TEST_P(ClusterMetadataStoreTest, ANonPositiveShardCountIsNeverStored) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->cluster_metadata().InitHistoryShardCount(0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p->cluster_metadata().InitHistoryShardCount(-3).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*p->cluster_metadata().InitHistoryShardCount(16), 16);
}

TEST_P(ClusterMetadataStoreTest, ClusterNameIsFixedAtCreation) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->cluster_metadata().InitClusterName("east").ok());
  EXPECT_TRUE(p->cluster_metadata().InitClusterName("east").ok());
  absl::Status s = p->cluster_metadata().InitClusterName("west");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("\"west\""));
  EXPECT_THAT(std::string(s.message()), HasSubstr("\"east\""));
  EXPECT_THAT(std::string(s.message()), HasSubstr(p->location()));
  EXPECT_TRUE(p->cluster_metadata().InitClusterName("east").ok());
}

TEST_P(ClusterMetadataStoreTest, ShardCountAndClusterNameAreIndependent) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->cluster_metadata().InitClusterName("east").ok());
  EXPECT_EQ(*p->cluster_metadata().InitHistoryShardCount(2), 2);
  EXPECT_TRUE(p->cluster_metadata().InitClusterName("east").ok());
}

TEST_P(ClusterMetadataStoreTest, FactsSurviveCloseAndReopen) {
  {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(p->cluster_metadata().InitHistoryShardCount(16).ok());
    ASSERT_TRUE(p->cluster_metadata().InitClusterName("east").ok());
  }
  auto p = Open();
  ASSERT_NE(p, nullptr);
  if (!Durable()) {
    // A new in-memory database: anything goes.
    EXPECT_EQ(*p->cluster_metadata().InitHistoryShardCount(4), 4);
    EXPECT_TRUE(p->cluster_metadata().InitClusterName("west").ok());
    return;
  }
  absl::Status s = p->cluster_metadata().InitHistoryShardCount(4).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("4 in the configuration but 16 in the database at " + p->location()));
  EXPECT_EQ(*p->cluster_metadata().InitHistoryShardCount(16), 16);
  EXPECT_EQ(p->cluster_metadata().InitClusterName("west").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(p->cluster_metadata().InitClusterName("east").ok());
}

// The host secret (routing/peer_credential.h): the first value offered is kept, whatever
// later starts offer, across a reopen too (every host of a database must read the same),
// and independently of the cluster id.
TEST_P(ClusterMetadataStoreTest, TheHostSecretIsWrittenOnceAndReadByEveryLaterStart) {
  const std::string first(64, 'a'), later(64, 'b');
  {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(*p->cluster_metadata().InitClusterId("id-1"), "id-1");
    absl::StatusOr<std::string> stored = p->cluster_metadata().InitHostSecret(first);
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_EQ(*stored, first);
    EXPECT_EQ(*p->cluster_metadata().InitHostSecret(later), first);
    EXPECT_EQ(*p->cluster_metadata().InitClusterId("id-2"), "id-1");
  }
  auto p = Open();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p->cluster_metadata().InitHostSecret(later), Durable() ? first : later);
}

TEST_P(ClusterMetadataStoreTest, MigrationsApplyOnceAndReopeningIsIdempotent) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database is migrated from scratch every time";
  {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(p->cluster_metadata().InitHistoryShardCount(4).ok());
  }
  const std::vector<int64_t> applied = AppliedSchemaVersions();
  ASSERT_FALSE(applied.empty());
  for (size_t i = 0; i < applied.size(); ++i) {
    EXPECT_EQ(applied[i], static_cast<int64_t>(i) + 1) << "versions are dense, from 1, in order";
  }
  for (int reopen = 0; reopen < 2; ++reopen) {
    auto p = Open();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(*p->cluster_metadata().InitHistoryShardCount(4), 4);
  }
  EXPECT_EQ(AppliedSchemaVersions(), applied);
}

TEST_P(ClusterMetadataStoreTest, ANewerSchemaIsRefusedNamingBothVersions) {
  if (!Durable()) GTEST_SKIP() << "an in-memory database cannot be prepared beforehand";
  { ASSERT_NE(Open(), nullptr); }
  const std::vector<int64_t> applied = AppliedSchemaVersions();
  ASSERT_FALSE(applied.empty());
  const int64_t known = applied.back();
  RecordSchemaVersion(known + 1);

  for (int attempt = 0; attempt < 2; ++attempt) {  // refused every time, nothing changed
    absl::StatusOr<std::unique_ptr<Persistence>> opened = OpenPersistence(Config());
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string message(opened.status().message());
    EXPECT_THAT(message, HasSubstr(absl::StrCat("schema version ", known + 1)));
    EXPECT_THAT(message, HasSubstr(absl::StrCat("up to ", known)));
    EXPECT_THAT(message, HasSubstr(Location()));
  }
  std::vector<int64_t> expected = applied;
  expected.push_back(known + 1);
  EXPECT_EQ(AppliedSchemaVersions(), expected);
}

TEST_P(ClusterMetadataStoreTest, ASecondServerOnTheSameDatabaseIsRefused) {
  if (!Durable()) GTEST_SKIP() << "every in-memory database is private to its opener";
  if (IsPostgres()) {
    GTEST_SKIP() << "SQLite only: several hosts share one PostgreSQL database by design "
                    "(SharedPostgres.TwoHostsMigrateOnceAndSeeEachOthersNamespaces)";
  }
  auto first = Open();
  ASSERT_NE(first, nullptr);
  // Waits out the busy timeout (a predecessor that is still exiting gets that long).
  absl::StatusOr<std::unique_ptr<Persistence>> second = OpenPersistence(Config());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(second.status().message()), HasSubstr(Config().sqlite_path));
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("another process"));
  // The first one is unharmed.
  EXPECT_EQ(*first->cluster_metadata().InitHistoryShardCount(4), 4);
  first.reset();
  EXPECT_NE(Open(), nullptr);
}

TEST_P(ClusterMetadataStoreTest, EngineAndLocation) {
  auto p = Open();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->engine(), IsPostgres() ? "postgres" : "sqlite");
  EXPECT_EQ(p->location(), Durable() ? Location() : ":memory:");
}

TOCK_INSTANTIATE_ON_EVERY_BACKEND(ClusterMetadataStoreTest);

TEST(OpenPersistenceTest, UnknownEngineIsRefused) {
  for (const std::string engine : {"mongo", "postgresql", "", "SQLite", "Postgres"}) {
    PersistenceConfig config;
    config.engine = engine;
    absl::Status s = OpenPersistence(config).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << engine;
    EXPECT_EQ(s.message(),
              absl::StrCat("persistence.engine: unknown engine \"", engine,
                           "\"; allowed: sqlite, postgres"));
  }
}

TEST(OpenPersistenceTest, PostgresWithoutAUrlIsRefused) {
  PersistenceConfig config;
  config.engine = "postgres";
  absl::Status s = OpenPersistence(config).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("persistence.postgres.url is empty"));
}

TEST(OpenPersistenceTest, AMissingDirectoryIsUnavailableNamingThePath) {
  PersistenceConfig config;
  config.sqlite_path = "/nonexistent-dir-for-tock-tests/sub/x.db";
  absl::Status s = OpenPersistence(config).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr(config.sqlite_path));
}

TEST(OpenPersistenceTest, EmptyPathIsInMemory) {
  PersistenceConfig config;
  config.sqlite_path = "";
  absl::StatusOr<std::unique_ptr<Persistence>> p = OpenPersistence(config);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)->location(), ":memory:");
}

TEST(OpenPersistenceTest, ARelativePathInTheCurrentDirectoryOpens) {
  tock::testing::TempDir dir;
  const std::filesystem::path previous = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  PersistenceConfig config;
  config.sqlite_path = "relative.db";
  absl::StatusOr<std::unique_ptr<Persistence>> p = OpenPersistence(config);
  std::filesystem::current_path(previous);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "relative.db"));
}

}  // namespace
}  // namespace tock::persistence
