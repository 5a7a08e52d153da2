// The web console's embedded files: what the page loads is there, and the whole console
// stays within its budget (200 KB gzipped, issue 36).
#include <gtest/gtest.h>
#include <zlib.h>

#include <regex>
#include <set>
#include <string>

#include "server-core/console/console_files.h"
#include "server-core/console/console_routes.h"

namespace tock::server::console {
namespace {

size_t GzippedSize(std::string_view bytes) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, bytes.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  const size_t size = z.total_out;
  deflateEnd(&z);
  return size;
}

TEST(ConsoleFilesTest, EveryModuleThePagesImportIsEmbedded) {
  std::set<std::string> paths;
  for (const ConsoleFile& f : ConsoleFiles()) paths.insert(std::string(f.path));
  ASSERT_TRUE(paths.count("index.html"));
  ASSERT_TRUE(paths.count("assets/app/main.js"));
  // Relative imports of the console's own modules resolve to embedded files.
  const std::regex import_from(R"(from '(\.{1,2}/[^']+)')");
  for (const ConsoleFile& f : ConsoleFiles()) {
    if (!f.path.starts_with("assets/app/")) continue;
    const std::string text(f.bytes);
    const std::string dir = std::string(f.path.substr(0, f.path.rfind('/') + 1));
    for (std::sregex_iterator it(text.begin(), text.end(), import_from), end; it != end; ++it) {
      std::string target = dir + (*it)[1].str();
      // Resolve "./" and "../" segments.
      std::vector<std::string> parts;
      for (size_t start = 0; start <= target.size();) {
        const size_t slash = std::min(target.find('/', start), target.size());
        const std::string part = target.substr(start, slash - start);
        if (part == "..") {
          if (!parts.empty()) parts.pop_back();
        } else if (part != "." && !part.empty()) {
          parts.push_back(part);
        }
        start = slash + 1;
      }
      std::string resolved;
      for (const std::string& p : parts) resolved += (resolved.empty() ? "" : "/") + p;
      EXPECT_TRUE(paths.count(resolved)) << f.path << " imports " << (*it)[1] << " (" << resolved << ")";
    }
  }
  // The import map's targets too.
  for (const char* vendor : {"assets/vendor/preact.mjs", "assets/vendor/preact-hooks.mjs",
                             "assets/vendor/signals.mjs", "assets/vendor/signals-core.mjs",
                             "assets/vendor/htm.mjs"}) {
    EXPECT_TRUE(paths.count(vendor)) << vendor;
  }
}

TEST(ConsoleFilesTest, ThePagePreloadsEveryModule) {
  std::string page;
  for (const ConsoleFile& f : ConsoleFiles()) {
    if (f.path == "index.html") page = std::string(f.bytes);
  }
  for (const ConsoleFile& f : ConsoleFiles()) {
    const bool module = f.path.ends_with(".js") && !f.path.ends_with(".min.js");
    if (!module && !f.path.ends_with(".mjs")) continue;
    EXPECT_NE(page.find("<link rel=\"modulepreload\" href=\"" + std::string(f.path) + "\">"), std::string::npos)
        << f.path << " is not preloaded by index.html";
  }
}

TEST(ConsoleFilesTest, TheWholeConsoleIsUnder200KilobytesGzipped) {
  size_t raw = 0, gzipped = 0;
  for (const ConsoleFile& f : ConsoleFiles()) {
    raw += f.bytes.size();
    gzipped += GzippedSize(f.bytes);
  }
  std::printf("console: %zu files, %zu bytes, %zu gzipped\n", ConsoleFiles().size(), raw, gzipped);
  EXPECT_GT(gzipped, 10'000u);
  EXPECT_LE(gzipped, 200'000u);
}

TEST(ConsoleFilesTest, ThePolicyAllowsTheImportMapByItsHashAndTheCodecEndpoint) {
  ConsoleOptions options;
  options.codec_endpoint = "https://codec.example:8888";
  const std::string policy = ContentSecurityPolicy(options);
  EXPECT_TRUE(std::regex_search(policy, std::regex("script-src 'self' 'sha256-[A-Za-z0-9+/]{43}='")))
      << policy;
  EXPECT_NE(policy.find("connect-src 'self' https://codec.example:8888;"), std::string::npos) << policy;
  EXPECT_NE(policy.find("frame-ancestors 'none'"), std::string::npos);
  // An endpoint with a path: the policy names the path's subtree, where ENDPOINT/decode is.
  options.codec_endpoint = "https://codec.example/tenant-7";
  EXPECT_NE(ContentSecurityPolicy(options).find("connect-src 'self' https://codec.example/tenant-7/;"),
            std::string::npos)
      << ContentSecurityPolicy(options);
}

}  // namespace
}  // namespace tock::server::console
