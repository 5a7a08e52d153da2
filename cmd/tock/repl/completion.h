// TAB completion in the REPL: session commands, the inspector's commands, and everything of
// the command tree (subcommands, flags, enum values, live values from the server).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cmd/tock/complete/completer.h"
#include "cmd/tock/context.h"
#include "cmd/tock/repl/words.h"

namespace tock::cli::repl {

// The candidates for the word being typed (each a whole word, to replace it): session and
// inspector commands, then the command tree's through `completer`.
std::vector<std::string> Candidates(complete::Completer& completer, const PartialLine& line,
                                    bool in_inspector);

// Binds Candidates to libedit's completion for this session.
void InstallCompletion(CommandContext& ctx, std::function<bool()> in_inspector);

// Unbinds it at the end of the session (the completer refers to the session's context).
void UninstallCompletion();

// Forgets the live values fetched so far: a command may have changed them (a namespace
// registered, a workflow started), and the next TAB should see that.
void ForgetCompletionValues();

}  // namespace tock::cli::repl
