#include "cmd/tock/docs/man.h"

#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tock::cli::docs {
namespace {

// ---- roff -------------------------------------------------------------------------------

// Prose for a text line: backslashes escaped, a leading control character neutralised.
std::string Text(const std::string& s) {
  std::string out = absl::StrReplaceAll(s, {{"\\", "\\e"}});
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

// Something to type (command, flag, example): as Text, with minus signs that stay ASCII
// hyphens when copied from the page.
std::string Code(const std::string& s) {
  std::string out = absl::StrReplaceAll(s, {{"\\", "\\e"}, {"-", "\\-"}});
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string Bold(const std::string& s) { return "\\fB" + Code(s) + "\\fR"; }
std::string Italic(const std::string& s) { return "\\fI" + Code(s) + "\\fR"; }

// Lines typed as they are, indented, not filled.
// `paragraph`: start a new paragraph first (not right after a heading).
void Verbatim(std::ostringstream& out, const std::vector<std::string>& lines,
              bool paragraph = true) {
  if (lines.empty()) return;
  out << (paragraph ? ".PP\n" : "") << ".RS 4\n.nf\n";
  for (const std::string& line : lines) out << Code(line) << "\n";
  out << ".fi\n.RE\n";
}

std::string Upper(std::string s) {
  for (char& c : s) c = c == '-' ? '_' : static_cast<char>(absl::ascii_toupper(c));
  return s;
}

std::string Sentence(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(absl::ascii_toupper(s[0]));
  if (!s.empty() && s.back() != '.') s += ".";
  return s;
}

void Header(std::ostringstream& out, const std::string& title, int section,
            const ManOptions& options) {
  out << ".\\\" Generated from the command tree by tock-docgen; do not edit.\n"
      << ".\\\" Regenerate: cmake --build build --target regen-docs\n"
      << ".TH " << Code(absl::AsciiStrToUpper(title)) << " " << section << " " << options.date
      << " \"Tock " << options.version << "\" \"Tock Manual\"\n"
      << ".nh\n"     // no hyphenation: commands and flags stay whole
      << ".ad l\n";  // ragged right, no stretched spaces
}

// ---- the command tree ----------------------------------------------------------------------

bool Visible(const CLI::App* app) {
  return !app->get_group().empty() && !absl::StartsWith(app->get_name(), "__");
}

std::vector<const CLI::App*> Children(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (Visible(sub)) out.push_back(sub);
  }
  return out;
}

std::string PathOf(const CLI::App& app) {
  std::string path;
  for (const CLI::App* at = &app; at != nullptr; at = at->get_parent()) {
    const std::string name = at->get_parent() == nullptr ? "tock" : at->get_name();
    path = path.empty() ? name : name + " " + path;
  }
  return path;
}

bool TakesValue(const CLI::Option& o) { return o.get_items_expected_max() > 0; }

// The set of a CLI::IsMember check ("{a,b,c}"), as "a|b|c"; empty without one.
std::string EnumAlternatives(const CLI::Option& option) {
  auto& o = const_cast<CLI::Option&>(option);
  for (int i = 0;; ++i) {
    CLI::Validator* v = nullptr;
    try {
      v = o.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      return "";
    }
    const std::string desc = v->get_description();
    if (desc.size() < 2 || desc.front() != '{' || desc.back() != '}') continue;
    std::vector<std::string> values;
    for (absl::string_view item : absl::StrSplit(desc.substr(1, desc.size() - 2), ',')) {
      values.emplace_back(item.substr(0, item.find("->")));
    }
    return absl::StrJoin(values, "|");
  }
}

bool ChecksExistingFile(const CLI::Option& option) {
  try {
    const_cast<CLI::Option&>(option).get_validator("FILE");
    return true;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

// "NAMESPACE", "FILE", "table|card|json|jsonl".
std::string ValueName(const CLI::Option& o) {
  if (std::string alternatives = EnumAlternatives(o); !alternatives.empty()) return alternatives;
  if (ChecksExistingFile(o)) return "FILE";
  if (!o.get_lnames().empty()) return Upper(o.get_lnames().front());
  if (!o.get_snames().empty()) return Upper(o.get_snames().front());
  return Upper(o.get_name());
}

void OptionEntry(std::ostringstream& out, const CLI::Option& o) {
  std::vector<std::string> names;
  for (const std::string& s : o.get_snames()) names.push_back(Bold("-" + s));
  for (const std::string& l : o.get_lnames()) names.push_back(Bold("--" + l));
  out << ".TP\n" << absl::StrJoin(names, ", ");
  if (TakesValue(o)) out << " " << Italic(ValueName(o));
  out << "\n" << Text(Sentence(o.get_description()));
  if (o.get_required()) out << " Required.";
  if (!o.get_default_str().empty()) out << " Default: " << Code(o.get_default_str()) << ".";
  out << "\n";
}

std::vector<const CLI::Option*> Flags(const CLI::App& app) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* o : app.get_options()) {
    if (o->nonpositional()) out.push_back(o);
  }
  return out;
}

std::vector<const CLI::Option*> Positionals(const CLI::App& app) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_positional()) out.push_back(o);
  }
  return out;
}

