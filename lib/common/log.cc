#include "lib/common/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tock {
namespace {

constexpr const char* kLevelNames[] = {"debug", "info", "warn", "error", "off"};

// At most kMaxLogValue bytes, never cutting a UTF-8 sequence in half.
absl::string_view Bounded(absl::string_view value) {
  if (value.size() <= kMaxLogValue) return value;
  size_t end = kMaxLogValue;
  while (end > 0 && (static_cast<unsigned char>(value[end]) & 0xC0) == 0x80) --end;
  return value.substr(0, end);
}

void AppendJsonString(std::string* out, absl::string_view text) {
  out->push_back('"');
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static constexpr char kHex[] = "0123456789abcdef";
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

bool NeedsQuotes(absl::string_view value) {
  if (value.empty()) return true;
  for (unsigned char c : value) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) return true;
  }
  return false;
}

class SpdLogger : public Logger {
 public:
  SpdLogger(std::shared_ptr<spdlog::logger> sink, LogLevel level, LogFormat format)
      : sink_(std::move(sink)), level_(level), format_(format) {
    sink_->set_pattern(format == LogFormat::kJson ? R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ",%v)"
                                                  : "%Y-%m-%dT%H:%M:%S.%eZ %v",
                       spdlog::pattern_time_type::utc);
    sink_->set_level(spdlog::level::trace);
    // Warnings and errors reach the file at once; debug and info are flushed by spdlog's
    // buffer (stderr is unbuffered anyway).
    sink_->flush_on(spdlog::level::info);
  }

  bool Enabled(LogLevel level) const override { return level >= level_ && level != LogLevel::kOff; }

  void Write(LogLevel level, absl::string_view message,
             std::initializer_list<LogField> fields) override {
    std::string line = FormatLogEntry(format_, level, message, fields);
    sink_->log(spdlog::level::info, "{}", line);
  }

 private:
  std::shared_ptr<spdlog::logger> sink_;
  const LogLevel level_;
  const LogFormat format_;
};

class DropLogger : public Logger {
 public:
  bool Enabled(LogLevel) const override { return false; }
  void Write(LogLevel, absl::string_view, std::initializer_list<LogField>) override {}
};

}  // namespace

absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(text);
  for (int i = 0; i <= static_cast<int>(LogLevel::kOff); ++i) {
    if (lower == kLevelNames[i]) return static_cast<LogLevel>(i);
  }
  if (lower == "warning") return LogLevel::kWarn;
  return absl::InvalidArgumentError(absl::StrCat("invalid log level \"",
                                                 Bounded(text).substr(0, 32),
                                                 "\": use debug, info, warn, error or off"));
}

absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("invalid log format \"", Bounded(text).substr(0, 32), "\": use text or json"));
}

std::string FormatLogEntry(LogFormat format, LogLevel level, absl::string_view message,
                           std::initializer_list<LogField> fields) {
  std::string out;
  const char* level_name = kLevelNames[static_cast<int>(level)];
  if (format == LogFormat::kJson) {
    absl::StrAppend(&out, "\"level\":\"", level_name, "\",\"msg\":");
    AppendJsonString(&out, Bounded(message));
    for (const LogField& f : fields) {
      out.push_back(',');
      AppendJsonString(&out, f.key);
      out.push_back(':');
      AppendJsonString(&out, Bounded(f.value));
    }
    out.push_back('}');
    return out;
  }
  absl::StrAppend(&out, level_name, " ");
  // A message is one line: line breaks in it would let input forge log lines.
  for (char c : Bounded(message)) out.push_back(c == '\n' || c == '\r' ? ' ' : c);
  for (const LogField& f : fields) {
    absl::StrAppend(&out, " ", f.key, "=");
    absl::string_view value = Bounded(f.value);
    if (NeedsQuotes(value)) {
      AppendJsonString(&out, value);
    } else {
      out.append(value.data(), value.size());
    }
  }
  return out;
}

std::unique_ptr<Logger> MakeStderrLogger(LogLevel level, LogFormat format) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  return std::make_unique<SpdLogger>(std::make_shared<spdlog::logger>("tock", sink), level, format);
}

absl::StatusOr<std::unique_ptr<Logger>> MakeFileLogger(const std::string& path, LogLevel level,
                                                       LogFormat format) {
  // spdlog would create missing directories: a typo in the path should be an error instead.
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code error;
  if (!parent.empty() && !std::filesystem::is_directory(parent, error)) {
    return absl::UnavailableError(absl::StrCat(
        "cannot open the log file ", path, ": the directory ", parent.string(), " does not exist"));
  }
  try {
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path);
    return std::unique_ptr<Logger>(
        std::make_unique<SpdLogger>(std::make_shared<spdlog::logger>("tock", sink), level, format));
  } catch (const spdlog::spdlog_ex& e) {
    return absl::UnavailableError(absl::StrCat("cannot open the log file ", path, ": ", e.what()));
  }
}

Logger& NullLogger() {
  static DropLogger logger;
  return logger;
}

}  // namespace tock
