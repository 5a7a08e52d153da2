// `tock namespace ...` as an operator runs it: real processes, a real server, exact messages
// (SPEC §1) and exit codes (DESIGN.md "CLI contract"), JSON read by a JSON parser.
#include <regex>
#include <thread>

#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

TEST_F(CliTest, RegisterDescribeWithEveryField) {
  StartServer();
  json ns = TockJson({"namespace", "register", "orders", "--retention", "3d", "--description",
                      "Order processing", "--owner-email", "ops@example.com", "--data",
                      "team=payments", "--data", "tier=gold"});
  EXPECT_EQ(At(ns, "/namespaceInfo/name"), "orders");
  EXPECT_EQ(At(ns, "/namespaceInfo/state"), "NAMESPACE_STATE_REGISTERED");
  EXPECT_EQ(At(ns, "/namespaceInfo/description"), "Order processing");
  EXPECT_EQ(At(ns, "/namespaceInfo/ownerEmail"), "ops@example.com");
  EXPECT_EQ(At(ns, "/namespaceInfo/data/team"), "payments");
  EXPECT_EQ(At(ns, "/namespaceInfo/data/tier"), "gold");
  EXPECT_EQ(At(ns, "/config/workflowExecutionRetentionTtl"), "259200s");
  EXPECT_EQ(At(ns, "/isGlobalNamespace"), false);
  EXPECT_EQ(At(ns, "/failoverVersion"), "0") << "int64 is a string in canonical JSON";
  const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  std::string id = At(ns, "/namespaceInfo/id").is_string() ? At(ns, "/namespaceInfo/id") : "";
  EXPECT_TRUE(std::regex_match(id, uuid)) << id;

  // A local namespace lives on exactly one cluster, the current one.
  json cluster = TockJson({"cluster", "describe"});
  ASSERT_TRUE(At(cluster, "/clusterName").is_string()) << cluster.dump();
  EXPECT_EQ(At(ns, "/replicationConfig/activeClusterName"), At(cluster, "/clusterName"));
  ASSERT_EQ(At(ns, "/replicationConfig/clusters").size(), 1u) << ns.dump();
  EXPECT_EQ(At(ns, "/replicationConfig/clusters/0/clusterName"), At(cluster, "/clusterName"));

  json described = TockJson({"namespace", "describe", "orders"});
  EXPECT_EQ(described, ns) << "register prints the namespace as describe does";

  std::vector<json> one = TockJsonLines({"namespace", "describe", "orders"});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0], described);

  ProcessResult card = Tock({"namespace", "describe", "orders", "-o", "card"});
  EXPECT_EQ(card.exit_code, kExitOk) << card.err;
  EXPECT_NE(card.out.find("Retention:"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("3d"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("team=payments"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("ops@example.com"), std::string::npos) << card.out;
}

TEST_F(CliTest, ValuesAreStoredVerbatim) {
  StartServer();
  const std::string description = "Zahlungsverkehr \u2013 \u00fc \u65e5\u672c \"quoted\" \\ back";
  json ns = TockJson({"namespace", "register", "verbatim", "--description", description,
                      "--owner-email", "Ops Team <ops+tock@example.com>", "--data", "url=a=b",
                      "--data", "empty=", "--data", "spaced key=two words"});
  json described = TockJson({"namespace", "describe", "verbatim"});
  for (const json& doc : {ns, described}) {
    EXPECT_EQ(At(doc, "/namespaceInfo/description"), description);
    EXPECT_EQ(At(doc, "/namespaceInfo/ownerEmail"), "Ops Team <ops+tock@example.com>");
    EXPECT_EQ(At(doc, "/namespaceInfo/data"),
              (json{{"url", "a=b"}, {"empty", ""}, {"spaced key", "two words"}}));
  }
}

TEST_F(CliTest, RetentionAcceptedForms) {
  StartServer();
  // Absent: 2 days. Then the bounds (1 day and 30 days, inclusive) in every duration form.
  EXPECT_EQ(At(TockJson({"namespace", "register", "ret-absent"}),
               "/config/workflowExecutionRetentionTtl"),
            "172800s");
  const std::vector<std::pair<std::string, std::string>> accepted = {
      {"1d", "86400s"},       {"24h", "86400s"},     {"1440m", "86400s"},
      {"36h", "129600s"},     {"1d12h", "129600s"},  {"3", "259200s"},
      {"30", "2592000s"},     {"30d", "2592000s"},   {"720h", "2592000s"},
  };
  int n = 0;
  for (const auto& [flag, ttl] : accepted) {
    std::string name = "ret-ok-" + std::to_string(n++);
    json ns = TockJson({"namespace", "register", name, "--retention", flag});
    EXPECT_EQ(At(ns, "/config/workflowExecutionRetentionTtl"), ttl) << "--retention " << flag;
    EXPECT_EQ(At(TockJson({"namespace", "describe", name}), "/config/workflowExecutionRetentionTtl"),
              ttl)
        << "--retention " << flag;
  }
}

TEST_F(CliTest, RetentionRejectedWithTheExactMessage) {
  StartServer();
  for (const char* bad : {"0", "0d", "23h", "23h59m", "1439m", "31d", "721h", "30d1h", "-1d",
                          "abc"}) {
    ExpectErrorStartingWith({"namespace", "register", "ret-bad", "--retention", bad}, kExitUsage,
                            kRetentionPrefix);
  }
  ExpectError({"namespace", "describe", "ret-bad"}, kExitNotFound,
              "Namespace ret-bad is not found.");

  // Update re-validates, and a rejected update changes nothing.
  Register({"ret-upd", "--retention", "2d"});
  for (const char* bad : {"0", "23h", "31d"}) {
    ExpectErrorStartingWith({"namespace", "update", "ret-upd", "--retention", bad}, kExitUsage,
                            kRetentionPrefix);
  }
  EXPECT_EQ(At(TockJson({"namespace", "describe", "ret-upd"}),
               "/config/workflowExecutionRetentionTtl"),
            "172800s");
  EXPECT_EQ(TockJson({"namespace", "history", "ret-upd"}).size(), 1u)
      << "a rejected update writes no version";
}

TEST_F(CliTest, RetentionIsCheckedBeforeAnythingIsSent) {
  // No server at all: the rule is applied by the CLI, so the answer is the retention error
  // (exit 2), not "unavailable" (exit 4).
  std::string nowhere = "127.0.0.1:" + std::to_string(ClosedLocalPort());
  for (const char* bad : {"0", "31d", "23h"}) {
    std::vector<std::string> args = {TOCK_CLI_BIN, "--address", nowhere, "--timeout", "2s",
                                     "namespace", "register", "offline", "--retention", bad};
    ProcessResult r = RunProcess(args);
    EXPECT_EQ(r.exit_code, kExitUsage) << bad << ": " << r.err;
    EXPECT_EQ(r.err.rfind(kRetentionPrefix, 0), 0u) << bad << ": " << r.err;
  }
}

TEST_F(CliTest, ErrorsCarryExactMessagesAndExitCodes) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"dup"}));
  ExpectError({"namespace", "register", "dup"}, kExitConflict, "Namespace already exists.");
  ExpectError({"namespace", "register", "dup", "--retention", "5d"}, kExitConflict,
              "Namespace already exists.");

  // Every command that names a namespace: exit 3 and the exact NOT_FOUND message.
  const std::string missing = "Namespace nope is not found.";
  ExpectError({"namespace", "describe", "nope"}, kExitNotFound, missing);
  ExpectError({"namespace", "update", "nope", "--description", "x"}, kExitNotFound, missing);
  ExpectError({"namespace", "deprecate", "nope"}, kExitNotFound, missing);
  ExpectError({"namespace", "delete", "nope", "--yes"}, kExitNotFound, missing);
  ExpectError({"namespace", "history", "nope"}, kExitNotFound, missing);
  // With -o json the error is still the plain line on stderr, stdout stays empty.
  ExpectError({"-o", "json", "namespace", "describe", "nope"}, kExitNotFound, missing);
  ExpectError({"namespace", "register", "dup", "-o", "jsonl"}, kExitConflict,
              "Namespace already exists.");

  // A single-cluster server: no global namespaces, no other cluster.
  ExpectError({"namespace", "register", "g", "--global"}, kExitUsage,
              "Cannot register global namespace when not enabled");
  ExpectError({"namespace", "register", "u", "--active-cluster", "zz"}, kExitUsage,
              "Invalid cluster name: zz");
  ExpectError({"namespace", "register", "u", "--clusters", "zz"}, kExitUsage,
              "Invalid cluster name: zz");
  ExpectError({"namespace", "describe", "u"}, kExitNotFound, "Namespace u is not found.");
}