// "tock namespace register [options] name", bold command, italic arguments.
std::string Synopsis(const CLI::App& app) {
  std::string line = Bold(PathOf(app));
  if (Flags(app).size() > 1 || (Flags(app).size() == 1 && Flags(app)[0] != app.get_help_ptr())) {
    line += " [" + Italic("options") + "]";
  }
  for (const CLI::Option* p : Positionals(app)) {
    const std::string alternatives = EnumAlternatives(*p);
    std::string arg = Italic(alternatives.empty() ? p->get_name() : alternatives);
    if (p->get_items_expected_max() > 1) arg += " ...";
    line += " " + (p->get_required() ? arg : "[" + arg + "]");
  }
  return line;
}

// A footer: prose paragraphs, and the example lines after "Example:" / "Examples:".
struct Footer {
  std::vector<std::string> paragraphs;
  std::vector<std::string> examples;
};

Footer ParseFooter(const std::string& text) {
  Footer footer;
  bool in_examples = false;
  std::string paragraph;
  auto flush = [&] {
    if (!paragraph.empty()) footer.paragraphs.push_back(paragraph);
    paragraph.clear();
  };
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    const std::string line(raw);
    if (absl::StartsWith(line, "Example") && absl::EndsWith(line, ":")) {
      flush();
      in_examples = true;
      continue;
    }
    if (line.empty()) {
      flush();
      in_examples = false;
      continue;
    }
    if (in_examples && absl::StartsWith(line, "  ")) {
      footer.examples.emplace_back(absl::StripLeadingAsciiWhitespace(line));
      continue;
    }
    in_examples = false;
    paragraph += paragraph.empty() ? line : " " + line;
  }
  flush();
  return footer;
}

// Every command under `app` that does something (leaves), depth first.
void Leaves(const CLI::App& app, std::vector<const CLI::App*>& out) {
  std::vector<const CLI::App*> children = Children(app);
  if (children.empty()) {
    out.push_back(&app);
    return;
  }
  for (const CLI::App* child : children) Leaves(*child, out);
}

std::string Lowercase(std::string s) {
  if (s.size() > 1 && absl::ascii_isupper(s[0]) && !absl::ascii_isupper(s[1])) {
    s[0] = static_cast<char>(absl::ascii_tolower(s[0]));
  }
  return s;
}

