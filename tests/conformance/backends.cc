#include "tests/conformance/backends.h"

#include "server-core/persistence/postgres/pg_schema.h"
#include "server-core/persistence/sqlite/sqlite_schema.h"
#include "tests/support/postgres_server.h"

#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>

namespace tock::persistence {

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  switch (info.param) {
    case Backend::kSqliteMemory:
      return "SqliteMemory";
    case Backend::kSqliteFile:
      return "SqliteFile";
    case Backend::kPostgres:
      return "Postgres";
  }
  return "Unknown";
}

namespace {

// One connection for a raw statement of the tests; fails the test when it cannot connect.
class RawPg {
 public:
  explicit RawPg(const std::string& url)
      : conn_(PQconnectdb((url + (url.find('?') == std::string::npos ? "?" : "&") +
                           "connect_timeout=10").c_str())) {
    EXPECT_EQ(PQstatus(conn_), CONNECTION_OK) << PQerrorMessage(conn_);
  }
  ~RawPg() { PQfinish(conn_); }
  // Runs `sql`; the rows' first column as text.
  std::vector<std::string> Run(const std::string& sql) {
    std::vector<std::string> out;
    PGresult* r = PQexec(conn_, sql.c_str());
    const ExecStatusType status = PQresultStatus(r);
    EXPECT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
        << sql << ": " << PQerrorMessage(conn_);
    for (int i = 0; status == PGRES_TUPLES_OK && i < PQntuples(r); ++i) {
      out.emplace_back(PQgetvalue(r, i, 0));
    }
    PQclear(r);
    return out;
  }

 private:
  PGconn* conn_;
};

}  // namespace

std::string PostgresAdminUrl(std::string* why) {
  return tock::testing::SharedPostgresAdminUrl(TOCK_POSTGRES_FIXTURE_FILE, why);
}

std::string PostgresUrlOf(const std::string& admin_url, const std::string& database) {
  return tock::testing::PostgresUrlWithDatabase(admin_url, database);
}

std::string CreateTestDatabase(const std::string& admin_url) {
  // Unique within the run: tests run in parallel processes, and a crashed test may have
  // left its database behind.
  std::random_device random;
  const std::string name = "tock_t" + std::to_string(getpid()) + "_" + std::to_string(random());
  std::string error;
  if (!tock::testing::CreatePostgresDatabase(admin_url, name, &error)) {
    ADD_FAILURE() << error;
    return "";
  }
  return name;
}

BackendTest::~BackendTest() {
  if (postgres_database_.empty()) return;
  // FORCE: a Persistence the test leaked must not keep the database (and the run's
  // server) busy.
  std::string error;
  EXPECT_TRUE(tock::testing::DropPostgresDatabase(postgres_admin_url_, postgres_database_, &error))
      << error;
}

std::string BackendTest::Location() const {
  if (!IsPostgres()) return Config().sqlite_path;
  const std::string url = Config().postgres_url;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), nullptr);
  std::string user, host, port, db;
  for (PQconninfoOption* o = options; o != nullptr && o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const std::string key = o->keyword;
    if (key == "user") user = o->val;
    if (key == "host") host = o->val;
    if (key == "port") port = o->val;
    if (key == "dbname") db = o->val;
  }
  PQconninfoFree(options);
  return "postgresql://" + user + (user.empty() ? "" : "@") + host + ":" + port + "/" + db;
}

PersistenceConfig BackendTest::Config() const {
  PersistenceConfig config;
  if (IsPostgres()) {
    config.engine = "postgres";
    if (postgres_database_.empty()) {
      std::string why;
      postgres_admin_url_ = PostgresAdminUrl(&why);
      if (postgres_admin_url_.empty()) {
        ADD_FAILURE() << why;
        return config;
      }
      postgres_database_ = CreateTestDatabase(postgres_admin_url_);
      if (postgres_database_.empty()) return config;
    }
    config.postgres_url = PostgresUrlOf(postgres_admin_url_, postgres_database_);
    return config;
  }
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

// Opens the SQLite file of a closed Persistence (or a new one); fails the test when it cannot.
sqlite3* OpenRaw(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr),
            SQLITE_OK)
      << path;
  return db;
}

void ExecSqlite(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error != nullptr ? error : "") << "\n" << sql;
  sqlite3_free(error);
}

}  // namespace

std::vector<int64_t> BackendTest::AppliedSchemaVersions() const {
  std::vector<int64_t> versions;
  EXPECT_TRUE(Durable()) << "an in-memory database is gone once closed";
  if (!Durable()) return versions;
  if (IsPostgres()) {
    // Migrations are applied in version order, so this is also the order they were applied.
    RawPg db(Config().postgres_url);
    for (const std::string& v : db.Run("SELECT version FROM schema_version ORDER BY version")) {
      versions.push_back(std::stoll(v));
    }
    return versions;
  }
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

void BackendTest::RunRaw(const std::string& sql) const {
  ASSERT_TRUE(Durable()) << "an in-memory database is gone once closed";
  if (IsPostgres()) {
    RawPg(Config().postgres_url).Run(sql);
    return;
  }
  sqlite3* db = OpenRaw(Config().sqlite_path);
  ExecSqlite(db, sql);
  sqlite3_close(db);
}

void BackendTest::MigrateBefore(int64_t sqlite_version, int64_t postgres_version) const {
  ASSERT_TRUE(Durable()) << "an in-memory database is gone once closed";
  // As the servers create it (MigrateSqlite, MigratePostgres).
  const std::string integer = IsPostgres() ? "BIGINT" : "INTEGER";
  std::string script = "CREATE TABLE schema_version (version " + integer +
                       " PRIMARY KEY, description TEXT NOT NULL, applied_ms " + integer +
                       " NOT NULL);\n";
  auto add_before = [&](const auto& migrations, int64_t version) {
    for (const auto& m : migrations) {
      if (m.version >= version) continue;
      if constexpr (requires { m.then; }) {
        // A step in C++ (Migration::then) cannot run from a script.
        ASSERT_EQ(m.then, nullptr) << "migration " << m.version << " has a step in C++";
      }
      script += m.sql + ";\nINSERT INTO schema_version VALUES (" + std::to_string(m.version) +
                ", 'applied by an older server', 0);\n";
    }
  };
  if (IsPostgres()) {
    add_before(PostgresMigrations(), postgres_version);
  } else {
    add_before(SqliteMigrations(), sqlite_version);
  }
  RunRaw(script);
}

void BackendTest::RecordSchemaVersion(int64_t version) const {
  ASSERT_TRUE(Durable()) << "an in-memory database is gone once closed";
  if (IsPostgres()) {
    RawPg(Config().postgres_url)
        .Run("INSERT INTO schema_version(version, description, applied_ms) VALUES (" +
             std::to_string(version) + ", 'written by a newer server', 0)");
    return;
  }
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