TEST_F(CliTest, AsOfOfANamespaceThatNeverExistedIsNotFound) {
  StartServer();
  // The name is unknown at any time: SPEC §1.2's NOT_FOUND message, as without --as-of.
  ExpectError({"namespace", "describe", "nope", "--as-of", "2030-01-01T00:00:00Z"}, kExitNotFound,
              "Namespace nope is not found.");
}

TEST_F(CliTest, NamespaceNameRules) {
  StartServer();
  ExpectError({"namespace", "register", ""}, kExitUsage, "Namespace not set on request.");
  ExpectError({"namespace", "register", std::string(1001, 'n')}, kExitUsage,
              "Namespace length exceeds limit.");
  json longest = TockJson({"namespace", "register", std::string(1000, 'n')});
  EXPECT_EQ(At(longest, "/namespaceInfo/name"), std::string(1000, 'n'));
  for (const std::string bad : {"has space", "tab\there", "new\nline"}) {
    ProcessResult r = Tock({"namespace", "register", bad});
    EXPECT_EQ(r.exit_code, kExitUsage) << Describe({"namespace", "register", bad}, r);
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(r.out, "");
  }
  // Reading a name that cannot exist is an ordinary error too (not found or invalid), never
  // a crash of the CLI.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"namespace", "describe", "tab\there"},
        std::vector<std::string>{"-n", "new\nline", "namespace", "describe"},
        std::vector<std::string>{"namespace", "history", "tab\there"}}) {
    ProcessResult r = Tock(args);
    EXPECT_TRUE(r.exit_code == kExitUsage || r.exit_code == kExitNotFound) << Describe(args, r);
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << Describe(args, r);
  }
}