// Written prose for the groups that have something to say beyond their --help; a group
// added later gets its page without an entry here.
const std::map<std::string, std::string>& GroupProse() {
  static const std::map<std::string, std::string> prose = {
      {"namespace",
       "Every change of a namespace is kept as a version: nothing is overwritten, so "
       "tock namespace history shows who changed what and when, and "
       "tock namespace describe --as-of reads the past. Retention is 1 to 30 days "
       "inclusive (default 2 days); durations are written 3d, 36h, 90m or 1d12h, and a bare "
       "number is days. A failover of a global namespace moves its failover version to the "
       "next version owned by the target cluster."},
      {"workflow",
       "Commands that address one workflow take --workflow-id and, optionally, --run-id "
       "(default: the current run) in the namespace of --namespace. Payloads that hold JSON or "
       "text are shown decoded; with -o json, workflow show prints the History message that "
       "the SDK replayers accept. A --search-attribute value is JSON (\"c-42\", 42, true, "
       "[\"a\",\"b\"]) or, when it does not parse as JSON, plain text; the attribute must "
       "have been created in the namespace (tock operator search-attribute create). workflow "
       "stack asks a worker for the __stack_trace query, so it needs one polling the "
       "workflow's task queue."},
      {"cluster",
       "Works against any Temporal frontend; what only Tock knows (master cluster, members, "
       "database) is shown when the server is tock-server. Remote clusters are added, "
       "changed and removed through Temporal's OperatorService (AddOrUpdateRemoteCluster, "
       "RemoveRemoteCluster): upsert gives the server a frontend address, and the server asks "
       "that frontend for the cluster's name, id and failover version, and refuses a cluster "
       "that does not fit (Temporal's rules: global namespaces enabled, the same failover "
       "version increment, an initial failover version of its own). remove takes the name that "
       "cluster list shows."},
      {"operator",
       "Custom search attributes belong to the namespace of --namespace. Their types are "
       "Temporal's: Keyword, Text, Int, Double, Bool, Datetime and KeywordList, written in any "
       "case. tock-server allows up to 10 Keyword attributes and 3 of each other type per "
       "namespace; creating an attribute again with the same type changes nothing, with another "
       "type it is an error. Workflows set their values at start (tock workflow start "
       "--search-attribute NAME=VALUE), and list queries filter on them. Removing asks for "
       "confirmation on a terminal and needs --yes elsewhere."},
      {"batch",
       "A batch job applies one operation (terminate, cancel, signal or delete) to every "
       "workflow that the visibility query matches, in the namespace of --namespace; the "
       "server runs it in the background at --rps operations per second at most (default: "
       "its own limit). Before starting, the command counts the matching workflows and asks "
       "(\"Start batch against approximately N workflow(s)?\") on a terminal; elsewhere it "
       "needs --yes. It then waits for the job to finish: on a terminal with a progress bar "
       "(completed, failed and total operations, refreshed every 250 ms) and a summary, "
       "elsewhere printing the DescribeBatchOperationResponse at the end; --no-wait returns "
       "at once with the job id. Ctrl-C stops the waiting, not the job. Operations that fail "
       "on single workflows (a signal to a closed one) are counted, not fatal; a job that is "
       "stopped with batch stop ends in state Failed, and a command waiting for it exits 1. "
       "Job ids are unique per namespace (a new UUID unless --job-id is given; one in use is "
       "exit 5)."},
      {"schedule",
       "A schedule starts a workflow at the times of its spec, in the namespace of "
       "--namespace: cron strings (5 to 7 fields: optional seconds first and year last, "
       "names of months and days, @daily and the like, @every 1h/15m, a CRON_TZ= prefix), "
       "intervals with a phase (--interval 1h/15m fires at 00:15, 01:15 ...) and calendars "
       "given as a CalendarSpec in JSON, in the time zone of --time-zone (a day repeated or "
       "skipped by daylight saving time fires as Temporal fires it). The server checks the "
       "spec and answers with Temporal's words (\"Invalid schedule spec: Minute is not in "
       "range [0-59]\", exit 2). Each action starts a workflow whose id is --workflow-id "
       "followed by the action's time in RFC 3339 (report-2026-11-25T02:00:00Z), so an action "
       "is never started twice. The overlap policy says what happens when an action comes "
       "while the last one still runs: Skip it, BufferOne or BufferAll until it closes, "
       "CancelOther or TerminateOther the running one, or AllowAll. Actions missed while the "
       "server was down are taken when it is back, within --catchup-window (default one "
       "year); actions due while paused are skipped. update replaces the whole schedule "
       "(give every flag again) and fails with exit 5 when the schedule changed since it was "
       "read; trigger and backfill take actions now, also when paused."},
      {"timer",
       "A durable timer of tock-server, in the namespace of --namespace: when it is due, the "
       "server that owns its history shard POSTs its callback URL with the JSON body "
       "{namespace, id, payload, executeAt, attempt} (attempt 1 first). The answer 200 "
       "{\"ok\": true} completes it (Succeeded); 200 {\"ok\": false, \"nextExecuteAt\": TIME} "
       "fires it again at that time; a 4xx fails it at once (Failed, its HTTP status in Last "
       "error, never the answer's text); a callback URL whose host is, or resolves to, a "
       "loopback, private or link-local address is refused (at create, or Failed when it "
       "is sent) unless the server's timers.callbacks.allow lets it in; anything else (5xx, "
       "no answer within --callback-timeout, a refused "
       "connection, another body) is retried after initial-interval times "
       "backoff-multiplier to the power of the retry, at most max-interval, with up to 20% "
       "jitter, until max-attempts or max-attempts-duration runs out (then Failed with the "
       "last error). A timer never fires before its time and fires at least once: a callback "
       "in flight when a server dies is sent again. Creating an id that exists replaces the "
       "timer; only Pending timers can be updated or deleted. The same operations are served "
       "over HTTP/JSON on tock-server --http-port."},
      {"activity",
       "Completes or fails an activity by its id, as an asynchronous activity's worker would: "
       "a worker must have taken the activity's task. A failure is an application failure that "
       "is not retried, with --reason as its message and --detail as its details, so the "
       "workflow sees it at once."},
  };
  return prose;
}

