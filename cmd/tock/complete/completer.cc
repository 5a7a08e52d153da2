#include "cmd/tock/complete/completer.h"

#include <cctype>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cmd/tock/app.h"
#include "cmd/tock/complete/live_fetch.h"

namespace tock::cli::complete {
namespace {

std::istream& NullInput() {
  static std::istream in(nullptr);
  return in;
}

std::ostream& NullOutput() {
  static std::ostream out(nullptr);
  return out;
}

// Hidden commands (`__complete`) have no group: CLI11 leaves them out of --help, and so do we.
bool Visible(const CLI::App* app) {
  return !app->get_group().empty() && !absl::StartsWith(app->get_name(), "__");
}

std::vector<CLI::App*> Subcommands(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}

CLI::App* FindSubcommand(CLI::App& app, const std::string& word) {
  for (CLI::App* sub : Subcommands(app)) {
    if (sub->check_name(word)) return sub;
  }
  return nullptr;
}

bool TakesValue(const CLI::Option& option) { return option.get_items_expected_max() > 0; }
bool Repeatable(const CLI::Option& option) { return option.get_items_expected_max() > 1; }

struct FoundOption {
  CLI::Option* option = nullptr;
  CLI::App* owner = nullptr;
};

// As CLI11 resolves a flag: the command's own options, then (fallthrough) its parents'.
FoundOption FindOption(CLI::App* app, const std::string& name) {
  for (CLI::App* at = app; at != nullptr; at = at->get_parent()) {
    for (CLI::Option* option : at->get_options()) {
      if (option->nonpositional() && option->check_name(name)) return {option, at};
    }
    if (!at->get_fallthrough()) break;
  }
  return {};
}

// The set of a CLI::IsMember (or CLI::CheckedTransformer) check: its description is
// "{a,b,c}" (maps: "{a->x,b->y}"). Empty when the option has no such check.
std::vector<std::string> EnumValues(CLI::Option& option) {
  for (int i = 0;; ++i) {
    CLI::Validator* validator = nullptr;
    try {
      validator = option.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      return {};
    }
    std::string desc = validator->get_description();
    if (desc.size() < 2 || desc.front() != '{' || desc.back() != '}') continue;
    std::vector<std::string> values;
    for (absl::string_view item : absl::StrSplit(desc.substr(1, desc.size() - 2), ',')) {
      absl::string_view key = item.substr(0, item.find("->"));
      if (!key.empty()) values.emplace_back(key);
    }
    return values;
  }
}

void AddMatching(std::vector<Candidate>& out, std::set<std::string>& seen, const Candidate& c,
                 const std::string& prefix) {
  if (!absl::StartsWith(c.value, prefix)) return;
  if (seen.insert(c.value).second) out.push_back(c);
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

// Where the words typed so far lead in the tree.
struct Completer::Walk {
  CLI::App* app = nullptr;       // the deepest command reached
  FoundOption pending;           // an option still waiting for its value (the current word)
  int positionals = 0;           // positional words given to `app`
  bool positional_only = false;  // after "--"
  std::set<const CLI::Option*> given;
  std::vector<std::pair<CLI::Option*, std::string>> global_values;  // root options, in order

  void Given(const FoundOption& found, const std::string& value) {
    given.insert(found.option);
    if (found.owner->get_parent() == nullptr) global_values.emplace_back(found.option, value);
  }

  void Step(const std::string& word) {
    if (pending.option != nullptr) {
      Given(pending, word);
      pending = {};
      return;
    }
    if (!positional_only && word == "--") {
      positional_only = true;
      return;
    }
    if (!positional_only && absl::StartsWith(word, "--") && word.size() > 2) {
      const size_t eq = word.find('=');
      FoundOption found = FindOption(app, word.substr(0, eq));
      if (found.option == nullptr) return;
      if (!TakesValue(*found.option)) {
        Given(found, "true");
      } else if (eq != std::string::npos) {
        Given(found, word.substr(eq + 1));
      } else {
        pending = found;
      }
      return;
    }
    if (!positional_only && word.size() > 1 && word[0] == '-' &&
        !std::isdigit(static_cast<unsigned char>(word[1]))) {
      // -abc: flags a and b, or -nVALUE: option n with its value attached.
      for (size_t i = 1; i < word.size(); ++i) {
        FoundOption found = FindOption(app, std::string("-") + word[i]);
        if (found.option == nullptr) return;
        if (!TakesValue(*found.option)) {
          Given(found, "true");
          continue;
        }
        if (i + 1 < word.size()) {
          Given(found, word.substr(i + 1));
        } else {
          pending = found;
        }
        return;
      }
      return;
    }
    if (!positional_only) {
      if (CLI::App* sub = FindSubcommand(*app, word); sub != nullptr) {
        app = sub;
        positionals = 0;
        return;
      }
    }
    ++positionals;
  }

  // The positional the next word fills, if any.
  CLI::Option* NextPositional() const {
    int index = 0;
    for (CLI::Option* option : app->get_options()) {
      if (!option->get_positional()) continue;
      if (Repeatable(*option) || positionals <= index) return option;
      ++index;
    }
    return nullptr;
  }
};

Completer::Completer(CommandContext& ctx, CompleterOptions options)
    : ctx_(ctx), options_(options) {}

Completer::~Completer() = default;

CLI::App& Completer::Tree() {
  if (tree_ == nullptr) {
    // The tree binds its global options to this context's options: Complete() lets CLI11
    // convert the global flags found among the words, as a parse would.
    scratch_ =
        std::make_unique<CommandContext>(NullInput(), NullOutput(), NullOutput(), false, false);
    tree_ = std::make_unique<CLI::App>("", "tock");
    BuildApp(*tree_, *scratch_);
  }
  return *tree_;
}

void Completer::ClearCache() { cache_.clear(); }

std::vector<Candidate> Completer::Complete(const std::vector<std::string>& words,
                                           const std::string& current) {
  CLI::App& tree = Tree();
  Walk walk;
  walk.app = &tree;
  for (const std::string& word : words) walk.Step(word);

  // The global options in effect: the context's, then those among the words.
  scratch_->options = ctx_.options;
  for (auto& [option, value] : walk.global_values) {
    try {
      option->clear();
      option->add_result(value);
      option->run_callback();
    } catch (const CLI::Error&) {
      // A value CLI11 refuses (-o yaml) changes nothing.
    }
    option->clear();
  }
  const GlobalOptions effective = scratch_->options;

  if (walk.pending.option != nullptr) {
    return ValuesOf(*walk.pending.option, *walk.pending.owner, effective, current);
  }
  if (!walk.positional_only && absl::StartsWith(current, "--")) {
    if (const size_t eq = current.find('='); eq != std::string::npos) {
      FoundOption found = FindOption(walk.app, current.substr(0, eq));
      if (found.option == nullptr || !TakesValue(*found.option)) return {};
      std::vector<Candidate> values =
          ValuesOf(*found.option, *found.owner, effective, current.substr(eq + 1));
      for (Candidate& c : values) c.value = current.substr(0, eq + 1) + c.value;
      return values;
    }
  }
  std::vector<Candidate> out;
  std::set<std::string> seen;
  if (!walk.positional_only && absl::StartsWith(current, "-")) {
    if (current.size() > 2 && current[1] != '-') {
      // -nVALUE
      FoundOption found = FindOption(walk.app, current.substr(0, 2));
      if (found.option == nullptr || !TakesValue(*found.option)) return {};
      std::vector<Candidate> values =
          ValuesOf(*found.option, *found.owner, effective, current.substr(2));
      for (Candidate& c : values) c.value = current.substr(0, 2) + c.value;
      return values;
    }
    // The command's own flags first, then its parents' (which CLI11 accepts here too);
    // --help and --version last.
    std::vector<Candidate> last;
    std::set<std::string> last_seen;
    for (CLI::App* at = walk.app; at != nullptr; at = at->get_parent()) {
      for (CLI::Option* option : at->get_options()) {
        if (!option->nonpositional()) continue;
        if (walk.given.count(option) > 0 && !Repeatable(*option)) continue;
        const bool meta = option == at->get_help_ptr() || option->check_name("--version");
        std::vector<Candidate>& into = meta ? last : out;
        std::set<std::string>& into_seen = meta ? last_seen : seen;
        const std::string desc = FirstLine(option->get_description());
        for (const std::string& l : option->get_lnames()) {
          AddMatching(into, into_seen, {"--" + l, desc}, current);
        }
        for (const std::string& s : option->get_snames()) {
          AddMatching(into, into_seen, {"-" + s, desc}, current);
        }
      }
      if (!at->get_fallthrough()) break;
    }
    for (const Candidate& c : last) AddMatching(out, seen, c, current);
    return out;
  }
  if (!walk.positional_only && walk.positionals == 0) {
    for (CLI::App* sub : Subcommands(*walk.app)) {
      if (Visible(sub))
        AddMatching(out, seen, {sub->get_name(), FirstLine(sub->get_description())}, current);
    }
  }
  CLI::Option* positional = walk.NextPositional();
  if (positional != nullptr) {
    for (Candidate& c : ValuesOf(*positional, *walk.app, effective, current)) {
      AddMatching(out, seen, c, current);
    }
  }
  if (out.empty() && current.empty() && positional == nullptr && !walk.positional_only) {
    // Nothing to choose from but flags: show the command's own, required ones first. (Not
    // when a positional is due: a lone flag would be inserted where a value belongs.)
    for (bool required : {true, false}) {
      for (CLI::Option* option : walk.app->get_options()) {
        if (!option->nonpositional() || option->get_required() != required) continue;
        if (option == walk.app->get_help_ptr() || option->check_name("--version") ||
            walk.given.count(option) > 0) {
          continue;
        }
        if (!option->get_lnames().empty()) {
          AddMatching(out, seen,
                      {"--" + option->get_lnames().front(), FirstLine(option->get_description())},
                      current);
        }
      }
    }
  }
  return out;
}

std::vector<Candidate> Completer::ValuesOf(CLI::Option& option, const CLI::App& owner,
                                           const GlobalOptions& options,
                                           const std::string& partial) {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  // A list option (--clusters a,b): complete the last item, keep what is before it.
  std::string head;
  std::string last = partial;
  if (option.get_delimiter() != '\0') {
    if (const size_t at = partial.rfind(option.get_delimiter()); at != std::string::npos) {
      head = partial.substr(0, at + 1);
      last = partial.substr(at + 1);
    }
  }
  std::set<std::string> listed;  // items already in the list are not offered again
  for (absl::string_view item :
       absl::StrSplit(head, option.get_delimiter() == '\0' ? ',' : option.get_delimiter(),
                      absl::SkipEmpty())) {
    listed.emplace(item);
  }
  for (const std::string& value : EnumValues(option)) {
    if (listed.count(value) == 0) AddMatching(out, seen, {head + value, ""}, partial);
  }
  const ValueKind kind = KindOf(CommandPath(owner), option);
  if (kind == ValueKind::kFile) {
    for (const Candidate& c : PathCandidates(partial)) AddMatching(out, seen, c, partial);
  } else if (kind != ValueKind::kNone) {
    for (const Candidate& c : LiveValues(kind, options, last)) {
      if (listed.count(c.value) > 0) continue;
      AddMatching(out, seen, {head + c.value, c.description}, partial);
    }
  }
  return out;
}

std::vector<Candidate> Completer::Values(ValueKind kind, const std::string& prefix) {
  if (kind == ValueKind::kFile) return PathCandidates(prefix);
  return LiveValues(kind, ctx_.options, prefix);
}

std::vector<Candidate> Completer::LiveValues(ValueKind kind, const GlobalOptions& options,
                                             const std::string& prefix) {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  const std::vector<Candidate> all =
      kind == ValueKind::kEventType ? EventTypeNames() : Fetch(kind, options);
  for (const Candidate& c : all) AddMatching(out, seen, c, prefix);
  return out;
}

client::Connection* Completer::Connect(const GlobalOptions& options, std::string& key) {
  absl::StatusOr<client::ConnectionOptions> wanted = ToConnectionOptions(options);
  if (!wanted.ok()) return nullptr;
  auto key_of = [](const client::ConnectionOptions& o) {
    return absl::StrCat(o.address, "|", o.tls.enabled, "|", o.tls.ca_cert_path, "|",
                        o.tls.cert_path, "|", o.tls.key_path, "|", o.tls.server_name, "|",
                        o.api_key);
  };
  key = key_of(*wanted);
  // The context's own connection when the words name the same server (the REPL's session
  // connection stays the only one); our own otherwise.
  absl::StatusOr<client::ConnectionOptions> session = ToConnectionOptions(ctx_.options);
  if (session.ok() && key_of(*session) == key) {
    absl::StatusOr<client::Connection*> connection = ctx_.connection();
    return connection.ok() ? *connection : nullptr;
  }
  if (own_connection_ == nullptr || own_connection_key_ != key) {
    absl::StatusOr<std::unique_ptr<client::Connection>> opened = client::Connection::Open(*wanted);
    if (!opened.ok()) return nullptr;
    own_connection_ = std::move(*opened);
    own_connection_key_ = key;
  }
  return own_connection_.get();
}

const std::vector<Candidate>& Completer::Fetch(ValueKind kind, const GlobalOptions& options) {
  static const std::vector<Candidate> kNothing;
  std::string connection_key;
  client::Connection* connection = Connect(options, connection_key);
  if (connection == nullptr) return kNothing;
  const bool per_namespace = kind == ValueKind::kWorkflowId || kind == ValueKind::kTaskQueue ||
                             kind == ValueKind::kSearchAttribute ||
                             kind == ValueKind::kSearchAttributeAssignment ||
                             kind == ValueKind::kBatchJobId || kind == ValueKind::kScheduleId ||
                             kind == ValueKind::kDeployment;
  auto cache_key = [&](ValueKind k) {
    return absl::StrCat(connection_key, "|", std::string(ValueKindName(k)), "|",
                        per_namespace ? options.namespace_name : "");
  };
  const absl::Time now = absl::Now();
  if (auto it = cache_.find(cache_key(kind));
      it != cache_.end() && now - it->second.fetched < options_.cache_ttl) {
    return it->second.values;
  }
  absl::Duration budget = options_.timeout;
  if (absl::StatusOr<client::ConnectionOptions> o = ToConnectionOptions(options); o.ok()) {
    budget = std::min(budget, o->timeout);
  }
  const absl::Time deadline = now + budget;
  switch (kind) {
    case ValueKind::kScheduleId: {
      auto values = FetchSchedules(*connection, options.namespace_name, deadline, options_.limit);
      CacheEntry& entry = cache_[cache_key(kind)];
      entry = {now, values.ok() ? *std::move(values) : kNothing};
      return entry.values;
    }
    case ValueKind::kDeployment: {
      auto values = FetchDeployments(*connection, options.namespace_name, deadline, options_.limit);
      CacheEntry& entry = cache_[cache_key(kind)];
      entry = {now, values.ok() ? *std::move(values) : kNothing};
      return entry.values;
    }
    case ValueKind::kNexusEndpoint: {
      auto values = FetchNexusEndpoints(*connection, deadline, options_.limit);
      CacheEntry& entry = cache_[cache_key(kind)];
      entry = {now, values.ok() ? *std::move(values) : kNothing};
      return entry.values;
    }
    case ValueKind::kBatchJobId: {
      auto values = FetchBatchJobs(*connection, options.namespace_name, deadline, options_.limit);
      CacheEntry& entry = cache_[cache_key(kind)];
      entry = {now, values.ok() ? *std::move(values) : kNothing};
      return entry.values;
    }
    case ValueKind::kNamespace:
    case ValueKind::kClusterName: {
      auto values = kind == ValueKind::kNamespace
                        ? FetchNamespaces(*connection, deadline, options_.limit)
                        : FetchClusters(*connection, deadline, options_.limit);
      CacheEntry& entry = cache_[cache_key(kind)];
      entry = {now, values.ok() ? *std::move(values) : kNothing};
      return entry.values;
    }
    case ValueKind::kWorkflowId:
    case ValueKind::kTaskQueue: {
      // One fetch answers both kinds.
      auto values = FetchWorkflows(*connection, options.namespace_name, deadline, options_.limit);
      cache_[cache_key(ValueKind::kWorkflowId)] = {now,
                                                   values.ok() ? values->workflow_ids : kNothing};
      cache_[cache_key(ValueKind::kTaskQueue)] = {now,
                                                  values.ok() ? values->task_queues : kNothing};
      return cache_[cache_key(kind)].values;
    }
    case ValueKind::kSearchAttribute:
    case ValueKind::kSearchAttributeAssignment: {
      // One fetch answers both: the names, and the names with "=" to type a value after.
      auto names = FetchSearchAttributes(*connection, options.namespace_name, deadline);
      std::vector<Candidate> assignments;
      if (names.ok()) {
        for (const Candidate& c : *names) assignments.push_back({c.value + "=", c.description});
      }
      cache_[cache_key(ValueKind::kSearchAttribute)] = {now, names.ok() ? *names : kNothing};
      cache_[cache_key(ValueKind::kSearchAttributeAssignment)] = {now, std::move(assignments)};
      return cache_[cache_key(kind)].values;
    }
    default:
      return kNothing;
  }
}

}  // namespace tock::cli::complete