TEST_F(CliTest, ConcurrentRegistersOfOneNameOnlyOneWins) {
  StartServer();
  constexpr int kCallers = 8;
  std::vector<ProcessResult> results(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      results[i] = Tock({"namespace", "register", "race", "--description", std::to_string(i)});
    });
  }
  for (auto& t : callers) t.join();
  int won = 0;
  std::string winner;
  for (int i = 0; i < kCallers; ++i) {
    if (results[i].exit_code == kExitOk) {
      ++won;
      winner = std::to_string(i);
      continue;
    }
    EXPECT_EQ(results[i].exit_code, kExitConflict) << results[i].err;
    EXPECT_EQ(results[i].err, "error: Namespace already exists.\n");
  }
  EXPECT_EQ(won, 1);
  EXPECT_EQ(At(TockJson({"namespace", "describe", "race"}), "/namespaceInfo/description"), winner);
  EXPECT_EQ(TockJson({"namespace", "history", "race"}).size(), 1u);
}

TEST_F(CliTest, UsageErrorsAreExitTwo) {
  StartServer();
  struct Case {
    std::vector<std::string> args;
    std::string in_stderr;
  };
  const std::vector<Case> cases = {
      {{"namespace", "register"}, "name"},
      {{"namespace", "update"}, "name"},
      {{"namespace", "failover", "x"}, "--to"},
      {{"namespace", "list", "-o", "yaml"}, "yaml"},
      {{"namespace", "register", "d", "--data", "novalue"}, "KEY=VALUE"},
      {{"namespace", "register", "d", "--bogus"}, "--bogus"},
      {{"namespace", "frobnicate"}, "frobnicate"},
      {{"namespace", "describe", "x", "--as-of", "yesterday-ish"}, ""},
  };
  for (const auto& c : cases) {
    ProcessResult r = Tock(c.args);
    EXPECT_EQ(r.exit_code, kExitUsage) << Describe(c.args, r);
    EXPECT_NE(r.err.find(c.in_stderr), std::string::npos) << Describe(c.args, r);
    EXPECT_EQ(r.out, "") << Describe(c.args, r);
  }
  ExpectError({"namespace", "describe", "d"}, kExitNotFound, "Namespace d is not found.");
}

