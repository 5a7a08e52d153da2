// The confirmation of a destructive command: --yes, or "y" typed on a terminal. Without a
// terminal and without --yes nothing happens: a script must say --yes.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "cmd/tock/context.h"

namespace tock::cli {

// OK when `yes` or standard input is a terminal (the caller may then Ask). Otherwise
// INVALID_ARGUMENT "refusing to <what> without confirmation: pass --yes (standard input is
// not a terminal)". Reads nothing; call it before any server call.
absl::Status RequireConfirmable(const CommandContext& ctx, bool yes, const std::string& what);

// Prints "<question> [y/N] " on the error stream and reads one line: OK for y or yes (any
// case); CANCELLED "did not <what> (answer y to go ahead)" for anything else.
absl::Status Ask(CommandContext& ctx, const std::string& question, const std::string& what);

// Both: OK with --yes; refused off a terminal; else asks "<What>? [y/N] ".
absl::Status Confirm(CommandContext& ctx, bool yes, const std::string& what);

}  // namespace tock::cli
