// Shell completion as an operator gets it: the scripts `tock completion bash|zsh|fish` print,
// loaded into the real shells, with `tock` found on PATH and a real tock-server behind it.
// bash runs its completion function through COMP_WORDS/COMP_CWORD as bash sets them, both
// with the bash-completion framework loaded and without; zsh runs the function with compadd
// recorded; fish answers `complete -C`.
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "cmd/tock/app.h"
#include "cmd/tock/complete/completer.h"
#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

constexpr char kBashCompletionFramework[] = "/usr/share/bash-completion/bash_completion";

// Loads the script (after the framework, in mode "framework"), finds the function
// `complete -p tock` names, sets COMP_* as bash would for the line, calls it, prints COMPREPLY.
constexpr char kBashDriver[] = R"(mode=$1; script=$2; line=$3; shift 3
if [[ $mode == framework ]]; then
  source /usr/share/bash-completion/bash_completion || exit 90
fi
source "$script" || exit 91
spec=$(complete -p tock) || exit 92
fn=${spec##*-F }; fn=${fn%% *}
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE=$line; COMP_POINT=${#line}
COMPREPLY=()
"$fn" tock "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
(( ${#COMPREPLY[@]} )) && printf '%s\n' "${COMPREPLY[@]}"
exit 0
)";

// compadd recorded: prints the values of the array given with -a, one a line.
constexpr char kZshDriver[] = R"(compadd() {
  local arr=""
  while (( $# )); do
    case $1 in
      -a) arr=$2; shift 2 ;;
      -d|-S) shift 2 ;;
      *) shift ;;
    esac
  done
  local v
  for v in "${(@P)arr}"; do print -r -- "$v"; done
}
source $1; shift
words=("$@"); CURRENT=$#
_tock
exit 0
)";

// COMP_WORDS for a line, as bash splits it: at blanks, and around = and : (COMP_WORDBREAKS).
std::vector<std::string> BashWords(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  for (char c : line) {
    if (c == ' ') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else if (c == '=' || c == ':') {
      if (!word.empty()) words.push_back(word);
      words.push_back(std::string(1, c));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty() || line.empty() || line.back() == ' ') words.push_back(word);
  return words;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Values of "VALUE<TAB>DESCRIPTION" lines.
std::vector<std::string> Values(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& line : Lines(text)) out.push_back(line.substr(0, line.find('\t')));
  return out;
}

// The path of `program` on PATH, or "" (RunProcess wants a path).
std::string Which(const std::string& program) {
  ProcessResult r = RunProcess({"/bin/sh", "-c", "command -v " + program});
  if (r.exit_code != 0) return "";
  return r.out.substr(0, r.out.find('\n'));
}

class CompletionTest : public CliTest {
 protected:
  void SetUp() override {
    // `tock` on PATH, as the scripts call it by the name the user typed.
    bin_ = dir_.path() / "bin";
    std::filesystem::create_directories(bin_);
    std::filesystem::create_symlink(TOCK_CLI_BIN, bin_ / "tock");
    for (const std::string shell : {"bash", "zsh", "fish"}) {
      ProcessResult r = RunProcess({TOCK_CLI_BIN, "completion", shell});
      ASSERT_EQ(r.exit_code, kExitOk) << r.err;
      ASSERT_EQ(r.err, "");
      scripts_[shell] = dir_.Write("tock." + shell, r.out);
    }
    bash_driver_ = dir_.Write("bash_driver.sh", kBashDriver);
    zsh_driver_ = dir_.Write("zsh_driver.zsh", kZshDriver);
  }

  std::map<std::string, std::string> Env(const std::string& address) const {
    return {{"PATH", bin_.string() + ":" + std::getenv("PATH")},
            {"TOCK_ADDRESS", address},
            {"HOME", dir_.path().string()}};
  }

  std::string Address() const { return server_ ? server_->address() : "127.0.0.1:1"; }

  // COMPREPLY after TAB at the end of `line` ("tock namespace describe "), in both bash modes
  // (the same answer is expected from each); bash must print nothing on stderr.
  std::vector<std::string> Bash(const std::string& line, const std::string& address = "") {
    auto run = [&](const std::string& mode) {
      std::vector<std::string> argv = {"/bin/bash", bash_driver_, mode, scripts_["bash"], line};
      for (const std::string& w : BashWords(line)) argv.push_back(w);
      ProcessResult r = RunProcess(argv, Env(address.empty() ? Address() : address));
      EXPECT_EQ(r.exit_code, 0) << mode << ": " << line << "\n" << r.err;
      EXPECT_EQ(r.err, "") << mode << ": " << line;
      return Lines(r.out);
    };
    std::vector<std::string> plain = run("plain");
    if (access(kBashCompletionFramework, R_OK) != 0) {
      ADD_FAILURE() << "bash-completion is not installed (scripts/setup.sh installs it)";
      return plain;
    }
    std::vector<std::string> framework = run("framework");
    EXPECT_EQ(plain, framework) << "plain bash and bash-completion differ for: " << line;
    return framework;
  }

  std::filesystem::path bin_;
  std::map<std::string, std::string> scripts_;
  std::string bash_driver_;
  std::string zsh_driver_;
};

TEST_F(CompletionTest, BashOffersANamespaceRegisteredInThisTest) {
  StartServer();
  Register({"zeta-orders"});
  EXPECT_THAT(Bash("tock namespace describe "), IsSupersetOf({"default", "zeta-orders"}));
  EXPECT_THAT(Bash("tock namespace describe ze"), ElementsAre("zeta-orders"));
  EXPECT_THAT(Bash("tock ns history ze"), ElementsAre("zeta-orders")) << "the alias";
  EXPECT_THAT(Bash("tock -n ze"), ElementsAre("zeta-orders")) << "global -n";
  EXPECT_THAT(Bash("tock workflow list --namespace ze"), ElementsAre("zeta-orders"));
  EXPECT_THAT(Bash("tock --namespace=ze"), ElementsAre("zeta-orders"))
      << "bash replaces only what follows the =";
  // A new name is not completed from the server.
  EXPECT_THAT(Bash("tock namespace register ze"), IsEmpty());
  EXPECT_THAT(Bash("tock server start-dev --namespace ze"), IsEmpty());
}

TEST_F(CompletionTest, BashCompletesCommandsFlagsAndEnums) {
  StartServer();
  std::vector<std::string> top = Bash("tock ");
  EXPECT_THAT(top, IsSupersetOf({"namespace", "cluster", "workflow", "server", "completion"}));
  EXPECT_THAT(top, Not(Contains("__complete"))) << "hidden commands stay hidden";
  EXPECT_THAT(Bash("tock namespace de"), UnorderedElementsAre("describe", "deprecate", "delete"));
  EXPECT_THAT(Bash("tock namespace describe --a"),
              UnorderedElementsAre("--as-of", "--address", "--api-key"))
      << "the command's flags and the global ones";
  EXPECT_THAT(Bash("tock namespace register orders --ret"), ElementsAre("--retention"));
  EXPECT_THAT(Bash("tock namespace delete orders -"), Contains("-y"));
  EXPECT_THAT(Bash("tock workflow describe "), ElementsAre("--workflow-id", "--run-id"))
      << "a command without positionals offers its flags, required first";
  EXPECT_THAT(Bash("tock -o "), ElementsAre("table", "card", "json", "jsonl"));
  EXPECT_THAT(Bash("tock namespace list -o j"), ElementsAre("json", "jsonl"));
  EXPECT_THAT(Bash("tock --output=j"), ElementsAre("json", "jsonl"));
  EXPECT_THAT(Bash("tock --color "), ElementsAre("auto", "always", "never"));
  EXPECT_THAT(Bash("tock task-queue describe --type "), ElementsAre("workflow", "activity"));
  EXPECT_THAT(Bash("tock completion "), ElementsAre("bash", "zsh", "fish"));
  EXPECT_THAT(Bash("tock --"), Contains("--address")) << "a line starting with --";
  // A flag given once is not offered again; a repeatable one is.
  EXPECT_THAT(Bash("tock --timeout 5s --ti"), IsEmpty());
  EXPECT_THAT(Bash("tock namespace register x --data a=1 --da"), ElementsAre("--data"));
}

TEST_F(CompletionTest, BashCompletesWorkflowIdsTaskQueuesAndClusters) {
  StartServer();
  Register({"other"});
  for (const auto& [id, queue] : {std::pair{"order-7", "orders-q"}, {"ship-1", "shipping-q"}}) {
    ProcessResult r =
        Tock({"workflow", "start", "--type", "order", "--task-queue", queue, "--id", id});
    ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  }
  EXPECT_THAT(Bash("tock workflow describe -w "), UnorderedElementsAre("order-7", "ship-1"));
  EXPECT_THAT(Bash("tock workflow show --workflow-id or"), ElementsAre("order-7"));
  EXPECT_THAT(Bash("tock workflow describe-state --workflow-id sh"), ElementsAre("ship-1"));
  EXPECT_THAT(Bash("tock workflow start --task-queue "),
              UnorderedElementsAre("orders-q", "shipping-q"));
  EXPECT_THAT(Bash("tock task-queue describe -q sh"), ElementsAre("shipping-q"));
  // Workflow ids are those of the namespace in effect on the line.
  EXPECT_THAT(Bash("tock -n other workflow describe -w "), IsEmpty());
  EXPECT_THAT(Bash("tock workflow start --id "), IsEmpty()) << "a new id";

  json cluster = TockJson({"cluster", "describe"});
  const std::string name = At(cluster, "/clusterName").get<std::string>();
  EXPECT_THAT(Bash("tock namespace failover other --to "), ElementsAre(name));
  EXPECT_THAT(Bash("tock namespace register g --global --clusters " + name + ","), IsEmpty())
      << "a cluster already in the list is not offered again";
}

TEST_F(CompletionTest, BashCompletesPaths) {
  dir_.Write("ca.pem", "");
  std::filesystem::create_directories(dir_.path() / "certs");
  const std::string base = dir_.path().string() + "/";
  EXPECT_THAT(Bash("tock --tls-ca-cert " + base + "c"),
              UnorderedElementsAre(base + "ca.pem", base + "certs/"));
  EXPECT_THAT(Bash("tock server start-dev --config " + base + "ce"), ElementsAre(base + "certs/"));
}

TEST_F(CompletionTest, UnreachableServerIsSilentAndFast) {
  const std::string closed = "127.0.0.1:" + std::to_string(ClosedLocalPort());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(Bash("tock namespace describe ", closed), IsEmpty());
  EXPECT_THAT(Bash("tock workflow describe -w ", closed), IsEmpty());
  const auto elapsed = std::chrono::steady_clock::now() - start;
  // Four bash runs (two modes each), each bounded by the 300 ms completion deadline.
  EXPECT_LT(elapsed, std::chrono::seconds(4));
  // What needs no server still completes.
  EXPECT_THAT(Bash("tock namespace desc", closed), ElementsAre("describe"));

  // The hidden command itself: nothing on stdout or stderr, exit 0, whatever the flags.
  for (const std::vector<std::string>& words :
       {std::vector<std::string>{"tock", "namespace", "describe", ""},
        {"tock", "--address", closed, "namespace", "describe", ""},
        {"tock", "--tls-ca-cert", "/nonexistent.pem", "namespace", "describe", ""},
        {"tock", "--timeout", "bogus", "-n", ""},
        {"tock", "--", ""}}) {
    std::vector<std::string> argv = {TOCK_CLI_BIN, "__complete"};
    argv.insert(argv.end(), words.begin(), words.end());
    ProcessResult r = RunProcess(argv, {{"TOCK_ADDRESS", closed}});
    EXPECT_EQ(r.exit_code, kExitOk) << Describe(argv, r);
    EXPECT_EQ(r.out, "") << Describe(argv, r);
    EXPECT_EQ(r.err, "") << Describe(argv, r);
  }
}

TEST_F(CompletionTest, CompleteCommandPrintsDescriptions) {
  StartServer();
  Register({"zeta-orders"});
  ProcessResult r = Tock({"__complete", "namespace", "describe", "zeta"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "zeta-orders\tRegistered\n");
  EXPECT_EQ(r.err, "");
  r = Tock({"__complete", "namespace", "reg"});
  EXPECT_EQ(r.out, "register\tRegister a new namespace\n");
  // Words that look like flags are data: --help and -- do not reach CLI11.
  r = Tock({"__complete", "tock", "namespace", "--help", "describe", "--as"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_THAT(Values(r.out), ElementsAre("--as-of"));
}

TEST_F(CompletionTest, ZshScript) {
  const std::string zsh_bin = Which("zsh");
  if (zsh_bin.empty()) GTEST_SKIP() << "zsh is not installed (scripts/setup.sh installs it)";
  ProcessResult syntax = RunProcess({zsh_bin, "-n", scripts_["zsh"]});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  StartServer();
  Register({"zeta-orders"});
  auto zsh = [&](std::vector<std::string> words) {
    std::vector<std::string> argv = {zsh_bin, zsh_driver_, scripts_["zsh"]};
    argv.insert(argv.end(), words.begin(), words.end());
    ProcessResult r = RunProcess(argv, Env(Address()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return Lines(r.out);
  };
  EXPECT_THAT(zsh({"tock", "namespace", "describe", ""}), IsSupersetOf({"default", "zeta-orders"}));
  EXPECT_THAT(zsh({"tock", "ns", "describe", "ze"}), ElementsAre("zeta-orders"));
  EXPECT_THAT(zsh({"tock", "--output=j"}), ElementsAre("--output=json", "--output=jsonl"));
  EXPECT_THAT(zsh({"tock", "namespace", "de"}),
              UnorderedElementsAre("describe", "deprecate", "delete"));
}

TEST_F(CompletionTest, FishScript) {
  const std::string fish_bin = Which("fish");
  if (fish_bin.empty()) GTEST_SKIP() << "fish is not installed (scripts/setup.sh installs it)";
  ProcessResult syntax = RunProcess({fish_bin, "--no-execute", scripts_["fish"]});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  StartServer();
  Register({"zeta-orders"});
  auto fish = [&](const std::string& line) {
    ProcessResult r = RunProcess({fish_bin, "--no-config", "-c",
                                  "source " + scripts_["fish"] + "; complete -C'" + line + "'"},
                                 Env(Address()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return Lines(r.out);
  };
  EXPECT_THAT(fish("tock namespace describe "), Contains("zeta-orders\tRegistered"));
  EXPECT_THAT(fish("tock namespace describe ze"), ElementsAre("zeta-orders\tRegistered"));
  EXPECT_THAT(fish("tock -o j"), ElementsAre("json", "jsonl"));
}

// The engine in process, as the REPL uses it: one Completer per session.
std::vector<std::string> ValuesOf(const std::vector<cli::complete::Candidate>& candidates) {
  std::vector<std::string> out;
  for (const auto& c : candidates) out.push_back(c.value);
  return out;
}

TEST_F(CompletionTest, CompleterCachesLiveValuesUntilCleared) {
  StartServer();
  std::istringstream in;
  std::ostringstream out;
  cli::CommandContext ctx(in, out, out, false, false);
  ctx.options.address = server_->address();
  cli::complete::CompleterOptions options;
  options.cache_ttl = absl::Hours(1);
  cli::complete::Completer completer(ctx, options);
  EXPECT_THAT(ValuesOf(completer.Complete({"namespace", "describe"}, "")), ElementsAre("default"));
  Register({"late"});
  EXPECT_THAT(ValuesOf(completer.Complete({"namespace", "describe"}, "")), ElementsAre("default"))
      << "served from the cache";
  completer.ClearCache();
  EXPECT_THAT(ValuesOf(completer.Complete({"namespace", "describe"}, "")),
              UnorderedElementsAre("default", "late"));
  EXPECT_THAT(ValuesOf(completer.Values(cli::complete::ValueKind::kNamespace, "la")),
              ElementsAre("late"));
  // Another server named on the line is asked on its own connection.
  const std::string closed = "127.0.0.1:" + std::to_string(ClosedLocalPort());
  EXPECT_THAT(completer.Complete({"--address", closed, "namespace", "describe"}, ""), IsEmpty());
}

TEST_F(CompletionTest, CompleterEventTypes) {
  std::istringstream in;
  std::ostringstream out;
  cli::CommandContext ctx(in, out, out, false, false);
  cli::complete::Completer completer(ctx);
  std::vector<std::string> timers =
      ValuesOf(completer.Values(cli::complete::ValueKind::kEventType, "Timer"));
  EXPECT_THAT(timers, UnorderedElementsAre("TimerStarted", "TimerFired", "TimerCanceled"));
  EXPECT_THAT(ValuesOf(completer.Values(cli::complete::ValueKind::kEventType, "")),
              Contains("WorkflowExecutionStarted"));
}

// Every line of the value table names a command that exists and an option (or positional)
// of that command or of one below it: a renamed flag must not silently lose its completion.
TEST(CompletionRules, EveryRuleNamesAnExistingOption) {
  std::istringstream in;
  std::ostringstream out;
  cli::CommandContext ctx(in, out, out, false, false);
  CLI::App app{"", "tock"};
  cli::BuildApp(app, ctx);
  std::function<bool(CLI::App&, const std::string&)> has_option = [&](CLI::App& at,
                                                                      const std::string& name) {
    for (CLI::Option* o : at.get_options()) {
      if (o->check_name(name)) return true;
    }
    for (CLI::App* sub : at.get_subcommands([](CLI::App*) { return true; })) {
      if (has_option(*sub, name)) return true;
    }
    return false;
  };
  for (const cli::complete::ValueRule& rule : cli::complete::ValueRules()) {
    SCOPED_TRACE(std::string(rule.command) + " " + std::string(rule.name));
    CLI::App* at = &app;
    std::istringstream words{std::string(rule.command)};
    for (std::string word; words >> word;) {
      at = at->get_subcommand(word);  // throws (fails the test) for an unknown command
    }
    EXPECT_TRUE(has_option(*at, std::string(rule.name)));
  }
}

}  // namespace
}  // namespace tock::testing