const char* kExitStatus =
    ".TP\n.B 0\nSuccess.\n"
    ".TP\n.B 1\nAn error not covered below, among them a call the server refused for "
    "authorization (UNAUTHENTICATED: no or a bad --api-key token; PERMISSION_DENIED: the "
    "token's role falls short); the server's message says which call needs which role.\n"
    ".TP\n.B 2\nUsage error or invalid input (unknown flag, missing argument, bad value).\n"
    ".TP\n.B 3\nNot found (namespace, workflow, activity, search attribute, cluster, batch "
    "job, schedule, timer).\n"
    ".TP\n.B 4\nThe server is unavailable, refused the call over a rate limit, or a call timed out.\n"
    ".TP\n.B 5\nAlready exists, or a conflicting change.\n";

void CommandSection(std::ostringstream& out, const CLI::App& cmd) {
  out << ".SS " << Code(PathOf(cmd)) << "\n" << Text(Sentence(cmd.get_description())) << "\n";
  Footer footer = ParseFooter(cmd.get_footer());
  for (const std::string& p : footer.paragraphs) out << ".PP\n" << Text(p) << "\n";
  if (!cmd.get_aliases().empty()) {
    std::vector<std::string> spelled;
    for (const std::string& a : cmd.get_aliases()) spelled.push_back(Bold(a));
    out << ".PP\nAlso spelled " << absl::StrJoin(spelled, ", ") << ".\n";
  }
  for (const CLI::Option* p : Positionals(cmd)) {
    out << ".TP\n" << Italic(p->get_name()) << "\n" << Text(Sentence(p->get_description()));
    out << (p->get_required() ? " Required." : " Optional.") << "\n";
  }
  for (const CLI::Option* o : Flags(cmd)) {
    if (o != cmd.get_help_ptr()) OptionEntry(out, *o);
  }
  if (!footer.examples.empty()) {
    out << ".PP\nExample" << (footer.examples.size() > 1 ? "s" : "") << ":\n";
    Verbatim(out, footer.examples);
  }
}

