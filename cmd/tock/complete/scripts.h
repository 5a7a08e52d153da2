// The shell side of completion: scripts for bash, zsh and fish that hand the words of the
// command line to `tock __complete` and offer what it prints (one candidate per line,
// "VALUE" or "VALUE<TAB>DESCRIPTION"). The engine, not the script, knows the command tree,
// so a script never goes stale when commands are added; only the program name is baked in.
#pragma once

#include <string>
#include <vector>

namespace tock::cli::complete {

// The shells there is a script for: bash, zsh, fish.
const std::vector<std::string>& Shells();

// The script for `shell` (one of Shells()), completing `program`. Empty for another shell.
std::string CompletionScript(const std::string& shell, const std::string& program = "tock");

// Where the generated file of `shell` lives in the repository (completions/) and where
// `cmake --install` puts it: "tock.bash", "_tock", "tock.fish".
std::string ScriptFileName(const std::string& shell);

}  // namespace tock::cli::complete