// What was not understood is named, with the closest command or flag when there is one,
// exit 2, nothing on stdout: also with --help (`tock workr --help` printed tock's help, 0).
TEST_F(CliTest, UnknownCommandsAndFlagsAreNamedWithTheClosest) {
  struct Case {
    std::vector<std::string> args;
    std::string first_line;
    std::string usage;
  };
  const std::vector<Case> cases = {
      {{"wrkflow", "list"}, "unknown command \"wrkflow\" for \"tock\"; did you mean \"workflow\"?",
       "tock"},
      {{"workr", "--help"}, "unknown command \"workr\" for \"tock\"; did you mean \"worker\"?",
       "tock"},
      {{"workflow", "lsit"},
       "unknown command \"lsit\" for \"tock workflow\"; did you mean \"list\"?", "tock workflow"},
      {{"workflow", "lsit", "--help"},
       "unknown command \"lsit\" for \"tock workflow\"; did you mean \"list\"?", "tock workflow"},
      {{"namspace", "list"},
       "unknown command \"namspace\" for \"tock\"; did you mean \"namespace\"?", "tock"},
      {{"zzzz"}, "unknown command \"zzzz\" for \"tock\"", "tock"},
      {{"namespace", "list", "--include-delted"},
       "unknown flag \"--include-delted\" for \"tock namespace list\"; did you mean "
       "\"--include-deleted\"?",
       "tock namespace list"},
      {{"--adress", "x:1", "namespace", "list"},
       "unknown flag \"--adress\" for \"tock namespace list\"; did you mean \"--address\"?",
       "tock namespace list"},
      {{"namespace", "register", "a", "b"},
       "unexpected argument \"b\" for \"tock namespace register\"", "tock namespace register"},
      {{std::string(500, 'q')},
       "unknown command \"" + std::string(40, 'q') + "...\" for \"tock\"", "tock"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {TOCK_CLI_BIN};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    ProcessResult r = RunProcess(argv);
    EXPECT_EQ(r.exit_code, kExitUsage) << Describe(c.args, r);
    EXPECT_EQ(r.err, "error: " + c.first_line + "\nRun '" + c.usage + " --help' for usage.\n")
        << Describe(c.args, r);
    EXPECT_EQ(r.out, "") << Describe(c.args, r);
  }
  // A command that exists still answers --help.
  ProcessResult help = RunProcess({TOCK_CLI_BIN, "workflow", "list", "--help"});
  EXPECT_EQ(help.exit_code, kExitOk) << help.err;
  EXPECT_NE(help.out.find("--query"), std::string::npos) << help.out;
}

TEST_F(CliTest, ListStreamsAndFiltersDeleted) {
  StartServer();
  for (const char* name : {"alpha", "beta", "gamma"}) ASSERT_NO_FATAL_FAILURE(Register({name}));
  ASSERT_EQ(Tock({"namespace", "delete", "beta", "--yes"}).exit_code, kExitOk);

  std::vector<std::string> names;
  for (const json& ns : TockJsonLines({"namespace", "list"})) {
    names.push_back(At(ns, "/namespaceInfo/name").is_string() ? At(ns, "/namespaceInfo/name") : "?");
  }
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "default", "gamma"}));

  json all = TockJson({"namespace", "list", "--include-deleted"});
  ASSERT_TRUE(all.is_array()) << all.dump();
  ASSERT_EQ(all.size(), 4u) << all.dump();
  EXPECT_EQ(At(all[1], "/namespaceInfo/name"), "beta");
  EXPECT_EQ(At(all[1], "/namespaceInfo/state"), "NAMESPACE_STATE_DELETED");
  EXPECT_EQ(TockJsonLines({"namespace", "list", "--include-deleted"}).size(), 4u);

  ProcessResult table = Tock({"namespace", "list", "-o", "table"});
  EXPECT_EQ(table.exit_code, kExitOk);
  EXPECT_EQ(table.out.rfind("NAME", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("RETENTION"), std::string::npos);
  EXPECT_NE(table.out.find("gamma"), std::string::npos);
  EXPECT_EQ(table.out.find("beta"), std::string::npos) << table.out;
}

