#include "cmd/tock/app.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include "cmd/tock/commands/activity.h"
#include "cmd/tock/commands/archival.h"
#include "cmd/tock/commands/batch.h"
#include "cmd/tock/commands/schedule.h"
#include "cmd/tock/commands/cluster.h"
#include "cmd/tock/commands/completion.h"
#include "cmd/tock/commands/namespace.h"
#include "cmd/tock/commands/operator.h"
#include "cmd/tock/commands/server.h"
#include "cmd/tock/commands/shell.h"
#include "cmd/tock/commands/timer.h"
#include "cmd/tock/commands/web.h"
#include "cmd/tock/commands/worker.h"
#include "cmd/tock/commands/workflow.h"

namespace tock::cli {
namespace {

// Rules for the whole tree, so every group behaves alike:
// - a repeatable option (--data K=V, --clusters A,B) takes one value per occurrence, never
//   the words after it: `register --data a=1 orders` leaves `orders` to the NAME positional;
// - a group needs no subcommand (bare `tock namespace` prints its help) so that an unknown
//   word is reported by name ("frobnicate") rather than as "A subcommand is required".
void ApplyTreeRules(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) option->allow_extra_args(false);
  std::vector<CLI::App*> subs = app.get_subcommands([](CLI::App*) { return true; });
  if (!subs.empty() && app.get_parent() != nullptr) app.require_subcommand(0, 1);
  for (CLI::App* sub : subs) ApplyTreeRules(*sub);
}

// The deepest command the parse reached.
const CLI::App& ChosenCommand(const CLI::App& app) {
  const CLI::App* at = &app;
  for (std::vector<CLI::App*> chosen = at->get_subcommands(); !chosen.empty();
       chosen = at->get_subcommands()) {
    at = chosen.front();
  }
  return *at;
}

// "tock namespace register": the path of the deepest command the parse reached, for usage
// hints.
std::string CommandPath(const CLI::App& app) {
  std::string path;
  for (const CLI::App* at = &ChosenCommand(app); at != &app; at = at->get_parent()) {
    path = " " + at->get_name() + path;
  }
  return (app.get_name().empty() ? "tock" : app.get_name()) + path;
}

// Optimal string alignment distance: Levenshtein's, with a swap of two neighbours as one
// edit ("lsit" is one from "list").
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The candidate closest to `word`: within two edits, or else sharing its first four letters
// ("worker" -> "workflow"); "" when none is that close. Ties go to the first listed.
std::string ClosestName(const std::string& word, const std::vector<std::string>& candidates) {
  constexpr size_t kMaxEdits = 2;
  constexpr size_t kSharedPrefix = 4;
  std::string best;
  size_t best_score = kMaxEdits + 2;
  for (const std::string& candidate : candidates) {
    size_t score = EditDistance(absl::AsciiStrToLower(word), absl::AsciiStrToLower(candidate));
    if (score > kMaxEdits) {
      const bool shares_prefix = word.size() >= kSharedPrefix && candidate.size() >= kSharedPrefix &&
                                 absl::EqualsIgnoreCase(word.substr(0, kSharedPrefix),
                                                        candidate.substr(0, kSharedPrefix));
      score = shares_prefix ? kMaxEdits + 1 : kMaxEdits + 2;
    }
    if (score < best_score) {
      best_score = score;
      best = candidate;
    }
  }
  return best;
}

// The commands a word could have meant at `at`: its visible subcommands.
std::vector<std::string> Subcommands(const CLI::App& at) {
  std::vector<std::string> names;
  for (const CLI::App* sub : at.get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->get_name().empty() && !sub->get_group().empty()) names.push_back(sub->get_name());
  }
  return names;
}

// The flags a word could have meant at `at`: its visible flags and those of the commands
// above it (global flags are taken anywhere).
std::vector<std::string> Flags(const CLI::App& at) {
  std::vector<std::string> names;
  for (const CLI::App* app = &at; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* option : app->get_options()) {
      if (option->get_group().empty()) continue;  // hidden
      for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
      for (const std::string& name : option->get_snames()) names.push_back("-" + name);
    }
  }
  return names;
}

