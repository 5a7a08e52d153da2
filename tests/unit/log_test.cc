// Structured logging (lib/common/log.h): JSON lines that parse whatever the input, text lines
// that stay one line, values cut at kMaxLogValue without breaking UTF-8, levels filtered.
#include "lib/common/log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/process.h"

namespace tock {
namespace {

using nlohmann::json;

// FormatLogEntry leaves out the time stamp (spdlog writes `{"ts":"...",` in front).
json ParseEntry(const std::string& line) {
  return json::parse("{" + line, nullptr, /*allow_exceptions=*/false);
}

TEST(LogTest, JsonEntryParsesAndKeepsEveryField) {
  const std::string line = FormatLogEntry(LogFormat::kJson, LogLevel::kWarn, "timer failed",
                                          {{"namespace_id", "ns-1"}, {"retry_in", "2s"}});
  json entry = ParseEntry(line);
  ASSERT_FALSE(entry.is_discarded()) << line;
  EXPECT_EQ(entry["level"], "warn");
  EXPECT_EQ(entry["msg"], "timer failed");
  EXPECT_EQ(entry["namespace_id"], "ns-1");
  EXPECT_EQ(entry["retry_in"], "2s");
}

TEST(LogTest, JsonEscapesQuotesBackslashesAndControlCharacters) {
  const std::string nasty = std::string("a\"b\\c\nd\re\tf") + '\x01' + '\x7f' + "\xc3\xa9";
  const std::string line = FormatLogEntry(LogFormat::kJson, LogLevel::kError, nasty,
                                          {{"error", nasty}, {"key", "\"},\"level\":\"x"}});
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one entry is one line";
  json entry = ParseEntry(line);
  ASSERT_FALSE(entry.is_discarded()) << line;
  EXPECT_EQ(entry["msg"], nasty);
  EXPECT_EQ(entry["error"], nasty);
  EXPECT_EQ(entry["level"], "error") << "a value cannot forge another field";
  EXPECT_EQ(entry["key"], "\"},\"level\":\"x");
}

TEST(LogTest, ValuesAreCutAtTheBoundWithoutSplittingUtf8) {
  // 'é' is two bytes; an odd prefix makes the bound fall inside one.
  std::string value = "x";
  while (value.size() < 4 * kMaxLogValue) value += "\xc3\xa9";
  const std::string line =
      FormatLogEntry(LogFormat::kJson, LogLevel::kInfo, value, {{"input", value}});
  json entry = ParseEntry(line);
  ASSERT_FALSE(entry.is_discarded()) << "a cut inside a UTF-8 sequence would not parse";
  const std::string msg = entry["msg"];
  const std::string input = entry["input"];
  EXPECT_LE(msg.size(), kMaxLogValue);
  EXPECT_GE(msg.size(), kMaxLogValue - 1);
  EXPECT_EQ(input, msg);
  EXPECT_EQ(value.rfind(input, 0), 0u) << "the start of the value is kept";
  EXPECT_LT(line.size(), 3 * kMaxLogValue) << "the whole line is bounded";
}

TEST(LogTest, TextEntryIsOneLineAndQuotesValuesThatNeedIt) {
  const std::string line = FormatLogEntry(LogFormat::kText, LogLevel::kInfo, "started\nfake line",
                                          {{"address", "127.0.0.1:7233"},
                                           {"database", "sqlite :memory:"},
                                           {"empty", ""},
                                           {"evil", "a\nlevel=error"}});
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line,
            "info started fake line address=127.0.0.1:7233 database=\"sqlite :memory:\" "
            "empty=\"\" evil=\"a\\nlevel=error\"");
}

TEST(LogTest, LevelAndFormatNamesAreParsedAndBadOnesNamed) {
  EXPECT_EQ(*ParseLogLevel("debug"), LogLevel::kDebug);
  EXPECT_EQ(*ParseLogLevel("WARN"), LogLevel::kWarn);
  EXPECT_EQ(*ParseLogLevel("warning"), LogLevel::kWarn);
  EXPECT_EQ(*ParseLogLevel("off"), LogLevel::kOff);
  EXPECT_EQ(ParseLogLevel("loud").status().message(),
            "invalid log level \"loud\": use debug, info, warn, error or off");
  EXPECT_EQ(*ParseLogFormat("json"), LogFormat::kJson);
  EXPECT_EQ(ParseLogFormat("xml").status().message(),
            "invalid log format \"xml\": use text or json");
}

TEST(LogTest, FileLoggerWritesJsonLinesAtItsLevelAndAbove) {
  testing::TempDir dir;
  const std::string path = dir.File("tock.log");
  {
    absl::StatusOr<std::unique_ptr<Logger>> logger =
        MakeFileLogger(path, LogLevel::kInfo, LogFormat::kJson);
    ASSERT_TRUE(logger.ok()) << logger.status();
    EXPECT_FALSE((*logger)->Enabled(LogLevel::kDebug));
    EXPECT_TRUE((*logger)->Enabled(LogLevel::kError));
    (*logger)->Debug("not written", {{"k", "v"}});
    (*logger)->Info("written", {{"workflow_id", "wf-1"}});
    (*logger)->Error("also written");
  }
  std::ifstream in(path);
  std::vector<json> entries;
  for (std::string line; std::getline(in, line);) {
    json entry = json::parse(line, nullptr, false);
    ASSERT_FALSE(entry.is_discarded()) << line;
    entries.push_back(entry);
  }
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0]["msg"], "written");
  EXPECT_EQ(entries[0]["workflow_id"], "wf-1");
  EXPECT_EQ(entries[1]["level"], "error");
  // RFC 3339 UTC with milliseconds.
  const std::string ts = entries[0]["ts"];
  EXPECT_EQ(ts.size(), 24u) << ts;
  EXPECT_EQ(ts.back(), 'Z') << ts;
}

TEST(LogTest, AFileThatCannotBeOpenedIsUnavailable) {
  testing::TempDir dir;
  absl::StatusOr<std::unique_ptr<Logger>> missing_dir =
      MakeFileLogger(dir.File("missing/tock.log"), LogLevel::kInfo, LogFormat::kText);
  EXPECT_EQ(missing_dir.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(std::filesystem::exists(dir.File("missing"))) << "no directory is created";
  absl::StatusOr<std::unique_ptr<Logger>> a_directory =
      MakeFileLogger(dir.path().string(), LogLevel::kInfo, LogFormat::kText);
  EXPECT_EQ(a_directory.status().code(), absl::StatusCode::kUnavailable);
}

TEST(LogTest, NullLoggerIsNeverEnabled) {
  EXPECT_FALSE(NullLogger().Enabled(LogLevel::kError));
  NullLogger().Error("dropped", {{"k", "v"}});
}

}  // namespace
}  // namespace tock
