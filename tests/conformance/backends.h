// The backends every conformance test runs on, and the fixture the suites share. A new
// backend (PostgreSQL) adds one enum value, its config in Config(), and the two raw schema
// helpers; the suites themselves only use the Persistence API.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server-core/persistence/persistence.h"
#include "tests/support/process.h"

namespace tock::persistence {

enum class Backend { kSqliteMemory, kSqliteFile };

std::string BackendName(const ::testing::TestParamInfo<Backend>& info);

class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  // The same database every time it is called within one test.
  PersistenceConfig Config() const;

  // Opens the test's database (a new one for an in-memory backend); fails the test and
  // returns null when it cannot.
  std::unique_ptr<Persistence> Open();

  // Whether data survives closing and reopening.
  bool Durable() const { return GetParam() != Backend::kSqliteMemory; }

  // Raw access to a durable backend's (closed) database, for what the API cannot do.
  // The schema versions recorded as applied, in order.
  std::vector<int64_t> AppliedSchemaVersions() const;
  // Records `version` as applied, as a newer server would have.
  void RecordSchemaVersion(int64_t version) const;

  tock::testing::TempDir dir_;  // removed with the database files at the end of the test
};

#define TOCK_INSTANTIATE_ON_EVERY_BACKEND(Suite)                                            \
  INSTANTIATE_TEST_SUITE_P(AllBackends, Suite,                                              \
                           ::testing::Values(Backend::kSqliteMemory, Backend::kSqliteFile), \
                           BackendName)

}  // namespace tock::persistence