// A word from the command line, quoted and bounded for a message.
std::string Quoted(const std::string& word) {
  constexpr size_t kShown = 40;
  return absl::StrCat("\"", word.size() > kShown ? word.substr(0, kShown) + "..." : word, "\"");
}

// What the parse did not understand, said as such: the first word left over, named as an
// unknown command (with the closest one when there is one: `tock wrkflow` -> "workflow"),
// an unknown flag or an unexpected argument of the command reached. Exit 2; kExitOk when
// nothing was left over.
int ReportUnknownWords(const CLI::App& app, CommandContext& ctx) {
  const CLI::App& at = ChosenCommand(app);
  // `tock __complete WORDS...` takes every word as data.
  if (at.get_allow_extras()) return kExitOk;
  const std::vector<std::string> left = app.remaining(/*recurse=*/true);
  if (left.empty()) return kExitOk;
  const std::string word = left.front();
  const std::string path = CommandPath(app);
  std::string message;
  std::string closest;
  if (absl::StartsWith(word, "-") && word.size() > 1) {
    const std::string flag = word.substr(0, word.find('='));
    message = absl::StrCat("unknown flag ", Quoted(flag), " for \"", path, "\"");
    closest = ClosestName(flag, Flags(at));
  } else if (std::vector<std::string> commands = Subcommands(at); !commands.empty()) {
    message = absl::StrCat("unknown command ", Quoted(word), " for \"", path, "\"");
    closest = ClosestName(word, commands);
  } else {
    message = absl::StrCat("unexpected argument ", Quoted(word), " for \"", path, "\"");
  }
  if (!closest.empty()) absl::StrAppend(&message, "; did you mean \"", closest, "\"?");
  ctx.err << "error: " << message << "\n"
          << "Run '" << path << " --help' for usage.\n";
  return kExitUsage;
}

int RunParsed(CLI::App& app, CommandContext& ctx,
              const std::function<void()>& parse) {
  ctx.action = nullptr;
  try {
    parse();
  } catch (const CLI::CallForHelp&) {
    // `tock workr --help` is no request for tock's help: "workr" is not understood.
    if (int code = ReportUnknownWords(app, ctx); code != kExitOk) return code;
    // help() delegates to the chosen subcommand: `tock namespace register --help`.
    ctx.out << app.help();
    return kExitOk;
  } catch (const CLI::ExtrasError&) {
    if (int code = ReportUnknownWords(app, ctx); code != kExitOk) return code;
    ctx.err << "error: unexpected arguments\n"
            << "Run '" << CommandPath(app) << " --help' for usage.\n";
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, ctx.out, ctx.err);  // --version, --help-all
    ctx.err << "error: " << e.what() << "\n"
            << "Run '" << CommandPath(app) << " --help' for usage.\n";
    return kExitUsage;
  }
  if (!ctx.action) {
    // A bare group (`tock`, `tock namespace`) is a request for its help.
    ctx.out << app.help();
    return kExitOk;
  }
  std::function<absl::Status()> action = std::move(ctx.action);
  ctx.action = nullptr;
  absl::Status status = action();
  if (!status.ok()) {
    ctx.err << "error: " << status.message() << "\n";
    return ExitCodeFor(status);
  }
  return kExitOk;
}

}  // namespace

