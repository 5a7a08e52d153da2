// What only the PostgreSQL backend has: the pool (types, errors, bounds, recovery after the
// database restarts), several hosts on one database, and the error for a database that
// cannot be reached. Against real PostgreSQL servers: the run's shared one (see
// backends.h) and, for the tests that stop or restart a server, one of their own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server-core/persistence/postgres/pg_db.h"
#include "server-core/persistence/postgres/pg_schema.h"
#include "server-core/persistence/postgres/postgres_persistence.h"
#include "tests/conformance/backends.h"
#include "tests/support/postgres_server.h"

namespace tock::persistence {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

NamespaceRecord Record(const std::string& name) {
  NamespaceRecord r;
  r.mutable_info()->set_id("id-" + name);
  r.mutable_info()->set_name(name);
  return r;
}

// A fresh database on the run's shared server, dropped at the end.
class SharedPostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    admin_url_ = PostgresAdminUrl(&why);
    ASSERT_FALSE(admin_url_.empty()) << why;
    database_ = CreateTestDatabase(admin_url_);
    ASSERT_FALSE(database_.empty());
    url_ = PostgresUrlOf(admin_url_, database_);
  }
  void TearDown() override {
    if (database_.empty()) return;
    absl::StatusOr<std::unique_ptr<PgPool>> admin = PgPool::Open(admin_url_);
    ASSERT_TRUE(admin.ok()) << admin.status();
    EXPECT_TRUE(
        (*admin)->Query(absl::StrCat("DROP DATABASE IF EXISTS ", database_, " WITH (FORCE)"))
            .ok());
  }
  std::unique_ptr<PgPool> Pool(PgPoolOptions options = {}) {
    absl::StatusOr<std::unique_ptr<PgPool>> pool = PgPool::Open(url_, options);
    EXPECT_TRUE(pool.ok()) << pool.status();
    return pool.ok() ? std::move(*pool) : nullptr;
  }

  std::string admin_url_, database_, url_;
};

TEST_F(SharedPostgres, ValuesRoundTripInBinary) {
  auto pool = Pool();
  ASSERT_NE(pool, nullptr);
  const std::string bytes("\0\x01\xff zero", 8);
  absl::StatusOr<PgResult> r = pool->Query(
      "SELECT $1::bigint, $2::text, $3::bytea, $4::bigint IS NULL, 7::int2, -8::int4, "
      "true, ''::text",
      {PgParam::Int(-(int64_t{1} << 40)), PgParam::Text("héllo"), PgParam::Bytes(bytes),
       PgParam::Null()});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows(), 1);
  EXPECT_EQ(r->Int(0, 0), -(int64_t{1} << 40));
  EXPECT_EQ(r->Text(0, 1), "héllo");
  EXPECT_EQ(r->Bytes(0, 2), bytes);
  EXPECT_TRUE(r->Bool(0, 3));
  EXPECT_EQ(r->Int(0, 4), 7);
  EXPECT_EQ(r->Int(0, 5), -8);
  EXPECT_TRUE(r->Bool(0, 6));
  EXPECT_EQ(r->Text(0, 7), "");
  EXPECT_FALSE(r->IsNull(0, 7));
}

TEST_F(SharedPostgres, AColumnOfAnUndecodedTypeIsAnErrorNotGarbage) {
  auto pool = Pool();
  ASSERT_NE(pool, nullptr);
  absl::Status s = pool->Query("SELECT now()").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(s.message()), HasSubstr("allowed: bigint"));
}

TEST_F(SharedPostgres, StatementsArePreparedOncePerConnectionAndText) {
  auto pool = Pool();
  ASSERT_NE(pool, nullptr);
  absl::StatusOr<PgPool::Lease> lease = pool->Acquire();
  ASSERT_TRUE(lease.ok()) << lease.status();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE((*lease)->Query("SELECT $1::bigint + 1", {PgParam::Int(i)}).ok());
  }
  EXPECT_EQ((*lease)->prepared_statements(), 1u);
  // A NULL in the same place lets PostgreSQL infer the type: another statement.
  ASSERT_TRUE((*lease)->Query("SELECT $1::bigint + 1", {PgParam::Null()}).ok());
  EXPECT_EQ((*lease)->prepared_statements(), 2u);
  // Text built at run time is never cached.
  ASSERT_TRUE((*lease)->QueryOnce("SELECT 42::bigint").ok());
  EXPECT_EQ((*lease)->prepared_statements(), 2u);
}