std::string GroupPage(const CLI::App& root, const CLI::App& group, const ManOptions& options) {
  std::ostringstream out;
  const std::string page = "tock-" + group.get_name();
  Header(out, page, 1, options);
  out << ".SH NAME\n" << Code(page) << " \\- " << Text(Lowercase(group.get_description())) << "\n";
  out << ".SH SYNOPSIS\n";
  std::vector<const CLI::App*> leaves;
  Leaves(group, leaves);
  bool first = true;
  for (const CLI::App* leaf : leaves) {
    if (!first) out << ".br\n";
    first = false;
    out << Synopsis(*leaf) << "\n";
  }
  out << ".SH DESCRIPTION\n" << Text(Sentence(group.get_description())) << "\n";
  if (leaves.size() > 1 || leaves[0] != &group) {
    Footer footer = ParseFooter(group.get_footer());
    for (const std::string& p : footer.paragraphs) out << ".PP\n" << Text(p) << "\n";
    if (!group.get_aliases().empty()) {
      out << ".PP\n"
          << Bold("tock " + group.get_name()) << " is also spelled "
          << Bold("tock " + group.get_aliases().front()) << ".\n";
    }
  }
  if (auto it = GroupProse().find(group.get_name()); it != GroupProse().end()) {
    out << ".PP\n" << Text(it->second) << "\n";
  }
  out << ".PP\nEvery command also takes the global options of " << Bold("tock") << "(1) ("
      << Bold("--address") << ", " << Bold("--namespace") << ", " << Bold("--output")
      << ", ...), before or after the command, and " << Bold("--help") << ".\n";
  out << ".SH COMMANDS\n";
  for (const CLI::App* leaf : leaves) CommandSection(out, *leaf);
  out << ".SH EXIT STATUS\n" << kExitStatus;
  out << ".SH SEE ALSO\n" << Bold("tock") << "(1)";
  for (const CLI::App* other : Children(root)) {
    if (other != &group) out << ",\n" << Bold("tock-" + other->get_name()) << "(1)";
  }
  out << "\n";
  return out.str();
}

