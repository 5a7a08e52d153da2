// The committed man pages against the built binaries: a page for every command group `tock
// --help` lists, every subcommand and flag on its group's page, the written sections of
// tock(1), and every tock-server flag on tock-server(8). (That the pages are exactly what the
// current tree generates is the docs_up_to_date test; their lint is docs_man_lint.)
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/cli/cli_fixture.h"
#include "tests/cli/help_text.h"

namespace tock::testing {
namespace {

std::string ReadPage(const std::string& name) {
  std::ifstream in(std::string(TOCK_SOURCE_DIR) + "/man/" + name);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The page as a reader sees it (roff rendered to plain text by mandoc or groff).
std::string Rendered(const std::string& name) {
  const std::string path = std::string(TOCK_SOURCE_DIR) + "/man/" + name;
  ProcessResult r = RunProcess({"/bin/sh", "-c",
                                "if command -v mandoc >/dev/null; then mandoc -T ascii \"$0\"; "
                                "else groff -man -T ascii -P -cbou \"$0\"; fi | col -b",
                                path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

// The names listed under "Subcommands:" in a CLI11 help text.
std::vector<std::string> Subcommands(const std::string& help) {
  std::vector<std::string> out;
  std::istringstream in(help);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "Subcommands:") {
      inside = true;
      continue;
    }
    if (inside && line.empty()) break;
    if (inside && line.rfind("  ", 0) == 0 && line[2] != ' ') {
      std::string name = line.substr(2, line.find_first_of(", ", 2) - 2);
      out.push_back(name);
    }
  }
  return out;
}

ProcessResult Help(const std::vector<std::string>& words) {
  std::vector<std::string> argv = {TOCK_CLI_BIN};
  argv.insert(argv.end(), words.begin(), words.end());
  argv.push_back("--help");
  return RunProcess(argv);
}

TEST(ManTest, EveryCommandGroupHasAPageWithEverySubcommandAndFlag) {
  ProcessResult root = Help({});
  ASSERT_EQ(root.exit_code, kExitOk) << root.err;
  std::vector<std::string> groups = Subcommands(root.out);
  ASSERT_GE(groups.size(), 4u) << root.out;
  const std::string tock_page = Rendered("tock.1");
  for (const std::string& group : groups) {
    SCOPED_TRACE(group);
    const std::string page = "tock-" + group + ".1";
    ASSERT_NE(ReadPage(page), "") << "man/" << page << " is missing: run the regen-docs target";
    EXPECT_NE(tock_page.find(page.substr(0, page.size() - 2) + "(1)"), std::string::npos)
        << "tock(1) should point to " << page;
    const std::string text = Rendered(page);
    ProcessResult help = Help({group});
    std::vector<std::string> subs = Subcommands(help.out);
    if (subs.empty()) {
      for (const std::string& flag : LongFlags(help.out)) {
        EXPECT_NE(text.find(flag), std::string::npos) << flag;
      }
    }
    for (const std::string& sub : subs) {
      EXPECT_NE(text.find("tock " + group + " " + sub), std::string::npos) << sub;
      ProcessResult sub_help = Help({group, sub});
      for (const std::string& flag : LongFlags(sub_help.out)) {
        if (flag == "--help") continue;
        EXPECT_NE(text.find(flag), std::string::npos) << group << " " << sub << " " << flag;
      }
    }
  }
}

TEST(ManTest, TockPageHasTheWrittenSections) {
  const std::string text = Rendered("tock.1");
  for (const char* section : {"NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "COMMANDS",
                              "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"}) {
    EXPECT_TRUE(std::regex_search(text, std::regex(std::string("\n") + section + "\n"))) << section;
  }
  for (const char* variable :
       {"TOCK_ADDRESS", "TEMPORAL_ADDRESS", "TOCK_NAMESPACE", "TEMPORAL_NAMESPACE", "TOCK_API_KEY",
        "NO_COLOR", "XDG_STATE_HOME"}) {
    EXPECT_NE(text.find(variable), std::string::npos) << variable;
  }
  EXPECT_NE(text.find("$XDG_STATE_HOME/tock/history"), std::string::npos);
  // DESIGN.md's exit codes, each with its meaning.
  for (const char* code : {"0 +Success", "1 +An error", "2 +Usage error", "3 +Not found",
                           "4 +The server is unavailable", "5 +Already exists"}) {
    EXPECT_TRUE(std::regex_search(text, std::regex(std::string("\n +") + code))) << code;
  }
  for (const std::string& flag : LongFlags(Help({}).out)) {
    EXPECT_NE(text.find(flag), std::string::npos) << flag;
  }
  // Defaults are the built-in ones, whatever the environment of whoever generated the page.
  EXPECT_NE(text.find("Default: 127.0.0.1:7233"), std::string::npos);
}

TEST(ManTest, ServerPageHasEveryServerFlag) {
  ProcessResult help = RunProcess({TOCK_SERVER_BIN, "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  const std::string text = Rendered("tock-server.8");
  std::vector<std::string> flags = LongFlags(help.out);
  ASSERT_GE(flags.size(), 5u) << help.out;
  for (const std::string& flag : flags) EXPECT_NE(text.find(flag), std::string::npos) << flag;
  for (const char* section : {"OPTIONS", "CONFIGURATION FILE", "EXIT STATUS", "EXAMPLES"}) {
    EXPECT_NE(text.find(std::string("\n") + section + "\n"), std::string::npos) << section;
  }
}

}  // namespace
}  // namespace tock::testing
