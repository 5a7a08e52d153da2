// The written documentation against the code, so that a page cannot name what does not exist
// nor leave out what does:
// - every `tock ...` line of a shell code block in README.md and docs/*.md parses against
//   tock's command tree (in process, with the tree `tock` itself builds: an unknown command,
//   flag or value fails the parse) and `tock ... --help` of it exits 0 with the built binary;
//   every command of the tree has an example in docs/cli.md;
// - every tock-server flag shown (command lines, and the flag table of docs/server.md) is
//   one `tock-server --help` lists, and the table lists every one;
// - every YAML block (the configuration reference of docs/server.md) is accepted by the
//   server's configuration loader, which refuses unknown keys, and every key the loader
//   accepts is in one of them (the reference is complete);
// - every Debian package scripts/setup.sh installs has its row in README.md's Dependencies.
// (man_test.cc checks the man pages the same way against the binaries.)
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <yaml-cpp/yaml.h>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cmd/tock/app.h"
#include "cmd/tock/repl/words.h"
#include "server-core/config/server_config.h"
#include "tests/cli/cli_fixture.h"
#include "tests/cli/help_text.h"

namespace tock::testing {
namespace {

struct DocFile {
  std::string name;  // "README.md", "docs/cli.md"
  std::string text;
};

// A file of the source tree ("docs/server.md"); empty when missing.
std::string ReadSource(const std::string& name) {
  std::ifstream in(std::string(TOCK_SOURCE_DIR) + "/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// README.md and every docs/*.md, each with its text.
std::vector<DocFile> Docs() {
  std::vector<DocFile> out = {{"README.md", ReadSource("README.md")}};
  const std::filesystem::path docs = std::filesystem::path(TOCK_SOURCE_DIR) / "docs";
  for (const auto& entry : std::filesystem::directory_iterator(docs)) {
    if (entry.path().extension() != ".md") continue;
    const std::string name = "docs/" + entry.path().filename().string();
    out.push_back({name, ReadSource(name)});
  }
  return out;
}

struct CodeBlock {
  std::string file;
  int line = 0;  // of the first line inside the fence
  std::string language;
  std::string text;
};

// The fenced code blocks of a Markdown text (``` with an optional language).
std::vector<CodeBlock> CodeBlocks(const DocFile& doc) {
  std::vector<CodeBlock> out;
  std::istringstream in(doc.text);
  std::optional<CodeBlock> open;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const size_t indent = line.find_first_not_of(' ');
    const bool fence = indent != std::string::npos && line.compare(indent, 3, "```") == 0;
    if (fence && !open) {
      open = CodeBlock{doc.name, number + 1, line.substr(indent + 3), ""};
    } else if (fence) {
      out.push_back(*std::move(open));
      open.reset();
    } else if (open) {
      open->text += line + "\n";
    }
  }
  return out;
}

bool IsShell(const CodeBlock& block) {
  return block.language == "sh" || block.language == "bash" || block.language == "shell";
}

struct CommandLine {
  std::string where;  // "docs/cli.md:42"
  std::vector<std::string> words;
};

// `line` up to where a shell would end the simple command: an unquoted comment, pipe,
// redirection, list or process substitution.
std::string SimpleCommand(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\') {
      ++i;
    } else if (c == '|' || c == '>' || c == '<' || c == ';' || c == '&' ||
               (c == '#' && (i == 0 || line[i - 1] == ' '))) {
      return line.substr(0, i);
    }
  }
  return line;
}

// The command lines of the shell blocks whose first word is `program`, continuation lines
// joined, split into words as a shell would.
std::vector<CommandLine> CommandLines(const std::string& program) {
  std::vector<CommandLine> out;
  for (const DocFile& doc : Docs()) {
    for (const CodeBlock& block : CodeBlocks(doc)) {
      if (!IsShell(block)) continue;
      std::istringstream in(block.text);
      int number = block.line - 1;
      for (std::string line; std::getline(in, line);) {
        const int first = ++number;
        while (!line.empty() && line.back() == '\\') {
          std::string next;
          if (!std::getline(in, next)) break;
          ++number;
          line.pop_back();
          line += next;
        }
        // Other programs' lines (curl, man, export) may hold what the splitter refuses.
        if (line.compare(0, program.size() + 1, program + " ") != 0) continue;
        const std::string command = SimpleCommand(line);
        absl::StatusOr<std::vector<std::string>> words = cli::repl::SplitWords(command);
        const std::string where = doc.name + ":" + std::to_string(first);
        EXPECT_TRUE(words.ok()) << where << ": " << words.status() << "\n" << line;
        if (!words.ok() || words->empty()) continue;
        out.push_back({where, std::vector<std::string>(words->begin() + 1, words->end())});
      }
    }
  }
  return out;
}

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += " " + w;
  return out;
}

