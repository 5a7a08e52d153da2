// Structured logging: a message and key=value fields, as text or JSON lines, on stderr.
//
//   logger.Warn("timer failed; retrying", {{"namespace_id", ns}, {"workflow_id", wf},
//                                          {"error", status.ToString()}, {"retry_in", "2s"}});
//
// Text:  2026-11-23T10:00:00.123Z warn timer failed; retrying namespace_id=... error="..."
// JSON:  {"ts":"2026-11-23T10:00:00.123Z","level":"warn","msg":"timer failed; retrying",...}
//
// Values are cut at kMaxLogValue bytes (a log line never carries unbounded input); callers
// never pass payloads or secrets. Backed by spdlog, so writes from many threads are whole
// lines.
//
// Thread safety: every method is safe from any thread.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tock {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };
enum class LogFormat { kText, kJson };

// "debug", "info", "warn", "error", "off"; INVALID_ARGUMENT naming the allowed values.
absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view text);
// "text" or "json".
absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view text);

inline constexpr size_t kMaxLogValue = 512;

struct LogField {
  absl::string_view key;
  std::string value;
};

class Logger {
 public:
  virtual ~Logger() = default;
  virtual bool Enabled(LogLevel level) const = 0;
  virtual void Write(LogLevel level, absl::string_view message,
                     std::initializer_list<LogField> fields) = 0;

  void Debug(absl::string_view message, std::initializer_list<LogField> fields = {}) {
    if (Enabled(LogLevel::kDebug)) Write(LogLevel::kDebug, message, fields);
  }
  void Info(absl::string_view message, std::initializer_list<LogField> fields = {}) {
    if (Enabled(LogLevel::kInfo)) Write(LogLevel::kInfo, message, fields);
  }
  void Warn(absl::string_view message, std::initializer_list<LogField> fields = {}) {
    if (Enabled(LogLevel::kWarn)) Write(LogLevel::kWarn, message, fields);
  }
  void Error(absl::string_view message, std::initializer_list<LogField> fields = {}) {
    if (Enabled(LogLevel::kError)) Write(LogLevel::kError, message, fields);
  }
};

// A logger writing to stderr at `level` and above.
std::unique_ptr<Logger> MakeStderrLogger(LogLevel level, LogFormat format);

// A logger appending to a file (`--log-file`); UNAVAILABLE when it cannot be opened.
absl::StatusOr<std::unique_ptr<Logger>> MakeFileLogger(const std::string& path, LogLevel level,
                                                       LogFormat format);

// Drops everything (engines built without a logger, unit tests).
Logger& NullLogger();

// The line one entry becomes, without the time stamp (exposed for tests).
std::string FormatLogEntry(LogFormat format, LogLevel level, absl::string_view message,
                           std::initializer_list<LogField> fields);

}  // namespace tock