TEST_F(CliTest, ListFollowsEveryPage) {
  // More namespaces than one ListNamespaces page holds: the CLI must follow the page token.
  std::vector<std::string> args;
  std::vector<std::string> expected = {"default"};
  for (int i = 0; i < 230; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "pg%03d", i);
    args.push_back("--namespace");
    args.push_back(name);
    expected.push_back(name);
  }
  StartServer(args);
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> names;
  for (const json& ns : TockJsonLines({"namespace", "list"})) {
    names.push_back(At(ns, "/namespaceInfo/name").is_string() ? At(ns, "/namespaceInfo/name") : "?");
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, expected);
  EXPECT_EQ(TockJson({"namespace", "list"}).size(), expected.size());
}

TEST_F(CliTest, UpdateMergesDataAndKeepsWhatIsNotGiven) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"life", "--description", "first", "--owner-email",
                                    "a@example.com", "--data", "a=1", "--data", "c=3"}));
  json updated = TockJson({"namespace", "update", "life", "--retention", "7d", "--data", "b=2"});
  EXPECT_EQ(At(updated, "/config/workflowExecutionRetentionTtl"), "604800s");
  EXPECT_EQ(At(updated, "/namespaceInfo/description"), "first");
  EXPECT_EQ(At(updated, "/namespaceInfo/ownerEmail"), "a@example.com");
  EXPECT_EQ(At(updated, "/namespaceInfo/data"), (json{{"a", "1"}, {"b", "2"}, {"c", "3"}}));

  json changed = TockJson({"namespace", "update", "life", "--description", "second",
                           "--owner-email", "b@example.com", "--data", "a=9"});
  EXPECT_EQ(At(changed, "/namespaceInfo/description"), "second");
  EXPECT_EQ(At(changed, "/namespaceInfo/ownerEmail"), "b@example.com");
  EXPECT_EQ(At(changed, "/namespaceInfo/data"), (json{{"a", "9"}, {"b", "2"}, {"c", "3"}}));
  EXPECT_EQ(At(changed, "/config/workflowExecutionRetentionTtl"), "604800s");

  // Empty values change nothing (SPEC §1.2).
  json same = TockJson({"namespace", "update", "life", "--description", "", "--owner-email", ""});
  EXPECT_EQ(At(same, "/namespaceInfo/description"), "second");
  EXPECT_EQ(At(same, "/namespaceInfo/ownerEmail"), "b@example.com");

  json described = TockJson({"namespace", "describe", "life"});
  EXPECT_EQ(At(described, "/namespaceInfo/description"), "second");
  EXPECT_EQ(At(described, "/namespaceInfo/data"), (json{{"a", "9"}, {"b", "2"}, {"c", "3"}}));
  EXPECT_EQ(At(described, "/namespaceInfo/id"), At(updated, "/namespaceInfo/id"));
}