std::string RootPage(const CLI::App& root, const ManOptions& options) {
  std::ostringstream out;
  Header(out, "tock", 1, options);
  out << ".SH NAME\ntock \\- operate Temporal\\-style workflow clusters\n";
  out << ".SH SYNOPSIS\n"
      << Bold("tock") << " [" << Italic("global-options") << "] " << Italic("command") << " ["
      << Italic("subcommand") << "] [" << Italic("options") << "] [" << Italic("arguments")
      << "]\n.br\n"
      << Bold("tock shell") << "\n.br\n"
      << Bold("tock completion") << " " << Italic("bash|zsh|fish") << "\n";
  out << ".SH DESCRIPTION\n"
      << Bold("tock")
      << " operates Temporal\\-style workflow clusters: it registers and changes namespaces "
         "(retention, owner, data, archival), fails global namespaces over between clusters, "
         "reads the full change history of a namespace, starts, inspects, resets and controls "
         "workflows and their activities, terminates, cancels, signals, deletes or resets every "
         "workflow of a query as a batch job, runs workflows on schedules, manages the search "
         "attributes of a namespace, and "
         "describes clusters. It speaks the official Temporal gRPC API, so it "
         "works against "
      << Bold("tock-server") << "(8) and any Temporal frontend.\n"
      << ".PP\nEach command group has its own page, listed under COMMANDS. Global options may "
         "come before or after the command. Data goes to standard output, diagnostics to "
         "standard error. "
      << Bold("tock shell")
      << " opens an interactive session (line editing, history, TAB completion of commands "
         "and of values from the server) in which every command works without the leading "
      << Bold("tock") << ".\n"
      << ".PP\nDurations are written " << Code("3d") << ", " << Code("36h") << ", " << Code("90m")
      << " or " << Code("1d12h") << "; a bare number of retention days is days.\n";
  out << ".SH GLOBAL OPTIONS\n";
  for (const CLI::Option* o : Flags(root)) OptionEntry(out, *o);
  out << ".SH COMMANDS\n";
  for (const CLI::App* group : Children(root)) {
    out << ".TP\n" << Bold(group->get_name());
    for (const std::string& a : group->get_aliases()) out << ", " << Bold(a);
    out << "\n"
        << Text(Sentence(group->get_description())) << " See " << Bold("tock-" + group->get_name())
        << "(1).\n";
  }
  out << ".SH OUTPUT\n"
      << "With " << Bold("-o table")
      << " (the default on a terminal) lists are aligned columns "
         "and one object is shown as Key: value lines; "
      << Bold("-o card") << " always uses Key: value lines; " << Bold("-o json")
      << " (the default when standard output is not a terminal) prints protobuf's canonical "
         "JSON of the API messages, a list as one array; "
      << Bold("-o jsonl")
      << " prints one JSON document per line, streamed with constant memory. The JSON is what "
         "the Temporal CLI prints, so scripts written for it keep working. Colors follow "
      << Bold("--color") << ".\n";
  out << ".SH SHELL COMPLETION\n"
      << Bold("tock completion")
      << " prints a completion script for bash, zsh or fish. It completes commands, flags and "
         "their fixed values, and asks the server (within 300 ms, cached for a few seconds, "
         "silently nothing when the server cannot be reached) for namespace names, workflow "
         "ids, task queues, cluster names, search attributes, batch job ids and schedule ids. See "
      << Bold("tock-completion") << "(1).\n";
  out << ".SH EXIT STATUS\n" << kExitStatus;
  out << ".SH ENVIRONMENT\n"
      << ".TP\n.B TOCK_ADDRESS\nDefault of " << Bold("--address") << ".\n"
      << ".TP\n.B TEMPORAL_ADDRESS\nDefault of " << Bold("--address")
      << " when TOCK_ADDRESS is not set.\n"
      << ".TP\n.B TOCK_NAMESPACE\nDefault of " << Bold("--namespace") << ".\n"
      << ".TP\n.B TEMPORAL_NAMESPACE\nDefault of " << Bold("--namespace")
      << " when TOCK_NAMESPACE is not set.\n"
      << ".TP\n.B TOCK_API_KEY\nDefault of " << Bold("--api-key") << " (then TEMPORAL_API_KEY).\n"
      << ".TP\n.B NO_COLOR\nWhen set and not empty, " << Bold("--color auto")
      << " prints no colors (https://no\\-color.org).\n"
      << ".TP\n.B XDG_STATE_HOME\nWhere " << Bold("tock shell")
      << " keeps its line history (default " << Code("~/.local/state") << ").\n";
  out << ".SH FILES\n.TP\n"
      << Code("$XDG_STATE_HOME/tock/history") << "\n"
      << "The line history of " << Bold("tock shell") << " (" << Code("~/.local/state/tock/history")
      << " when XDG_STATE_HOME is not set).\n";
  out << ".SH EXAMPLES\n";
  Footer footer = ParseFooter(root.get_footer());
  std::vector<std::string> examples = footer.examples;
  examples.push_back("tock namespace list -o jsonl | jq -r .namespaceInfo.name");
  examples.push_back("tock workflow list --query \"ExecutionStatus = 'Running'\" --limit 20");
  examples.push_back("source <(tock completion bash)");
  Verbatim(out, examples, false);
  out << ".SH SEE ALSO\n";
  bool first = true;
  for (const CLI::App* group : Children(root)) {
    out << (first ? "" : ",\n") << Bold("tock-" + group->get_name()) << "(1)";
    first = false;
  }
  out << ",\n" << Bold("tock-server") << "(8)\n";
  return out.str();
}

// ---- tock-server --help -------------------------------------------------------------------

struct HelpOption {
  std::vector<std::string> names;  // "-h", "--help"
  std::string type;                // "TEXT:FILE", "INT", "" for a flag
  bool repeatable = false;
  std::string description;
};

struct Help {
  std::string description;
  std::vector<HelpOption> options;
  std::vector<std::string> examples;
};

