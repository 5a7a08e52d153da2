#include "cmd/tock/repl/completion.h"

#include <editline/readline.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "cmd/tock/complete/completer.h"
#include "cmd/tock/repl/inspector.h"

namespace tock::cli::repl {
namespace {

const std::vector<std::string>& SessionCommands() {
  static const std::vector<std::string> names = {"use",  "\\output", "\\timing", "open",
                                                 "help", "exit",     "quit"};
  return names;
}

void AddMatching(std::vector<std::string>& out, const std::vector<std::string>& names,
                 const std::string& prefix) {
  for (const std::string& n : names) {
    if (absl::StartsWith(n, prefix)) out.push_back(n);
  }
}

// The completion state of one TAB press: libedit asks for the matches one by one.
struct Pending {
  std::unique_ptr<complete::Completer> completer;  // one per session: its cache lives on
  std::function<bool()> in_inspector;
  std::vector<std::string> matches;
};
Pending g_pending;

char* NextMatch(const char*, int state) {
  static size_t index;
  if (state == 0) index = 0;
  if (index >= g_pending.matches.size()) return nullptr;
  return strdup(g_pending.matches[index++].c_str());
}

char** Complete(const char* text, int, int) {
  rl_attempted_completion_over = 1;  // never fall back to file names
  const std::string before(rl_line_buffer, rl_point);
  g_pending.matches = Candidates(*g_pending.completer, SplitPartial(before),
                                 g_pending.in_inspector && g_pending.in_inspector());
  if (g_pending.matches.empty()) return nullptr;
  return rl_completion_matches(text, NextMatch);
}

}  // namespace

std::vector<std::string> Candidates(complete::Completer& completer, const PartialLine& line,
                                    bool in_inspector) {
  std::vector<std::string> out;
  auto add_values = [&](complete::ValueKind kind) {
    for (const complete::Candidate& c : completer.Values(kind, line.current))
      out.push_back(c.value);
    return out;
  };
  if (line.words.empty()) {
    AddMatching(out, SessionCommands(), line.current);
    if (in_inspector) AddMatching(out, HistoryInspector::CommandNames(), line.current);
  } else if (line.words.size() == 1) {
    const std::string& first = line.words[0];
    if (in_inspector && first == "find") return add_values(complete::ValueKind::kEventType);
    if (in_inspector && first == "export") return add_values(complete::ValueKind::kFile);
    if (first == "use") return add_values(complete::ValueKind::kNamespace);
    if (first == "open") return add_values(complete::ValueKind::kWorkflowId);
    if (first == "\\output") {
      AddMatching(out, {"table", "card", "json", "jsonl"}, line.current);
      return out;
    }
    if (first == "\\timing") {
      AddMatching(out, {"on", "off"}, line.current);
      return out;
    }
  }
  for (const complete::Candidate& c : completer.Complete(line.words, line.current)) {
    out.push_back(c.value);
  }
  return out;
}

void InstallCompletion(CommandContext& ctx, std::function<bool()> in_inspector) {
  g_pending.completer = std::make_unique<complete::Completer>(ctx);
  g_pending.in_inspector = std::move(in_inspector);
  rl_attempted_completion_function = Complete;
  // Words break at spaces only: flags (--x), \output and quotes are part of a word.
  static char breaks[] = " \t";
  rl_completer_word_break_characters = breaks;
}

void UninstallCompletion() {
  rl_attempted_completion_function = nullptr;
  g_pending.completer.reset();
  g_pending.in_inspector = nullptr;
}

void ForgetCompletionValues() {
  if (g_pending.completer) g_pending.completer->ClearCache();
}

}  // namespace tock::cli::repl