// "workflow update execute": the command a parse of `app` chose.
std::string ChosenPath(const CLI::App& app) {
  std::string path;
  const CLI::App* at = &app;
  while (true) {
    std::vector<CLI::App*> chosen = at->get_subcommands();
    if (chosen.empty()) return path;
    at = chosen.front();
    path += (path.empty() ? "" : " ") + at->get_name();
  }
}

struct Parse {
  std::string error;  // empty when the words parse to a command
  std::string path;   // the command chosen
};

// Parses `words` with the tree `tock` builds, running nothing.
Parse DryParse(const std::vector<std::string>& words) {
  std::istringstream in;
  std::ostringstream out, err;
  cli::CommandContext ctx(in, out, err, false, false);
  CLI::App app{"", "tock"};
  cli::BuildApp(app, ctx);
  std::vector<const char*> argv = {"tock"};
  for (const std::string& w : words) argv.push_back(w.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return {e.what(), ""};
  }
  if (!ctx.action) return {"names a command group, not a command", ChosenPath(app)};
  return {"", ChosenPath(app)};
}

// Every command of the tree (groups left out), "namespace register"; hidden ones (no help
// group, such as __complete) left out.
void Commands(CLI::App& app, const std::string& prefix, std::set<std::string>& out) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;
    const std::string path = prefix + sub->get_name();
    if (sub->get_subcommands([](CLI::App*) { return true; }).empty()) {
      out.insert(path);
    } else {
      Commands(*sub, path + " ", out);
    }
  }
}

TEST(DocsTest, EveryTockCommandLineParses) {
  std::vector<CommandLine> lines = CommandLines("tock");
  // The tour and the CLI guide hold well over a hundred: finding few means the scan broke.
  ASSERT_GE(lines.size(), 100u);
  for (const CommandLine& line : lines) {
    EXPECT_EQ(DryParse(line.words).error, "") << line.where << ": tock" << Joined(line.words);
  }
}

TEST(DocsTest, TheCliGuideShowsEveryCommand) {
  std::istringstream in;
  std::ostringstream out, err;
  cli::CommandContext ctx(in, out, err, false, false);
  CLI::App app{"", "tock"};
  cli::BuildApp(app, ctx);
  std::set<std::string> commands;
  Commands(app, "", commands);
  ASSERT_GE(commands.size(), 50u);
  std::set<std::string> shown;
  for (const CommandLine& line : CommandLines("tock")) {
    if (line.where.rfind("docs/cli.md:", 0) == 0) shown.insert(DryParse(line.words).path);
  }
  for (const std::string& command : commands) {
    EXPECT_TRUE(shown.count(command) > 0)
        << "tock " << command << " has no example in a shell block of docs/cli.md";
  }
}

TEST(DocsTest, EveryTockCommandLineHasHelpInTheBuiltBinary) {
  for (const CommandLine& line : CommandLines("tock")) {
    std::vector<std::string> argv = {TOCK_CLI_BIN};
    argv.insert(argv.end(), line.words.begin(), line.words.end());
    argv.push_back("--help");
    ProcessResult r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, kExitOk) << line.where << ": tock" << Joined(line.words) << "\n"
                                    << r.err;
  }
}