TEST_F(SharedPostgres, ErrorsMapToCodesAndNeverCarryTheStatementOrItsValues) {
  auto pool = Pool();
  ASSERT_NE(pool, nullptr);
  ASSERT_TRUE(pool->Query("CREATE TABLE t (k TEXT PRIMARY KEY)").ok());
  ASSERT_TRUE(pool->Query("INSERT INTO t VALUES ($1)", {PgParam::Text("secret-key")}).ok());
  absl::Status dup =
      pool->Query("INSERT INTO t VALUES ($1)", {PgParam::Text("secret-key")}).status();
  EXPECT_EQ(dup.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(dup.message()), HasSubstr("SQLSTATE 23505"));
  EXPECT_THAT(std::string(dup.message()), Not(HasSubstr("secret-key")));
  EXPECT_THAT(std::string(dup.message()), Not(HasSubstr("INSERT")));

  absl::Status syntax = pool->Query("SELEKT unbounded_input_here").status();
  EXPECT_EQ(syntax.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(syntax.message()), HasSubstr("SQLSTATE 42601"));
  EXPECT_THAT(std::string(syntax.message()), Not(HasSubstr("unbounded_input_here")));

  // A long value quoted by PostgreSQL's message is cut.
  const std::string long_value(5000, 'x');
  absl::Status cast = pool->Query("SELECT $1::text::bigint", {PgParam::Text(long_value)}).status();
  EXPECT_EQ(cast.code(), absl::StatusCode::kInternal);
  EXPECT_LT(cast.message().size(), 500u);
}

TEST_F(SharedPostgres, ATransactionCommitsAllOrNothing) {
  auto pool = Pool();
  ASSERT_NE(pool, nullptr);
  ASSERT_TRUE(pool->Query("CREATE TABLE t (k BIGINT PRIMARY KEY)").ok());
  absl::Status failed = pool->InTransaction([](PgConn& c) -> absl::Status {
    if (auto r = c.Query("INSERT INTO t VALUES (1)"); !r.ok()) return r.status();
    return absl::AbortedError("the caller changed its mind");
  });
  EXPECT_EQ(failed.code(), absl::StatusCode::kAborted);
  // A statement that failed inside, its error swallowed by the callback: not committed.
  absl::Status swallowed = pool->InTransaction([](PgConn& c) -> absl::Status {
    if (auto r = c.Query("INSERT INTO t VALUES (2)"); !r.ok()) return r.status();
    c.Query("INSERT INTO t VALUES (2)").IgnoreError();  // duplicate: the transaction fails
    return absl::OkStatus();
  });
  EXPECT_FALSE(swallowed.ok());
  ASSERT_TRUE(pool->InTransaction([](PgConn& c) {
                    return c.Query("INSERT INTO t VALUES (3)").status();
                  }).ok());
  absl::StatusOr<PgResult> rows = pool->Query("SELECT k FROM t ORDER BY k");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->rows(), 1);
  EXPECT_EQ(rows->Int(0, 0), 3);
  // Every connection went back to the pool idle, none inside a transaction.
  EXPECT_EQ(pool->idle_connections(), pool->open_connections());
}

TEST_F(SharedPostgres, SessionsHaveTheTimeoutsThatUnblockAShardStealAndPlanOnce) {
  auto pool = Pool();
  ASSERT_NE(pool, nullptr);
  absl::StatusOr<PgResult> r = pool->Query(
      "SELECT current_setting('idle_in_transaction_session_timeout'), "
      "current_setting('statement_timeout'), current_setting('transaction_isolation'), "
      "current_setting('plan_cache_mode')");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->Text(0, 0), "30s");
  EXPECT_EQ(r->Text(0, 1), "30s");
  EXPECT_EQ(r->Text(0, 2), "read committed");
  EXPECT_EQ(r->Text(0, 3), "force_generic_plan") << "prepared statements are planned once";
}

TEST_F(SharedPostgres, ThePoolNeverOpensMoreThanMaxConnectionsAndWaitsBoundedly) {
  PgPoolOptions options;
  options.max_connections = 2;
  options.acquire_timeout = std::chrono::milliseconds(200);
  auto pool = Pool(options);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->open_connections(), 1);  // Open checks the database with one
  absl::StatusOr<PgPool::Lease> a = pool->Acquire();
  absl::StatusOr<PgPool::Lease> b = pool->Acquire();
  ASSERT_TRUE(a.ok() && b.ok());
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<PgPool::Lease> c = pool->Acquire();
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(190));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("all 2 connections"));
  EXPECT_EQ(pool->open_connections(), 2);
}

