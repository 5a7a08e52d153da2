#include "cmd/tock/repl/completion.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <editline/readline.h>

#include "absl/strings/match.h"
#include "cmd/tock/app.h"
#include "cmd/tock/repl/inspector.h"
#include "temporal/api/enums/v1/event_type.pb.h"

namespace tock::cli::repl {
namespace {

const std::vector<std::string>& SessionCommands() {
  static const std::vector<std::string> names = {"use", "\\output", "\\timing", "open",
                                                 "help", "exit",    "quit"};
  return names;
}

// Event type labels for `find` (TimerFired, ActivityTaskScheduled, ...).
std::vector<std::string> EventTypeLabels() {
  std::vector<std::string> out;
  const auto* descriptor = temporal::api::enums::v1::EventType_descriptor();
  for (int i = 0; i < descriptor->value_count(); ++i) {
    const std::string name = descriptor->value(i)->name();
    if (absl::EndsWith(name, "UNSPECIFIED")) continue;
    std::string label = EnumLabel(name, "EVENT_TYPE_");  // "Timer Fired"
    label.erase(std::remove(label.begin(), label.end(), ' '), label.end());
    out.push_back(label);
  }
  return out;
}

void AddMatching(std::vector<std::string>& out, const std::vector<std::string>& names,
                 const std::string& prefix) {
  for (const std::string& n : names) {
    if (absl::StartsWith(n, prefix)) out.push_back(n);
  }
}

// Subcommands and flags of the command tree at the point the words reach.
std::vector<std::string> CompleteCommandLine(CommandContext& ctx,
                                             const std::vector<std::string>& words,
                                             const std::string& current) {
  CLI::App app{"", "tock"};
  BuildApp(app, ctx);
  CLI::App* at = &app;
  for (const std::string& w : words) {
    if (absl::StartsWith(w, "-")) continue;
    CLI::App* next = nullptr;
    for (CLI::App* sub : at->get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_name() == w) next = sub;
    }
    if (next != nullptr) at = next;
  }
  std::vector<std::string> names;
  if (absl::StartsWith(current, "-")) {
    for (const CLI::App* a = at; a != nullptr; a = a->get_parent()) {
      for (const CLI::Option* o : a->get_options()) {
        for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
      }
    }
  } else {
    for (CLI::App* sub : at->get_subcommands([](CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
    }
  }
  std::vector<std::string> out;
  AddMatching(out, names, current);
  return out;
}

// The completion state of one TAB press: libedit asks for the matches one by one.
struct Pending {
  CommandContext* ctx = nullptr;
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
  g_pending.matches =
      Candidates(*g_pending.ctx, SplitPartial(before), g_pending.in_inspector && g_pending.in_inspector());
  if (g_pending.matches.empty()) return nullptr;
  return rl_completion_matches(text, NextMatch);
}

}  // namespace

std::vector<std::string> Candidates(CommandContext& ctx, const PartialLine& line,
                                    bool in_inspector) {
  std::vector<std::string> out;
  if (line.words.empty()) {
    AddMatching(out, SessionCommands(), line.current);
    if (in_inspector) AddMatching(out, HistoryInspector::CommandNames(), line.current);
  } else if (in_inspector && line.words[0] == "find" && line.words.size() == 1) {
    AddMatching(out, EventTypeLabels(), line.current);
    return out;
  } else if (line.words[0] == "\\output" && line.words.size() == 1) {
    AddMatching(out, {"table", "card", "json", "jsonl"}, line.current);
    return out;
  } else if (line.words[0] == "\\timing" && line.words.size() == 1) {
    AddMatching(out, {"on", "off"}, line.current);
    return out;
  } else if (line.words[0] == "use" && line.words.size() == 1) {
    std::vector<std::string> words = {"namespace", "describe"};
    return CompleteCommandLine(ctx, words, line.current);
  }
  std::vector<std::string> tree = CompleteCommandLine(ctx, line.words, line.current);
  out.insert(out.end(), tree.begin(), tree.end());
  return out;
}

void InstallCompletion(CommandContext& ctx, std::function<bool()> in_inspector) {
  g_pending.ctx = &ctx;
  g_pending.in_inspector = std::move(in_inspector);
  rl_attempted_completion_function = Complete;
  // Words break at spaces only: flags (--x), \output and quotes are part of a word.
  static char breaks[] = " \t";
  rl_completer_word_break_characters = breaks;
}

}  // namespace tock::cli::repl
