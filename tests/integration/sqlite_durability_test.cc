// Durability is a stated choice (review P1-9): `persistence.sqlite.synchronous: full | normal`
// is parsed and refused when bad, full is the default of a database file, and the PRAGMA in
// force on the connection is the one asked for (read back from SQLite, not from the config).
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server-core/config/server_config.h"
#include "server-core/persistence/persistence.h"
#include "server-core/persistence/sqlite/sqlite_db.h"
#include "tests/support/process.h"

namespace tock::persistence {
namespace {

using tock::testing::TempDir;

// SQLite's values of PRAGMA synchronous.
constexpr int kPragmaNormal = 1;
constexpr int kPragmaFull = 2;

TEST(SqliteDurabilityTest, ConfigKeyParsedWithFullAsTheDefault) {
  absl::StatusOr<server::ServerConfig> defaults = server::ParseServerConfig("");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->persistence.sqlite_synchronous, "full");

  for (const std::string value : {"full", "normal"}) {
    absl::StatusOr<server::ServerConfig> parsed = server::ParseServerConfig(
        "persistence: {sqlite: {path: tock.db, synchronous: " + value + "}}\n");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->persistence.sqlite_synchronous, value);
    EXPECT_TRUE(parsed->Validate().ok()) << parsed->Validate();
  }
}

TEST(SqliteDurabilityTest, BadValueIsRefusedNamingTheKeyAndTheValuesAllowed) {
  absl::StatusOr<server::ServerConfig> parsed =
      server::ParseServerConfig("persistence: {sqlite: {synchronous: fast}}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::Status s = parsed->Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(),
            "config persistence.sqlite.synchronous: must be full (a commit survives power loss) "
            "or normal (it survives a crash of the process only); got \"fast\"");

  // A long value is quoted only in part.
  server::ServerConfig config;
  config.persistence.sqlite_synchronous = std::string(1000, 'x');
  s = config.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_LT(s.message().size(), 250u) << s;

  // OpenPersistence refuses it too (a caller that skipped Validate).
  PersistenceConfig bad;
  bad.sqlite_synchronous = "off";
  EXPECT_EQ(OpenPersistence(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SqliteDurabilityTest, HandlerThreadsDefaultTo32AndAreBounded) {
  absl::StatusOr<server::ServerConfig> defaults = server::ParseServerConfig("");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->persistence.sqlite_handler_threads, 32);

  for (int value : {0, 1, 1024}) {
    absl::StatusOr<server::ServerConfig> parsed = server::ParseServerConfig(
        "persistence: {sqlite: {handler_threads: " + std::to_string(value) + "}}\n");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->persistence.sqlite_handler_threads, value);
    EXPECT_TRUE(parsed->Validate().ok()) << parsed->Validate();
  }
  for (int value : {-1, 1025}) {
    absl::StatusOr<server::ServerConfig> parsed = server::ParseServerConfig(
        "persistence: {sqlite: {handler_threads: " + std::to_string(value) + "}}\n");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    absl::Status s = parsed->Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_EQ(s.message(), "config persistence.sqlite.handler_threads: must be between 0 and 1024 "
                           "(0: calls run on gRPC's threads); got " + std::to_string(value));
  }
  absl::StatusOr<server::ServerConfig> word =
      server::ParseServerConfig("persistence: {sqlite: {handler_threads: many}}\n");
  EXPECT_EQ(word.status().code(), absl::StatusCode::kInvalidArgument) << word.status();
}

TEST(SqliteDurabilityTest, PragmaInForceIsTheOneAsked) {
  TempDir dir;
  struct Case {
    SqliteDb::Synchronous asked;
    int in_force;
  };
  for (const Case& c : {Case{SqliteDb::Synchronous::kFull, kPragmaFull},
                        Case{SqliteDb::Synchronous::kNormal, kPragmaNormal}}) {
    const std::string path = dir.File(absl::StrCat("db", c.in_force, ".db"));
    absl::StatusOr<std::unique_ptr<SqliteDb>> db =
        SqliteDb::Open(path, SqliteDb::kInMemoryLimitBytes, c.asked);
    ASSERT_TRUE(db.ok()) << db.status();
    std::lock_guard lock((*db)->mutex());
    absl::StatusOr<int> synchronous = (*db)->SynchronousInForce();
    ASSERT_TRUE(synchronous.ok()) << synchronous.status();
    EXPECT_EQ(*synchronous, c.in_force);
    EXPECT_FALSE((*db)->in_memory());
  }
  // A database file opened with the defaults is power-safe.
  absl::StatusOr<std::unique_ptr<SqliteDb>> plain = SqliteDb::Open(dir.File("plain.db"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  std::lock_guard lock((*plain)->mutex());
  EXPECT_EQ((*plain)->SynchronousInForce().value_or(-1), kPragmaFull);
}

// What the banner shows comes from the database the server opened.
TEST(SqliteDurabilityTest, PersistenceStatesTheDurabilityInForce) {
  TempDir dir;
  PersistenceConfig config;
  config.sqlite_path = dir.File("full.db");
  absl::StatusOr<std::unique_ptr<Persistence>> full = OpenPersistence(config);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ((*full)->durability(), "full (survives power loss)");

  config.sqlite_path = dir.File("normal.db");
  config.sqlite_synchronous = "normal";
  absl::StatusOr<std::unique_ptr<Persistence>> normal = OpenPersistence(config);
  ASSERT_TRUE(normal.ok()) << normal.status();
  EXPECT_TRUE(absl::StartsWith((*normal)->durability(), "normal (survives a crash of the process"))
      << (*normal)->durability();

  absl::StatusOr<std::unique_ptr<Persistence>> memory = OpenPersistence({});
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_TRUE(absl::StartsWith((*memory)->durability(), "none (in memory"))
      << (*memory)->durability();
}

}  // namespace
}  // namespace tock::persistence