// CLI11's help: a description line, "Usage: ...", "Options:" with "  NAMES TYPE  DESC" lines
// (a long spec puts DESC on the next, deeper indented line), then the footer.
Help ParseHelp(const std::string& text) {
  Help help;
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty()) help.description = lines[0];
  size_t i = 0;
  while (i < lines.size() && lines[i] != "Options:") ++i;
  for (++i; i < lines.size() && !lines[i].empty(); ++i) {
    const std::string& line = lines[i];
    if (!absl::StartsWith(line, "  ") || line.size() < 3 || line[2] == ' ') {
      if (!help.options.empty() && help.options.back().description.empty()) {
        help.options.back().description = std::string(absl::StripAsciiWhitespace(line));
      }
      continue;
    }
    HelpOption option;
    std::string spec = line.substr(2);
    if (size_t gap = spec.find("  "); gap != std::string::npos) {
      option.description = std::string(absl::StripAsciiWhitespace(spec.substr(gap)));
      spec = spec.substr(0, gap);
    }
    std::vector<std::string> words = absl::StrSplit(spec, ' ', absl::SkipEmpty());
    if (words.empty()) continue;
    option.names = absl::StrSplit(words[0], ',');
    for (size_t w = 1; w < words.size(); ++w) {
      if (words[w] == "...") {
        option.repeatable = true;
      } else {
        option.type = words[w].substr(0, words[w].find('='));
      }
    }
    help.options.push_back(option);
  }
  help.examples =
      ParseFooter(absl::StrJoin(lines.begin() + std::min(i, lines.size()), lines.end(), "\n"))
          .examples;
  return help;
}

std::string HelpValueName(const HelpOption& o) {
  if (absl::EndsWith(o.type, ":FILE")) return "FILE";
  for (const std::string& n : o.names) {
    if (absl::StartsWith(n, "--")) return Upper(n.substr(2));
  }
  return "VALUE";
}

}  // namespace

std::map<std::string, std::string> TockManPages(const CLI::App& root, const ManOptions& options) {
  std::map<std::string, std::string> pages;
  pages["tock.1"] = RootPage(root, options);
  for (const CLI::App* group : Children(root)) {
    pages["tock-" + group->get_name() + ".1"] = GroupPage(root, *group, options);
  }
  return pages;
}