void BuildApp(CLI::App& app, CommandContext& ctx) {
  app.description(
      "tock: operate Temporal-style workflow clusters (namespaces, retention, failover, "
      "clusters) and run the Tock server");
  app.footer(
      "Examples:\n"
      "  tock server start-dev                           # a local server on 127.0.0.1:7233\n"
      "  tock namespace register orders --retention 3d\n"
      "  tock namespace describe orders -o json\n"
      "  tock operator search-attribute create --name CustomerId --type Keyword\n"
      "  tock batch terminate --query \"WorkflowType = 'order'\" --reason \"bad deploy\"\n"
      "  tock --address prod:7233 namespace list\n"
      "\n"
      "Output: -o table (aligned columns; one object as Key: value lines), card (Key: value\n"
      "lines), json (protobuf's canonical JSON; a list is one array) or jsonl (one JSON\n"
      "document per line, streamed). Default: table when stdout is a terminal, json otherwise.\n"
      "Environment: TOCK_ADDRESS (then TEMPORAL_ADDRESS), TOCK_NAMESPACE (then\n"
      "TEMPORAL_NAMESPACE), TOCK_API_KEY (then TEMPORAL_API_KEY), NO_COLOR.\n"
      "Exit status: 0 ok, 1 error, 2 usage or invalid input, 3 not found,\n"
      "4 unavailable or timeout, 5 already exists or conflict.\n");
  app.set_version_flag("--version", "tock " TOCK_VERSION);
  app.require_subcommand(0, 1);
  // Global flags may come before or after the command.
  app.fallthrough();
  GlobalOptions& o = ctx.options;
  app.add_option("--address", o.address,
                 "Frontend address HOST:PORT (env TOCK_ADDRESS, then TEMPORAL_ADDRESS)")
      ->default_str(o.address);
  app.add_option("-n,--namespace", o.namespace_name,
                 "Namespace (env TOCK_NAMESPACE, then TEMPORAL_NAMESPACE)")
      ->default_str(o.namespace_name);
  app.add_option("-o,--output", o.output,
                 "Output: table, card, json or jsonl (default: table on a terminal, else json)")
      ->check(CLI::IsMember({"table", "card", "json", "jsonl"}));
  app.add_option("--timeout", o.timeout, "Deadline of each call, e.g. 10s, 1m")
      ->default_str(o.timeout);
  app.add_flag("--tls", o.tls, "Connect with TLS (implied by any --tls-* option)");
  app.add_option("--tls-ca-cert", o.tls_ca_cert, "CA certificate (PEM) to trust");
  app.add_option("--tls-cert", o.tls_cert, "Client certificate (PEM) for mutual TLS");
  app.add_option("--tls-key", o.tls_key, "Client key (PEM) for mutual TLS");
  app.add_option("--tls-server-name", o.tls_server_name, "Server name to verify");
  app.add_option("--api-key", o.api_key, "API key, sent as a bearer token (env TOCK_API_KEY): a JWT for a server with authorization");
  app.add_option("--identity", o.identity,
                 "The caller's identity in requests (history events, a Worker Deployment's "
                 "manager identity); default tock");
  app.add_option("--color", o.color, "Color: auto, always or never (auto honours NO_COLOR)")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->default_str(o.color);

  AddNamespaceCommands(app, ctx);
  AddClusterCommands(app, ctx);
  AddWorkflowCommands(app, ctx);
  AddTaskQueueCommands(app, ctx);
  AddActivityCommands(app, ctx);
  AddOperatorCommands(app, ctx);
  AddBatchCommands(app, ctx);
  AddWorkerCommands(app, ctx);
  AddScheduleCommands(app, ctx);
  AddTimerCommands(app, ctx);
  AddArchivalCommands(app, ctx);
  AddServerCommands(app, ctx);
  AddWebCommand(app, ctx);
  AddCompletionCommands(app, ctx);
  AddShellCommand(app, ctx);
  ApplyTreeRules(app);
}

int Run(CLI::App& app, CommandContext& ctx, int argc, const char* const* argv) {
  return RunParsed(app, ctx, [&] { app.parse(argc, argv); });
}

int RunArgs(CommandContext& ctx, const std::vector<std::string>& args) {
  const GlobalOptions saved = ctx.options;
  CLI::App app{"", "tock"};
  BuildApp(app, ctx);
  // CLI11 consumes the words from the back.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  int code = RunParsed(app, ctx, [&] { app.parse(reversed); });
  ctx.options = saved;
  return code;
}

}  // namespace tock::cli
