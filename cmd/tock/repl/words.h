// Splitting a REPL line into words the way a POSIX shell would for simple command lines, so
// that what works as `tock X` in a shell works as `X` in the REPL: whitespace separates
// words; '...' keeps everything literally; "..." keeps spaces and honours \" and \\;
// a backslash outside quotes escapes the next character, except one that begins the line:
// that is the mark of a session command (\output json) and stays in the first word.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tock::cli::repl {

// INVALID_ARGUMENT for an unterminated quote or a trailing backslash.
absl::StatusOr<std::vector<std::string>> SplitWords(const std::string& line);

// For completion: the words before the cursor and the partial word under it (unquoted).
// Never fails: an open quote just continues to the end.
struct PartialLine {
  std::vector<std::string> words;  // complete words
  std::string current;             // the word being typed (may be empty)
};
PartialLine SplitPartial(const std::string& line_up_to_cursor);

}  // namespace tock::cli::repl
