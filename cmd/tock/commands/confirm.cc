#include "cmd/tock/commands/confirm.h"

#include <cctype>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tock::cli {

absl::Status RequireConfirmable(const CommandContext& ctx, bool yes, const std::string& what) {
  if (yes || ctx.stdin_is_terminal) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("refusing to ", what,
                   " without confirmation: pass --yes (standard input is not a terminal)"));
}

absl::Status Ask(CommandContext& ctx, const std::string& question, const std::string& what) {
  ctx.err << question << " [y/N] " << std::flush;
  std::string answer;
  std::getline(ctx.in, answer);
  const std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(answer));
  if (lower == "y" || lower == "yes") return absl::OkStatus();
  return absl::CancelledError(absl::StrCat("did not ", what, " (answer y to go ahead)"));
}

absl::Status Confirm(CommandContext& ctx, bool yes, const std::string& what) {
  if (absl::Status s = RequireConfirmable(ctx, yes, what); !s.ok() || yes) return s;
  std::string question = what;
  if (!question.empty()) {
    question[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(question[0])));
  }
  return Ask(ctx, question + "?", what);
}

}  // namespace tock::cli