TEST_F(SharedPostgres, TwoHostsMigrateOnceAndSeeEachOthersNamespaces) {
  // Two hosts starting at the same moment on an empty database.
  absl::StatusOr<std::unique_ptr<Persistence>> a, b;
  std::thread ta([&] { a = OpenPostgresPersistence(url_, 20); });
  std::thread tb([&] { b = OpenPostgresPersistence(url_, 20); });
  ta.join();
  tb.join();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();

  auto pool = Pool();
  ASSERT_NE(pool, nullptr);
  absl::StatusOr<PgResult> versions =
      pool->Query("SELECT version, count(*) FROM schema_version GROUP BY version ORDER BY 1");
  ASSERT_TRUE(versions.ok()) << versions.status();
  ASSERT_EQ(versions->rows(), static_cast<int>(PostgresMigrations().size()));
  for (int i = 0; i < versions->rows(); ++i) {
    EXPECT_EQ(versions->Int(i, 0), i + 1);
    EXPECT_EQ(versions->Int(i, 1), 1) << "migration " << i + 1 << " applied more than once";
  }

  ASSERT_TRUE((*a)->namespaces().CreateNamespace(Record("from-a"), absl::Now()).ok());
  ASSERT_TRUE((*b)->namespaces().CreateNamespace(Record("from-b"), absl::Now()).ok());
  EXPECT_TRUE((*b)->namespaces().GetNamespaceByName("from-a").ok());
  EXPECT_TRUE((*a)->namespaces().GetNamespaceByName("from-b").ok());
  // The same name from both hosts at once: exactly one wins.
  absl::Status ra, rb;
  std::thread ca([&] { ra = (*a)->namespaces().CreateNamespace(Record("both"), absl::Now()).status(); });
  std::thread cb([&] { rb = (*b)->namespaces().CreateNamespace(Record("both"), absl::Now()).status(); });
  ca.join();
  cb.join();
  EXPECT_NE(ra.ok(), rb.ok()) << ra << " / " << rb;
  for (const absl::Status& s : {ra, rb}) {
    if (!s.ok()) {
      EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
      EXPECT_EQ(s.message(), "Namespace already exists.");
    }
  }
  // Both hosts fix the same cluster facts.
  EXPECT_EQ(*(*a)->cluster_metadata().InitHistoryShardCount(8), 8);
  EXPECT_EQ((*b)->cluster_metadata().InitHistoryShardCount(4).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PostgresUnreachable, AnUnreachableDatabaseIsUnavailableNamingItWithoutThePassword) {
  const int port = tock::testing::ClosedLocalPort();
  PersistenceConfig config;
  config.engine = "postgres";
  config.postgres_url =
      absl::StrCat("postgresql://tock:s3cr3t-pw@127.0.0.1:", port, "/tockdb");
  absl::Status s = OpenPersistence(config).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  const std::string message(s.message());
  EXPECT_THAT(message, HasSubstr(absl::StrCat("the PostgreSQL database at 127.0.0.1:", port,
                                              "/tockdb is unavailable: ")));
  EXPECT_THAT(message, HasSubstr("refused"));
  EXPECT_THAT(message, Not(HasSubstr("s3cr3t-pw")));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
}

TEST(PostgresUnreachable, AMalformedUrlIsInvalidWithoutRepeatingIt) {
  for (const std::string url :
       {"postgresql://tock:s3cr3t-pw@127.0.0.1:5432/db?nosuchoption=1", "host=x s3cr3t-pw"}) {
    PersistenceConfig config;
    config.engine = "postgres";
    config.postgres_url = url;
    absl::Status s = OpenPersistence(config).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << url;
    EXPECT_THAT(std::string(s.message()), HasSubstr("postgresql://USER"));
    EXPECT_THAT(std::string(s.message()), Not(HasSubstr("s3cr3t-pw")));
  }
  PersistenceConfig config;
  config.engine = "postgres";
  config.postgres_url = "postgresql://tock@127.0.0.1/db";
  config.postgres_max_connections = 0;
  absl::Status s = OpenPersistence(config).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("max_connections is 0; allowed: 1 to"));
}

// A server of the test's own: stopping or restarting the shared one would break the tests
// running next to this one.
TEST(PostgresRecovery, CallsFailUnavailableWhileTheDatabaseIsDownThenRecoverWithoutReopening) {
  tock::testing::PostgresServer server;
  ASSERT_TRUE(server.Start()) << server.error();
  ASSERT_TRUE(server.CreateDatabase("tock")) << server.error();
  absl::StatusOr<std::unique_ptr<Persistence>> p =
      OpenPostgresPersistence(server.Url("tock"), 20);
  ASSERT_TRUE(p.ok()) << p.status();
  NamespaceStore& namespaces = (*p)->namespaces();
  ASSERT_TRUE(namespaces.CreateNamespace(Record("before"), absl::Now()).ok());

  // A restart ends every session; the idle connections are found closed and replaced, so
  // the very first call after it succeeds.
  ASSERT_TRUE(server.Restart()) << server.error();
  absl::StatusOr<NamespaceVersion> after_restart = namespaces.GetNamespaceByName("before");
  EXPECT_TRUE(after_restart.ok()) << after_restart.status();

  // Down: every call answers UNAVAILABLE naming the database, and nothing hangs.
  server.Stop();
  for (int i = 0; i < 3; ++i) {
    const auto started = std::chrono::steady_clock::now();
    absl::Status s = namespaces.GetNamespaceByName("before").status();
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr(absl::StrCat("the PostgreSQL database at 127.0.0.1:", server.port(),
                                       "/tock is unavailable")));
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  }

  // Back: the same Persistence works again, with what was written before.
  ASSERT_TRUE(server.Start()) << server.error();
  absl::StatusOr<NamespaceVersion> back = namespaces.GetNamespaceByName("before");
  EXPECT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(namespaces.CreateNamespace(Record("after"), absl::Now()).ok());
}

}  // namespace
}  // namespace tock::persistence
