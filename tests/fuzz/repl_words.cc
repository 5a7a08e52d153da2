// REPL lines (cmd/tock/repl/words.h): any line is split or refused with INVALID_ARGUMENT;
// the words of a split line, each put back in single quotes, split to the same words; the
// completion split never fails.
#include "cmd/tock/repl/words.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// 'word', a quote inside written as '\'' (as a POSIX shell reads it).
std::string SingleQuoted(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string line(tock::fuzz::AsText(data, size));
  (void)tock::cli::repl::SplitPartial(line);
  auto words = tock::cli::repl::SplitWords(line);
  if (!words.ok()) {
    FUZZ_CHECK(words.status().code() == absl::StatusCode::kInvalidArgument,
               words.status().ToString());
    return 0;
  }
  std::string quoted;
  for (const std::string& word : *words) {
    if (!quoted.empty()) quoted += ' ';
    quoted += SingleQuoted(word);
  }
  auto again = tock::cli::repl::SplitWords(quoted);
  FUZZ_CHECK(again.ok(), line + "\n" + quoted);
  FUZZ_CHECK(*again == *words, line + "\n" + quoted);
  return 0;
}