TEST_F(CliTest, ConcurrentUpdatesLoseNothing) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"busy"}));
  constexpr int kCallers = 8;
  std::vector<ProcessResult> results(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      results[i] = Tock({"namespace", "update", "busy", "--data",
                         "k" + std::to_string(i) + "=v" + std::to_string(i)});
    });
  }
  for (auto& t : callers) t.join();
  json expected_data = json::object();
  for (int i = 0; i < kCallers; ++i) {
    EXPECT_EQ(results[i].exit_code, kExitOk) << results[i].err;
    expected_data["k" + std::to_string(i)] = "v" + std::to_string(i);
  }
  // Data is merged: every acknowledged update is in the result, one version each, and the
  // versions form one unbroken line of valid time (SPEC §1.3, +1 ms in the same millisecond).
  EXPECT_EQ(At(TockJson({"namespace", "describe", "busy"}), "/namespaceInfo/data"), expected_data);
  json history = TockJson({"namespace", "history", "busy"});
  ASSERT_EQ(history.size(), static_cast<size_t>(kCallers + 1)) << history.dump();
  for (size_t i = 0; i + 1 < history.size(); ++i) {
    EXPECT_EQ(At(history[i], "/validTo"), At(history[i + 1], "/validFrom")) << i;
    EXPECT_LT(TimestampNanos(At(history[i], "/validFrom")),
              TimestampNanos(At(history[i + 1], "/validFrom")))
        << history.dump();
  }
}

TEST_F(CliTest, DeprecateDeleteAndStateRules) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"life"}));
  json deprecated = TockJson({"namespace", "deprecate", "life"});
  EXPECT_EQ(At(deprecated, "/namespaceInfo/state"), "NAMESPACE_STATE_DEPRECATED");
  // DEPRECATED -> DEPRECATED is not a transition.
  ExpectError({"namespace", "deprecate", "life"}, kExitUsage, "Invalid namespace state update.");

  // No --yes and no terminal: refused before anything changes.
  ProcessResult no_confirm = Tock({"namespace", "delete", "life"}, "y\n");
  EXPECT_EQ(no_confirm.exit_code, kExitUsage) << no_confirm.err;
  EXPECT_NE(no_confirm.err.find("--yes"), std::string::npos) << no_confirm.err;
  EXPECT_EQ(no_confirm.out, "");
  EXPECT_EQ(At(TockJson({"namespace", "describe", "life"}), "/namespaceInfo/state"),
            "NAMESPACE_STATE_DEPRECATED");

  // DEPRECATED -> DELETED; then nothing more. Delete is soft: still described.
  json deleted = TockJson({"namespace", "delete", "life", "--yes"});
  EXPECT_EQ(At(deleted, "/namespaceInfo/state"), "NAMESPACE_STATE_DELETED");
  ExpectError({"namespace", "delete", "life", "--yes"}, kExitUsage,
              "Invalid namespace state update.");
  ExpectError({"namespace", "deprecate", "life"}, kExitUsage, "Invalid namespace state update.");
  json still = TockJson({"namespace", "describe", "life"});
  EXPECT_EQ(At(still, "/namespaceInfo/state"), "NAMESPACE_STATE_DELETED");
  EXPECT_EQ(At(still, "/namespaceInfo/id"), At(deprecated, "/namespaceInfo/id"));

  // REGISTERED -> DELETED directly; -y is --yes.
  ASSERT_NO_FATAL_FAILURE(Register({"short"}));
  EXPECT_EQ(At(TockJson({"namespace", "delete", "short", "-y"}), "/namespaceInfo/state"),
            "NAMESPACE_STATE_DELETED");
  // A deleted name is still taken.
  ExpectError({"namespace", "register", "short"}, kExitConflict, "Namespace already exists.");
}

TEST_F(CliTest, DeleteAsksOnATerminal) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"asked"}));
  std::vector<std::string> argv = {TOCK_CLI_BIN, "--address", server_->address(), "namespace",
                                   "delete", "asked", "-o", "json"};
  ProcessResult no = RunProcess(argv, {}, "n\n", std::chrono::seconds(15), {.stdin_is_terminal = true});
  EXPECT_NE(no.exit_code, kExitOk) << no.err;
  EXPECT_NE(no.err.find("asked"), std::string::npos) << "the question names the namespace: "
                                                     << no.err;
  EXPECT_EQ(At(TockJson({"namespace", "describe", "asked"}), "/namespaceInfo/state"),
            "NAMESPACE_STATE_REGISTERED");

  ProcessResult yes = RunProcess(argv, {}, "y\n", std::chrono::seconds(15), {.stdin_is_terminal = true});
  EXPECT_EQ(yes.exit_code, kExitOk) << yes.err;
  EXPECT_EQ(At(TockJson({"namespace", "describe", "asked"}), "/namespaceInfo/state"),
            "NAMESPACE_STATE_DELETED");
}