std::string ServerManPage(const std::string& server_help, const ManOptions& options) {
  Help help = ParseHelp(server_help);
  std::ostringstream out;
  Header(out, "tock-server", 8, options);
  out << ".SH NAME\ntock\\-server \\- the Tock server core: Temporal gRPC API, embedded SQLite "
         "or PostgreSQL\n";
  out << ".SH SYNOPSIS\n" << Bold("tock-server");
  for (const HelpOption& o : help.options) {
    if (o.names.front() == "-h") continue;
    out << " [" << Bold(o.names.back());
    if (!o.type.empty()) out << " " << Italic(HelpValueName(o));
    out << "]";
  }
  out << "\n";
  out << ".SH DESCRIPTION\n"
      << Bold("tock-server")
      << " serves the official Temporal gRPC API (WorkflowService, OperatorService) and Tock's "
         "own AdminService on one port, so the official SDKs run their workers against it and "
      << Bold("tock")
      << "(1) operates it. Everything is stored in an embedded SQLite database "
         "(in memory unless a file is given), or in a PostgreSQL database that several "
         "tock\\-server hosts may share. On a database file an acknowledged change survives "
         "power loss (persistence.sqlite.synchronous: full, the default; normal: a crash of "
         "the process only); the banner's durability line says which is in force. It "
         "loads its configuration file, applies the options over it, registers the configured "
         "namespaces that are missing (and "
      << Code("default")
      << "), prints a banner naming "
         "the address it listens on, and serves until SIGINT or SIGTERM.\n";
  out << ".SH OPTIONS\n";
  for (const HelpOption& o : help.options) {
    std::vector<std::string> names;
    for (const std::string& n : o.names) names.push_back(Bold(n));
    out << ".TP\n" << absl::StrJoin(names, ", ");
    if (!o.type.empty()) out << " " << Italic(HelpValueName(o));
    out << "\n" << Text(Sentence(o.description)) << "\n";
  }
  out << ".SH CONFIGURATION FILE\n"
         "YAML; every key is optional, and an unknown key is refused (a typo is an error, not "
         "a silent default). Options given on the command line override the file.\n";
  Verbatim(
      out,
      {
          "listen: {ip: 127.0.0.1, port: 7233}   # port 0: any free port",
          "persistence:",
          "  engine: sqlite",
          "  sqlite: {path: tock.db}              # empty: in memory (at most 2 GiB)",
          "  # sqlite: {path: tock.db, synchronous: normal}   # full (default): power-safe",
          "# or: engine: postgres",
          "#     postgres: {url: \"postgresql://tock@db.example.com:5432/tock\", max_connections: 20}",
          "history: {shards: 4}                   # fixed when the database is created",
          "cluster_metadata:                      # omit for one cluster named \"active\"",
          "  enable_global_namespace: true",
          "  failover_version_increment: 10",
          "  master_cluster_name: a",
          "  current_cluster_name: a",
          "  clusters:",
          "    a: {enabled: true, initial_failover_version: 1, rpc_address: \"127.0.0.1:7233\"}",
          "    b: {enabled: true, initial_failover_version: 2, rpc_address: \"127.0.0.1:7234\"}",
          "namespaces: [orders]                   # registered at start when missing",
          "metrics: {ip: 127.0.0.1, port: 9090}   # GET /metrics; omit: off; port 0: any free",
          "log: {level: info, format: text}       # debug|info|warn|error|off, text|json; file:",
          "tls:                                   # off unless set; frontend and internode together",
          "  frontend: {cert_file: server.pem, key_file: server.key, client_ca_file: ca.pem}",
          "  internode: {cert_file: node.pem, key_file: node.key, ca_file: ca.pem}",
          "  reload_interval: 1m                  # changed files are used within this",
          "authorization:                         # off unless set: JWT roles per namespace",
          "  jwks: /etc/tock/jwks.json            # or an https:// URL; RS256 and ES256 keys",
          "  audience: tock                       # optional, as issuer:",
          "  subjects: {\"CN=worker-1\": [\"orders:worker\"]}   # mTLS subject -> roles",
          "  plaintext_host_calls: false         # postgres needs tls.internode unless true",
          "limits:                                # rate limits: off unless one is set",
          "  namespace_rps: 1200                  # also frontend_rps, *_poll_rps; 0: none",
          "  namespace_rps_overrides: {orders: 100}   # refused: RESOURCE_EXHAUSTED",
          "# testing only: that share of store calls fail (UNAVAILABLE, or a timeout after",
          "# the call completed); under persistence:  fault_injection: {rate: 0.01, seed: 7}",
      });
  out << ".SH SIGNALS\n.TP\n.BR SIGINT \", \" SIGTERM\nShut down and exit 0.\n";
  out << ".SH EXIT STATUS\n"
         ".TP\n.B 0\nStopped by SIGINT or SIGTERM.\n"
         ".TP\n.B 1\nAn error not covered below.\n"
         ".TP\n.B 2\nInvalid configuration or options; the message names the key.\n"
         ".TP\n.B 3\nThe configuration file cannot be read.\n"
         ".TP\n.B 4\nThe server cannot start: the address cannot be listened on (port in "
         "use), the database is held by another server, or the PostgreSQL database cannot be "
         "reached.\n";
  out << ".SH FILES\n.TP\n"
      << Italic("the database file") << "\nThe SQLite database given by " << Bold("--db-file")
      << " or " << Code("persistence.sqlite.path")
      << ", with its write\\-ahead log beside it; one server per file. With PostgreSQL "
         "(" << Bold("--postgres-url") << " or " << Code("persistence.postgres.url")
      << ") nothing is stored locally.\n";
  out << ".SH EXAMPLES\n";
  Verbatim(out, help.examples, false);
  out << ".SH SEE ALSO\n" << Bold("tock") << "(1), " << Bold("tock-server") << "(1)\n";
  return out.str();
}

}  // namespace tock::cli::docs
