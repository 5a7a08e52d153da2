#include "cmd/tock/repl/repl.h"

#include <editline/readline.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cmd/tock/app.h"
#include "cmd/tock/interrupt.h"
#include "cmd/tock/repl/completion.h"
#include "cmd/tock/repl/inspector.h"
#include "cmd/tock/repl/words.h"
#include "lib/admin/namespace_ops.h"

namespace tock::cli::repl {
namespace {

constexpr int kHistoryLines = 2000;

std::string SessionHelp() {
  return "Session commands:\n"
         "  use NAMESPACE                  make NAMESPACE the default of every command\n"
         "  \\output table|card|json|jsonl  the output of every command\n"
         "  \\timing on|off                 print how long each command took\n"
         "  open WORKFLOW_ID [RUN_ID]      inspect a history (events, find, timeline, ...)\n"
         "  help                           this text and the command tree\n"
         "  exit, quit, Ctrl-D             leave; Ctrl-C cancels the running command\n"
         "Every tock command works here without the leading `tock`, e.g.\n"
         "  namespace describe orders\n"
         "  workflow list --query 'ExecutionStatus = \"Running\"'\n";
}

class Session {
 public:
  explicit Session(CommandContext& ctx) : ctx_(ctx) {}

  int Run() {
    const std::string history = HistoryFilePath();
    if (!history.empty()) {
      std::error_code ignored;
      const std::filesystem::path dir = std::filesystem::path(history).parent_path();
      // Command lines may hold secrets (an --api-key typed in): the directory Tock makes for
      // its history is its owner's only, and so is the file, from its creation on.
      if (std::filesystem::create_directories(dir, ignored)) chmod(dir.c_str(), 0700);
      const int fd = ::open(history.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      if (fd >= 0) ::close(fd);
      using_history();
      stifle_history(kHistoryLines);
      read_history(history.c_str());
    }
    rl_readline_name = "tock";
    rl_catch_signals = 0;  // Ctrl-C is ours: see InterruptWatcher
    InstallCompletion(ctx_, [this] { return inspector_ != nullptr; });
    struct Uninstall {
      ~Uninstall() { UninstallCompletion(); }
    } uninstall;
    InterruptWatcher watcher([this] { ctx_.Interrupt(); });
    int last = kExitOk;
    while (true) {
      errno = 0;
      const std::string prompt = Prompt();
      char* raw = readline(prompt.c_str());
      if (raw == nullptr) {
        if (errno == EINTR) {  // Ctrl-C at the prompt: a fresh line
          ctx_.out << "\n";
          continue;
        }
        ctx_.out << "\n";
        break;  // Ctrl-D or end of input
      }
      std::string line(raw);
      free(raw);
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      add_history(line.c_str());
      if (!history.empty()) {
        // The whole (stifled) history each time: libedit's append_history writes one entry
        // too many, and a few kilobytes per command cost nothing next to the command.
        write_history(history.c_str());
        chmod(history.c_str(), 0600);  // command lines may hold secrets
      }
      absl::StatusOr<std::vector<std::string>> words = SplitWords(line);
      if (!words.ok()) {
        ctx_.err << "error: " << words.status().message() << "\n";
        last = kExitUsage;
        continue;
      }
      if (words->empty()) continue;
      if ((*words)[0] == "exit" || (*words)[0] == "quit") {
        if (words->size() == 1) return kExitOk;
      }
      ctx_.ClearInterrupt();
      const auto start = std::chrono::steady_clock::now();
      last = Execute(*words);
      ForgetCompletionValues();
      if (timing_) {
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        ctx_.err << absl::StrFormat("Time: %.1f ms\n", ms);
      }
      ctx_.out << std::flush;
      ctx_.err << std::flush;
    }
    return last;
  }

 private:
  std::string Prompt() const {
    const std::string ns = ctx_.options.namespace_name;
    std::string prompt = absl::StrCat("tock ", ctx_.options.address, " ", ns);
    if (inspector_) absl::StrAppend(&prompt, " [", inspector_->workflow_id(), "]");
    return prompt + "> ";
  }

  int Fail(const absl::Status& status) {
    ctx_.err << "error: " << status.message() << "\n";
    return ExitCodeFor(status);
  }

  int Execute(const std::vector<std::string>& words) {
    const std::string& first = words[0];
    if (first == "help" && words.size() == 1) {
      ctx_.out << SessionHelp();
      if (inspector_) {
        ctx_.out << HistoryInspector::Help();
      } else {
        RunArgs(ctx_, {"--help"});
      }
      return kExitOk;
    }
    if (first == "\\output") {
      if (words.size() != 2)
        return Fail(absl::InvalidArgumentError("usage: \\output table|card|json|jsonl"));
      absl::StatusOr<OutputFormat> format = ParseOutputFormat(words[1]);
      if (!format.ok()) return Fail(format.status());
      ctx_.options.output = words[1];
      return kExitOk;
    }
    if (first == "\\timing") {
      if (words.size() != 2 || (words[1] != "on" && words[1] != "off")) {
        return Fail(absl::InvalidArgumentError("usage: \\timing on|off"));
      }
      timing_ = words[1] == "on";
      return kExitOk;
    }
    if (first == "use") {
      if (words.size() != 2) return Fail(absl::InvalidArgumentError("usage: use NAMESPACE"));
      return Use(words[1]);
    }
    if (first == "open") {
      if (words.size() < 2 || words.size() > 3) {
        return Fail(absl::InvalidArgumentError("usage: open WORKFLOW_ID [RUN_ID]"));
      }
      auto opened = HistoryInspector::Open(ctx_, words[1], words.size() == 3 ? words[2] : "");
      if (!opened.ok()) return Fail(opened.status());
      inspector_ = std::move(*opened);
      ctx_.err << "history of " << words[1] << ": " << inspector_->size()
               << " events (help lists the inspector's commands, back leaves)\n";
      return kExitOk;
    }
    if (first == "shell") {
      return Fail(absl::InvalidArgumentError("already in the tock shell"));
    }
    if (first == "server" && words.size() > 1 && words[1] == "start-dev") {
      // It would wait for a Ctrl-C that the session keeps for cancelling commands.
      return Fail(absl::InvalidArgumentError(
          "run the dev server in a terminal of its own: tock server start-dev"));
    }
    if (inspector_) {
      if (first == "back") {
        inspector_.reset();
        return kExitOk;
      }
      if (IsInspectorCommand(first)) {
        absl::Status s = inspector_->Execute(words);
        return s.ok() ? kExitOk : Fail(s);
      }
    }
    return RunArgs(ctx_, words);
  }

  static bool IsInspectorCommand(const std::string& word) {
    for (const std::string& name : HistoryInspector::CommandNames()) {
      if (name == word) return true;
    }
    return false;
  }

  // Switches the session's namespace after checking that the server knows it (a typo is
  // refused; an unreachable server does not stop the switch).
  int Use(const std::string& name) {
    auto c = ctx_.connection();
    if (c.ok()) {
      auto described = admin::DescribeNamespace(**c, name);
      if (!described.ok() && described.status().code() == absl::StatusCode::kNotFound) {
        return Fail(described.status());
      }
      if (!described.ok()) {
        ctx_.err << "warning: " << described.status().message() << "\n";
      }
    }
    ctx_.options.namespace_name = name;
    return kExitOk;
  }

  CommandContext& ctx_;
  bool timing_ = false;
  std::unique_ptr<HistoryInspector> inspector_;
};

}  // namespace

std::string HistoryFilePath() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && *state != '\0') return absl::StrCat(state, "/tock/history");
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return absl::StrCat(home, "/.local/state/tock/history");
  return "";
}

int RunRepl(CommandContext& ctx) { return Session(ctx).Run(); }

}  // namespace tock::cli::repl
