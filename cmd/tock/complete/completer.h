// Completion of `tock` command lines, for the shells (`tock __complete`) and the REPL's TAB.
//
// Walks the real command tree built by BuildApp: subcommands, long and short flags, enum
// values (the sets of CLI::IsMember checks), and live values fetched from the server for the
// options and positionals value_kinds.cc marks (namespaces, workflow ids, task queues,
// cluster names), plus event type names and local paths. Live values are cached for a few
// seconds per server, namespace and kind, and fetched with a short deadline; any error
// (server down, bad flags, TLS files missing) means no live candidates, never a message.
//
// Thread safety: one Completer is used by one thread at a time. It keeps a reference to the
// CommandContext, which must outlive it.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cmd/tock/complete/value_kinds.h"
#include "cmd/tock/context.h"

namespace tock::cli::complete {

struct Candidate {
  std::string value;        // the whole word that replaces the partial one
  std::string description;  // one line for shells that show it (zsh, fish); may be empty
  bool operator==(const Candidate&) const = default;
};

struct CompleterOptions {
  // Deadline of one live fetch (all its calls together), capped by the --timeout in effect.
  absl::Duration timeout = absl::Milliseconds(300);
  // How long fetched values are reused. Failures are remembered as long, so a TAB against a
  // server that is down does not wait again on every key press.
  absl::Duration cache_ttl = absl::Seconds(5);
  // At most this many values of one kind are fetched (per list call).
  int limit = 200;
};

class Completer {
 public:
  explicit Completer(CommandContext& ctx, CompleterOptions options = {});
  ~Completer();
  Completer(const Completer&) = delete;
  Completer& operator=(const Completer&) = delete;

  // The candidates for `current`, the partial word under the cursor, after `words`, the
  // words already typed (without the program name; as the shell split them, unquoted).
  // Global flags among the words (--address, -n, --timeout, --tls-*, --api-key) apply to
  // the live fetch, over the context's options. Candidates start with `current` (flags
  // written --name=VALUE keep their --name= part), without duplicates, in tree order for
  // commands and flags and in the server's order for live values.
  std::vector<Candidate> Complete(const std::vector<std::string>& words,
                                  const std::string& current);

  // The values of one kind starting with `prefix`, with the context's options (its address,
  // namespace, timeout): for REPL words outside the command tree (`use NS`, `open WF_ID`,
  // `find TYPE`).
  std::vector<Candidate> Values(ValueKind kind, const std::string& prefix);

  // Forgets every cached value (e.g. after a command that registered a namespace).
  void ClearCache();

 private:
  struct Walk;
  struct CacheEntry {
    absl::Time fetched;
    std::vector<Candidate> values;
  };

  CLI::App& Tree();
  std::vector<Candidate> ValuesOf(CLI::Option& option, const CLI::App& owner,
                                  const GlobalOptions& options, const std::string& partial);
  std::vector<Candidate> LiveValues(ValueKind kind, const GlobalOptions& options,
                                    const std::string& prefix);
  // The values of `kind` (unfiltered) from the cache or the server.
  const std::vector<Candidate>& Fetch(ValueKind kind, const GlobalOptions& options);
  client::Connection* Connect(const GlobalOptions& options, std::string& key);

  CommandContext& ctx_;
  CompleterOptions options_;
  std::unique_ptr<CommandContext> scratch_;  // what the tree's global options bind to
  std::unique_ptr<CLI::App> tree_;           // built on first use, against scratch_
  std::map<std::string, CacheEntry> cache_;
  // A connection of our own when the words name another server than the context's.
  std::unique_ptr<client::Connection> own_connection_;
  std::string own_connection_key_;
};

}  // namespace tock::cli::complete
