// The backends every conformance test runs on. A new backend adds one entry.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "server-core/persistence/persistence.h"
#include "tests/support/process.h"

namespace tock::persistence {

enum class Backend { kSqliteMemory, kSqliteFile };

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqliteMemory ? "SqliteMemory" : "SqliteFile";
}

class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  PersistenceConfig Config() const {
    PersistenceConfig config;
    if (GetParam() == Backend::kSqliteFile) config.sqlite_path = dir_.File("tock.db");
    return config;
  }

  std::unique_ptr<Persistence> Open() {
    auto opened = OpenPersistence(Config());
    EXPECT_TRUE(opened.ok()) << opened.status();
    return opened.ok() ? std::move(*opened) : nullptr;
  }

  bool Durable() const { return GetParam() != Backend::kSqliteMemory; }

  testing::TempDir dir_;
};

#define TOCK_INSTANTIATE_ON_EVERY_BACKEND(Suite)                                    \
  INSTANTIATE_TEST_SUITE_P(AllBackends, Suite,                                      \
                           ::testing::Values(Backend::kSqliteMemory, Backend::kSqliteFile), \
                           BackendName)

}  // namespace tock::persistence