TEST_F(CliTest, HistoryAndAsOfReadThePast) {
  StartServer();
  ASSERT_NO_FATAL_FAILURE(Register({"h", "--retention", "1d"}));
  json v1 = TockJson({"namespace", "history", "h"});
  ASSERT_EQ(v1.size(), 1u) << v1.dump();
  ASSERT_TRUE(At(v1[0], "/validFrom").is_string()) << v1.dump();
  std::string registered_at = v1[0]["validFrom"];
  ASSERT_EQ(Tock({"namespace", "update", "h", "--retention", "5d"}).exit_code, kExitOk);
  ASSERT_EQ(Tock({"namespace", "update", "h", "--description", "later"}).exit_code, kExitOk);
  ASSERT_EQ(Tock({"namespace", "deprecate", "h"}).exit_code, kExitOk);

  json history = TockJson({"namespace", "history", "h"});
  ASSERT_EQ(history.size(), 4u) << history.dump();
  EXPECT_EQ(At(history[0], "/operation"), "register");
  EXPECT_EQ(At(history[1], "/operation"), "update");
  EXPECT_EQ(At(history[0], "/validFrom"), registered_at) << "old versions are never rewritten";
  for (size_t i = 0; i + 1 < history.size(); ++i) {
    EXPECT_EQ(At(history[i], "/validTo"), At(history[i + 1], "/validFrom")) << i;
    EXPECT_GT(TimestampNanos(At(history[i], "/validFrom")), 0) << history[i].dump();
    EXPECT_LT(TimestampNanos(At(history[i], "/validFrom")),
              TimestampNanos(At(history[i + 1], "/validFrom")))
        << "valid_from strictly increases: " << history.dump();
  }
  EXPECT_FALSE(history[3].contains("validTo")) << "the current version is open";
  ASSERT_EQ(At(history[1], "/changes").size(), 1u) << history[1].dump();
  EXPECT_EQ(At(history[1], "/changes/0/field"), "config.workflowExecutionRetentionTtl");
  EXPECT_EQ(At(history[1], "/changes/0/before"), "1d");
  EXPECT_EQ(At(history[1], "/changes/0/after"), "5d");
  EXPECT_EQ(TockJsonLines({"namespace", "history", "h"}).size(), 4u);

  // --as-of: a version is valid from its validFrom (inclusive) to its validTo (exclusive).
  json past = TockJson({"namespace", "describe", "h", "--as-of", registered_at});
  EXPECT_EQ(At(past, "/config/workflowExecutionRetentionTtl"), "86400s");
  EXPECT_EQ(At(past, "/namespaceInfo/state"), "NAMESPACE_STATE_REGISTERED");
  json second = TockJson(
      {"namespace", "describe", "h", "--as-of", At(history[1], "/validFrom").get<std::string>()});
  EXPECT_EQ(At(second, "/config/workflowExecutionRetentionTtl"), "432000s");
  EXPECT_EQ(At(second, "/namespaceInfo/description"), "");
  json now = TockJson({"namespace", "describe", "h", "--as-of", "2100-01-01T00:00:00Z"});
  EXPECT_EQ(At(now, "/namespaceInfo/state"), "NAMESPACE_STATE_DEPRECATED");
  EXPECT_EQ(At(now, "/namespaceInfo/description"), "later");

  ProcessResult table = Tock({"namespace", "history", "h", "-o", "table"});
  EXPECT_EQ(table.exit_code, kExitOk);
  EXPECT_NE(table.out.find("1d -> 5d"), std::string::npos) << table.out;

  ProcessResult before = Tock({"namespace", "describe", "h", "--as-of", "2000-01-01"});
  EXPECT_EQ(before.exit_code, kExitNotFound) << before.err;
  EXPECT_EQ(before.out, "");
}

}  // namespace
}  // namespace tock::testing
