// The backends every conformance test runs on, and the fixture the suites share. A backend
// is one enum value, its config in Config(), and the two raw schema helpers; the suites
// themselves only use the Persistence API.
//
// PostgreSQL: one throwaway server per ctest run (the `postgres` ctest fixture, see
// tests/support/postgres_fixture_main.cc; or TOCK_TEST_POSTGRES_URL, the admin URL of a
// server of your own), and a fresh database per test, dropped at its end. Without either,
// every PostgreSQL test FAILS: a missing database must never look like a pass.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server-core/persistence/persistence.h"
#include "temporal/api/workflow/v1/message.pb.h"
#include "tests/support/process.h"

namespace tock::persistence {

enum class Backend { kSqliteMemory, kSqliteFile, kPostgres };

std::string BackendName(const ::testing::TestParamInfo<Backend>& info);

class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  ~BackendTest() override;

  // The same database every time it is called within one test.
  PersistenceConfig Config() const;

  // Opens the test's database (a new one for an in-memory backend); fails the test and
  // returns null when it cannot.
  std::unique_ptr<Persistence> Open();

  // Whether data survives closing and reopening.
  bool Durable() const { return GetParam() != Backend::kSqliteMemory; }
  bool IsPostgres() const { return GetParam() == Backend::kPostgres; }
  // How errors name the test's database: the SQLite file, or postgresql://USER@HOST:PORT/DB.
  std::string Location() const;

  // Raw access to a durable backend's (closed) database, for what the API cannot do.
  // The schema versions recorded as applied, in order.
  std::vector<int64_t> AppliedSchemaVersions() const;
  // Records `version` as applied, as a newer server would have.
  void RecordSchemaVersion(int64_t version) const;
  // Creates the database as an older server left it: every migration before version
  // `sqlite_version` (on SQLite) or `postgres_version` (on PostgreSQL; the two lists number
  // the same change differently) applied and recorded, so that the next Open() applies the
  // rest.
  void MigrateBefore(int64_t sqlite_version, int64_t postgres_version) const;
  // Runs statements on the (closed) database.
  void RunRaw(const std::string& sql) const;

  tock::testing::TempDir dir_;  // removed with the database files at the end of the test

 private:
  mutable std::string postgres_database_;  // created by the first Config() of the test
  mutable std::string postgres_admin_url_;
};

// The admin URL (database `postgres`) of the run's throwaway PostgreSQL, or "" with the
// reason in `why`.
std::string PostgresAdminUrl(std::string* why);
// CREATE DATABASE with a name unique to this process; "" after a failed expectation.
std::string CreateTestDatabase(const std::string& admin_url);
// `admin_url` with its database replaced by `database`.
std::string PostgresUrlOf(const std::string& admin_url, const std::string& database);

// The run id of a visibility record as a store lists it (a serialized
// WorkflowExecutionInfo); "" when it does not parse.
inline std::string RunIdOfRecord(const std::string& record) {
  temporal::api::workflow::v1::WorkflowExecutionInfo info;
  return info.ParseFromString(record) ? info.execution().run_id() : "";
}

#define TOCK_INSTANTIATE_ON_EVERY_BACKEND(Suite)                                            \
  INSTANTIATE_TEST_SUITE_P(AllBackends, Suite,                                              \
                           ::testing::Values(Backend::kSqliteMemory, Backend::kSqliteFile,  \
                                             Backend::kPostgres),                            \
                           BackendName)

}  // namespace tock::persistence