TEST(DocsTest, EveryServerFlagShownExists) {
  ProcessResult help = RunProcess({TOCK_SERVER_BIN, "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  const std::vector<std::string> listed = LongFlags(help.out);
  const std::set<std::string> flags(listed.begin(), listed.end());
  ASSERT_GE(flags.size(), 10u) << help.out;
  // Hidden on purpose (tests only), documented as such.
  const std::set<std::string> hidden = {"--persistence-fault-rate", "--persistence-fault-seed"};
  std::vector<std::pair<std::string, std::string>> shown;  // where, flag
  for (const CommandLine& line : CommandLines("tock-server")) {
    for (const std::string& word : line.words) {
      if (word.rfind("--", 0) == 0) shown.emplace_back(line.where, word.substr(0, word.find('=')));
    }
  }
  // The flag table of docs/server.md: rows whose first cell is a flag.
  const std::regex row("^\\| `(--[a-z][a-z0-9-]*)");
  std::istringstream in(ReadSource("docs/server.md"));
  int number = 0;
  int table_rows = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    std::smatch m;
    if (std::regex_search(line, m, row)) {
      shown.emplace_back("docs/server.md:" + std::to_string(number), m[1]);
      ++table_rows;
    }
  }
  ASSERT_GE(table_rows, 20) << "the flag table of docs/server.md was not found";
  for (const auto& [where, flag] : shown) {
    EXPECT_TRUE(flags.count(flag) > 0 || hidden.count(flag) > 0)
        << where << ": " << flag << " is not a tock-server flag";
  }
}

TEST(DocsTest, EveryYamlBlockIsAcceptedByTheConfigLoader) {
  int blocks = 0;
  for (const DocFile& doc : Docs()) {
    for (const CodeBlock& block : CodeBlocks(doc)) {
      if (block.language != "yaml") continue;
      ++blocks;
      absl::StatusOr<server::ServerConfig> config = server::ParseServerConfig(block.text);
      EXPECT_TRUE(config.ok()) << block.file << ":" << block.line << ": " << config.status()
                               << "\n" << block.text;
    }
  }
  // The configuration reference shows every section in a block of its own.
  EXPECT_GE(blocks, 10);
}

TEST(DocsTest, TheFlagTableShowsEveryServerFlag) {
  ProcessResult help = RunProcess({TOCK_SERVER_BIN, "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  std::set<std::string> table;
  const std::regex row("^\\| `(--[a-z][a-z0-9-]*)");
  std::istringstream in(ReadSource("docs/server.md"));
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) table.insert(m[1]);
  }
  for (const std::string& flag : LongFlags(help.out)) {
    if (flag == "--help" || flag == "--version") continue;
    EXPECT_TRUE(table.count(flag) > 0)
        << flag << " is a tock-server flag but not in the flag table of docs/server.md";
  }
}

TEST(DocsTest, TheReadmeSaysWhatEveryDebianPackageIsFor) {
  // scripts/setup.sh's `packages=( ... )`: what the two commands of the README install.
  const std::string setup = ReadSource("scripts/setup.sh");
  const size_t begin = setup.find("packages=(");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = setup.find(')', begin);
  std::set<std::string> installed;
  std::istringstream words(setup.substr(begin + 10, end - begin - 10));
  for (std::string word; words >> word;) installed.insert(word);
  ASSERT_GE(installed.size(), 20u);
  // The first cell of each row of README.md's Dependencies table: `a`, `b`.
  const std::string readme = ReadSource("README.md");
  const size_t table = readme.find("## Dependencies");
  ASSERT_NE(table, std::string::npos);
  std::set<std::string> described;
  std::istringstream lines(readme.substr(table));
  const std::regex name("`([a-z0-9.+-]+)`");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::string cell = line.substr(0, line.find('|', 1));
    for (std::sregex_iterator it(cell.begin(), cell.end(), name), e; it != e; ++it) {
      described.insert((*it)[1]);
    }
  }
  for (const std::string& package : installed) {
    EXPECT_TRUE(described.count(package) > 0)
        << package << " is installed by scripts/setup.sh but README.md's Dependencies table "
        << "does not say what it is for";
  }
}

// The keys the configuration loader accepts in the mapping at `path` (empty: the top level),
// learnt by offering it a key it cannot know: its refusal lists what is allowed. Empty when
// `path` is not a mapping of fixed keys (a scalar, a list, or a mapping of names such as
// cluster_metadata.clusters).
std::vector<std::string> AllowedKeys(const std::vector<std::string>& path) {
  std::string yaml;
  std::string indent;
  for (const std::string& key : path) {
    yaml += indent + key + ":\n";
    indent += "  ";
  }
  yaml += indent + "docs_test_probe: 1\n";
  absl::StatusOr<server::ServerConfig> config = server::ParseServerConfig(yaml);
  if (config.ok()) return {};
  const std::string message(config.status().message());
  const std::string refusal = "docs_test_probe: unknown key; allowed: ";
  const size_t at = message.find(refusal);
  if (at == std::string::npos) return {};
  return absl::StrSplit(message.substr(at + refusal.size()), ", ");
}

// Every key the loader accepts, as dotted paths ("persistence.sqlite.path").
void LoaderKeys(const std::vector<std::string>& path, std::set<std::string>& out) {
  for (const std::string& key : AllowedKeys(path)) {
    std::vector<std::string> below = path;
    below.push_back(key);
    out.insert(absl::StrJoin(below, "."));
    LoaderKeys(below, out);
  }
}

// The keys of a YAML document, as dotted paths.
void DocumentKeys(const YAML::Node& node, const std::string& prefix, std::set<std::string>& out) {
  if (!node.IsMap()) return;
  for (const auto& entry : node) {
    const std::string key = prefix + entry.first.as<std::string>();
    out.insert(key);
    DocumentKeys(entry.second, key + ".", out);
  }
}

TEST(DocsTest, TheConfigurationReferenceShowsEveryKey) {
  std::set<std::string> loader;
  LoaderKeys({}, loader);
  // The top level and its sections: finding few means the probe broke.
  ASSERT_GE(loader.size(), 60u) << absl::StrJoin(loader, " ");
  std::set<std::string> shown;
  for (const CodeBlock& block : CodeBlocks({"docs/server.md", ReadSource("docs/server.md")})) {
    if (block.language == "yaml") DocumentKeys(YAML::Load(block.text), "", shown);
  }
  for (const std::string& key : loader) {
    EXPECT_TRUE(shown.count(key) > 0)
        << key << " is accepted by the configuration loader but not shown in the configuration "
        << "reference of docs/server.md";
  }
}

}  // namespace
}  // namespace tock::testing
