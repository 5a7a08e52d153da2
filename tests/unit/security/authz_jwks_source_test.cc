// The JWKS read from a URL (libcurl) served by a real HTTP server here (cpp-httplib), and from
// a file: the keys read at start, refreshed, bounded, and the errors that stop a start.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/log.h"
#include "server-core/security/authz_jwks_source.h"
#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/test_jwt.h"

namespace tock::server::security {
namespace {

using testing::TestSigningKey;

class JwksServer {
 public:
  JwksServer() {
    server_.Get("/jwks.json", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mu_);
      ++requests_;
      res.status = status_;
      res.set_content(body_, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");  // listening from here on
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~JwksServer() {
    server_.stop();
    thread_.join();
  }
  void Serve(int status, std::string body) {
    std::lock_guard lock(mu_);
    status_ = status;
    body_ = std::move(body);
  }
  int requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_, "/jwks.json"); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  int status_ = 200;
  std::string body_;
  int requests_ = 0;
};

TEST(JwksSourceTest, ReadsAUrlAndRefusesBadAnswers) {
  TestSigningKey a(TestSigningKey::Kind::kRsa, "a");
  JwksServer http;
  http.Serve(200, testing::JwksOf({&a}));
  absl::StatusOr<std::string> text = ReadJwksText(http.url());
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(ParseJwks(*text, http.url()).ok());

  http.Serve(404, "not here");
  text = ReadJwksText(http.url());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(text.status().message(), "JWKS " + http.url() + ": HTTP status 404");

  http.Serve(200, std::string(kMaxJwksBytes + 1, ' '));
  text = ReadJwksText(http.url());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(text.status().message(), "longer than 1048576 bytes")) << text.status();

  text = ReadJwksText("http://127.0.0.1:1/jwks.json");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kUnavailable) << text.status();
}

TEST(JwksSourceTest, AStartNeedsKeysAndEarlyReadsAreSpacedOut) {
  TestSigningKey a(TestSigningKey::Kind::kRsa, "a");
  TestSigningKey b(TestSigningKey::Kind::kP256, "b");
  JwksServer http;
  http.Serve(500, "down");
  absl::StatusOr<std::unique_ptr<JwksSource>> failed = JwksSource::Start(http.url(), absl::Hours(1), NullLogger());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable);

  http.Serve(200, testing::JwksOf({&a}));
  absl::StatusOr<std::unique_ptr<JwksSource>> source = JwksSource::Start(http.url(), absl::Hours(1), NullLogger());
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->Current()->keys.count("a"), 1u);
  EXPECT_EQ((*source)->generation(), 1u);
  // The provider rotates b in. A request within kMinRefreshGap of the last read is ignored
  // (a flood of tokens with unknown kids must not become a flood of fetches).
  http.Serve(200, testing::JwksOf({&a, &b}));
  const int before = http.requests();
  (*source)->RequestRefresh();
  EXPECT_EQ(http.requests(), before);
  EXPECT_EQ((*source)->Current()->keys.count("b"), 0u);
}

TEST(JwksSourceTest, ReadsAFileAgainEveryRefresh) {
  TestSigningKey a(TestSigningKey::Kind::kRsa, "a");
  TestSigningKey b(TestSigningKey::Kind::kRsa, "b");
  testing::TempDir dir;
  const std::string path = dir.Write("jwks.json", testing::JwksOf({&a}));
  absl::StatusOr<std::unique_ptr<JwksSource>> source = JwksSource::Start(path, absl::Seconds(1), NullLogger());
  ASSERT_TRUE(source.ok()) << source.status();
  dir.Write("jwks.json", testing::JwksOf({&b}));
  // Bounded wait for the refresh thread (1 s period): 20 s at most.
  for (int i = 0; i < 200 && (*source)->Current()->keys.count("b") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ((*source)->Current()->keys.count("b"), 1u);
  EXPECT_EQ((*source)->Current()->keys.count("a"), 0u);
  // A file that goes bad keeps the keys held. The read under way may have begun before the
  // write (and take the good file again); the one after it reads the bad file.
  dir.Write("jwks.json", "{");
  const uint64_t reads = (*source)->reads();
  ASSERT_TRUE(tock::testing::Eventually([&] { return (*source)->reads() >= reads + 1; }));
  const uint64_t generation = (*source)->generation();
  const uint64_t bad_from = (*source)->reads() + 1;
  ASSERT_TRUE(tock::testing::Eventually([&] { return (*source)->reads() >= bad_from; }));
  EXPECT_EQ((*source)->generation(), generation);
  EXPECT_EQ((*source)->Current()->keys.count("b"), 1u);
  EXPECT_EQ(ReadJwksText(dir.File("missing.json")).status().message(),
            "JWKS " + dir.File("missing.json") + ": cannot be read");
}

}  // namespace
}  // namespace tock::server::security
