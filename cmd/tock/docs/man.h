// Man pages generated from the command tree: tock(1), one page per top-level command
// (tock-namespace(1), tock-workflow(1), ... whatever BuildApp registers), and tock-server(8)
// from the server's own --help. Names, synopses, options with their descriptions and
// defaults, subcommands and the examples of each command's --help come from the tree; the
// DESCRIPTION, EXIT STATUS, ENVIRONMENT, FILES and EXAMPLES prose is written here.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>

namespace tock::cli::docs {

struct ManOptions {
  std::string version;  // "0.1.0"
  std::string date;     // YYYY-MM-DD, fixed so that the pages do not change every day
};

// File name ("tock.1", "tock-namespace.1") -> roff (man(7) macros) for `tock`, from the
// root of a tree built by BuildApp.
std::map<std::string, std::string> TockManPages(const CLI::App& root, const ManOptions& options);

// tock-server(8) from the text `tock-server --help` prints (CLI11's format).
std::string ServerManPage(const std::string& server_help, const ManOptions& options);

}  // namespace tock::cli::docs
