#include "cmd/tock/repl/words.h"

namespace tock::cli::repl {
namespace {

// The shared scanner: `open_quote` reports what was left open at the end (0 if nothing).
struct Scan {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  char open_quote = 0;
  bool trailing_backslash = false;
};

Scan ScanLine(const std::string& line) {
  Scan s;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (s.open_quote == '\'') {
      if (c == '\'') {
        s.open_quote = 0;
      } else {
        s.current += c;
      }
      continue;
    }
    if (s.open_quote == '"') {
      if (c == '"') {
        s.open_quote = 0;
      } else if (c == '\\' && i + 1 < line.size() && (line[i + 1] == '"' || line[i + 1] == '\\')) {
        s.current += line[++i];
      } else {
        s.current += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (s.in_word) s.words.push_back(std::move(s.current));
      s.current.clear();
      s.in_word = false;
      continue;
    }
    const bool starts_line = s.words.empty() && !s.in_word;
    s.in_word = true;
    if (c == '\\' && starts_line) {
      s.current += c;  // \output, \timing: session commands, not an escape
    } else if (c == '\'' || c == '"') {
      s.open_quote = c;
    } else if (c == '\\') {
      if (i + 1 < line.size()) {
        s.current += line[++i];
      } else {
        s.trailing_backslash = true;
      }
    } else {
      s.current += c;
    }
  }
  return s;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SplitWords(const std::string& line) {
  Scan s = ScanLine(line);
  if (s.open_quote != 0) {
    return absl::InvalidArgumentError(std::string("unterminated ") +
                                      (s.open_quote == '"' ? "double" : "single") +
                                      " quote: close it with " + s.open_quote);
  }
  if (s.trailing_backslash) {
    return absl::InvalidArgumentError("a backslash at the end of the line escapes nothing");
  }
  if (s.in_word) s.words.push_back(std::move(s.current));
  return s.words;
}

PartialLine SplitPartial(const std::string& line_up_to_cursor) {
  Scan s = ScanLine(line_up_to_cursor);
  return PartialLine{std::move(s.words), s.in_word ? std::move(s.current) : std::string()};
}

}  // namespace tock::cli::repl
