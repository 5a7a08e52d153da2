// LazyLibrary (lib/common/lazy_library.h): a library opened at first use, and a clear error
// when it is not installed. (That tock and tock-server no longer need libpq and libcurl at
// start-up is the binaries_start_without_libpq_or_libcurl test of tests/install.)
#include "lib/common/lazy_library.h"

#include <string>

#include <gtest/gtest.h>

namespace tock {
namespace {

TEST(LazyLibraryTest, AMissingLibraryIsAnErrorNamingItAndItsPackage) {
  LazyLibrary missing("libtock-no-such-library.so.9", "tock-no-such-package");
  absl::Status s = missing.Load();
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("libtock-no-such-library.so.9 cannot be loaded"),
            std::string::npos) << s;
  EXPECT_NE(s.message().find("apt-get install tock-no-such-package"), std::string::npos) << s;
  EXPECT_EQ(missing.Load().code(), absl::StatusCode::kFailedPrecondition);  // asked again
}

TEST(LazyLibraryTest, SymbolsOfAnInstalledLibraryAreTheRealFunctions) {
  LazyLibrary libc("libc.so.6", "libc6");
  ASSERT_TRUE(libc.Load().ok());
  auto* length = reinterpret_cast<size_t (*)(const char*)>(libc.Symbol("strlen"));
  EXPECT_EQ(length("tock"), 4u);
}

TEST(LazyLibraryDeathTest, ASymbolOfAMissingLibraryStopsTheProcessNamingIt) {
  LazyLibrary missing("libtock-no-such-library.so.9", "tock-no-such-package");
  EXPECT_DEATH(missing.Symbol("anything"), "libtock-no-such-library.so.9 cannot be loaded");
}

}  // namespace
}  // namespace tock
