// tock-docgen: writes (or checks) the files generated from the command tree: the man pages
// in man/ and the completion scripts in completions/.
//
//   tock-docgen --root DIR --server-bin PATH [--check]
//
// --check compares instead of writing: exit 1 naming every file that differs, is missing, or
// is left over, and the command that regenerates them.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "cmd/tock/app.h"
#include "cmd/tock/complete/scripts.h"
#include "cmd/tock/docs/man.h"

namespace {

namespace fs = std::filesystem;

// The date on the pages: fixed, so that they change only when what they say changes. Bump it
// with a release.
constexpr char kManualDate[] = "2026-11-22";

bool ReadFile(const fs::path& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  out = buffer.str();
  return true;
}

std::string RunForOutput(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  pclose(pipe);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"tock-docgen: generate (or check) man/ and completions/ from the command tree",
               "tock-docgen"};
  std::string root;
  std::string server_bin;
  bool check = false;
  cli.add_option("--root", root, "Repository root (holds man/ and completions/)")->required();
  cli.add_option("--server-bin", server_bin, "The tock-server binary (its --help)")->required();
  cli.add_flag("--check", check, "Compare with the files instead of writing them");
  cli.footer(
      "Example:\n  tock-docgen --root . --server-bin build/cmd/tock-server/tock-server --check\n");
  CLI11_PARSE(cli, argc, argv);

  // The defaults shown on the pages are the built-in ones, not this shell's environment.
  for (const char* name : {"TOCK_ADDRESS", "TEMPORAL_ADDRESS", "TOCK_NAMESPACE",
                           "TEMPORAL_NAMESPACE", "TOCK_API_KEY", "TEMPORAL_API_KEY", "NO_COLOR"}) {
    unsetenv(name);
  }
  std::istringstream in;
  std::ostringstream sink;
  tock::cli::CommandContext ctx(in, sink, sink, false, false);
  CLI::App app{"", "tock"};
  tock::cli::BuildApp(app, ctx);

  const tock::cli::docs::ManOptions options{TOCK_VERSION, kManualDate};
  const std::string server_help = RunForOutput("'" + server_bin + "' --help");
  if (server_help.find("Options:") == std::string::npos) {
    std::cerr << "tock-docgen: no help from " << server_bin << " --help\n";
    return 1;
  }

  // Relative path -> content, for every generated file.
  std::map<std::string, std::string> files;
  for (auto& [name, text] : tock::cli::docs::TockManPages(app, options))
    files["man/" + name] = text;
  files["man/tock-server.8"] = tock::cli::docs::ServerManPage(server_help, options);
  for (const std::string& shell : tock::cli::complete::Shells()) {
    files["completions/" + tock::cli::complete::ScriptFileName(shell)] =
        tock::cli::complete::CompletionScript(shell);
  }

  const fs::path base(root);
  if (!check) {
    for (const char* dir : {"man", "completions"}) {
      // Pages of commands that no longer exist go away.
      std::error_code ec;
      for (const auto& entry : fs::directory_iterator(base / dir, ec)) {
        const std::string rel = std::string(dir) + "/" + entry.path().filename().string();
        if (files.count(rel) == 0) fs::remove(entry.path());
      }
      fs::create_directories(base / dir);
    }
    for (const auto& [rel, text] : files) {
      std::ofstream out(base / rel, std::ios::binary | std::ios::trunc);
      out << text;
      if (!out) {
        std::cerr << "tock-docgen: cannot write " << (base / rel) << "\n";
        return 1;
      }
    }
    std::cout << "tock-docgen: wrote " << files.size() << " files under " << root << "\n";
    return 0;
  }

  int problems = 0;
  for (const auto& [rel, text] : files) {
    std::string committed;
    if (!ReadFile(base / rel, committed)) {
      std::cerr << rel << ": missing (a new command group?)\n";
      ++problems;
    } else if (committed != text) {
      std::cerr << rel << ": differs from what the current command tree generates\n";
      ++problems;
    }
  }
  for (const char* dir : {"man", "completions"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(base / dir, ec)) {
      const std::string rel = std::string(dir) + "/" + entry.path().filename().string();
      if (files.count(rel) == 0) {
        std::cerr << rel << ": no longer generated (a command was removed or renamed?)\n";
        ++problems;
      }
    }
  }
  if (problems > 0) {
    std::cerr << "\nman/ and completions/ are out of date with the command tree. Regenerate and "
                 "commit them:\n  cmake --build build --target regen-docs && git add man "
                 "completions\n";
    return 1;
  }
  std::cout << "tock-docgen: " << files.size() << " files up to date\n";
  return 0;
}
