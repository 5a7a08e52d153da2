// `tock namespace ...` command lines against the fake frontend: flags -> requests, output in
// every format, exit codes and the "error: <message>" line, nothing sent when input is bad.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lib/admin/retention.h"
#include "tests/unit/cli/fake_frontend.h"

namespace tock::cli::testing {
namespace {

using nlohmann::json;

class NamespaceCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fake_.ok()); }

  CliResult Tock(std::vector<std::string> args, const std::string& input = "",
                 Terminal terminal = {}) {
    args.insert(args.begin(), {"--address", fake_.address()});
    return RunTock(args, input, terminal);
  }

  json TockJson(std::vector<std::string> args) {
    args.insert(args.end(), {"-o", "json"});
    CliResult r = Tock(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    json parsed = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << r.out;
    return parsed;
  }

  FakeFrontend fake_;
};

TEST_F(NamespaceCommandsTest, RegisterSendsEveryFlagAndPrintsTheDescribedNamespace) {
  json ns = TockJson({"namespace", "register", "orders", "--retention", "36h", "--description",
                      "Order processing", "--owner-email", "ops@example.com", "--data",
                      "team=payments", "--data", "url=http://x?a=b", "--global", "--clusters",
                      "a,b", "--active-cluster", "a"});
  ASSERT_TRUE(fake_.state.last_register.has_value());
  const wf::RegisterNamespaceRequest& req = *fake_.state.last_register;
  EXPECT_EQ(req.namespace_(), "orders");
  EXPECT_EQ(req.workflow_execution_retention_period().seconds(), 36 * 3600);
  EXPECT_EQ(req.description(), "Order processing");
  EXPECT_EQ(req.owner_email(), "ops@example.com");
  EXPECT_EQ(req.data().at("team"), "payments");
  EXPECT_EQ(req.data().at("url"), "http://x?a=b");
  EXPECT_TRUE(req.is_global_namespace());
  ASSERT_EQ(req.clusters_size(), 2);
  EXPECT_EQ(req.clusters(1).cluster_name(), "b");
  EXPECT_EQ(req.active_cluster_name(), "a");
  // Canonical JSON of the DescribeNamespaceResponse fetched after registering.
  EXPECT_EQ(ns["namespaceInfo"]["name"], "orders");
  EXPECT_EQ(ns["config"]["workflowExecutionRetentionTtl"], "129600s");
  EXPECT_EQ(ns["failoverVersion"], "1") << "int64 is a string";
  EXPECT_EQ(ns["isGlobalNamespace"], true);
  EXPECT_EQ(fake_.state.calls, (std::vector<std::string>{"RegisterNamespace", "DescribeNamespace"}));
  EXPECT_EQ(fake_.state.namespace_headers[0], "orders");
}

TEST_F(NamespaceCommandsTest, RegisterWithoutRetentionLeavesItToTheServer) {
  json ns = TockJson({"namespace", "register", "plain"});
  ASSERT_TRUE(fake_.state.last_register.has_value());
  EXPECT_FALSE(fake_.state.last_register->has_workflow_execution_retention_period());
  EXPECT_FALSE(fake_.state.last_register->is_global_namespace());
  EXPECT_EQ(ns["config"]["workflowExecutionRetentionTtl"], "172800s");
}

TEST_F(NamespaceCommandsTest, RepeatableOptionsDoNotSwallowTheName) {
  CliResult r = Tock({"namespace", "register", "--data", "a=1", "--clusters", "x,y", "orders",
                      "-o", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fake_.state.last_register.has_value());
  EXPECT_EQ(fake_.state.last_register->namespace_(), "orders");
  EXPECT_EQ(fake_.state.last_register->data().size(), 1u);
  EXPECT_EQ(fake_.state.last_register->clusters_size(), 2);
}

TEST_F(NamespaceCommandsTest, BadRetentionIsExitTwoAndSendsNothing) {
  for (const char* bad : {"0", "23h", "31d", "abc", ""}) {
    for (const char* verb : {"register", "update"}) {
      CliResult r = Tock({"namespace", verb, "orders", "--retention", bad});
      EXPECT_EQ(r.code, 2) << verb << " " << bad << ": " << r.err;
      EXPECT_EQ(r.err.rfind("error: " + std::string(admin::kInvalidRetentionMessage), 0), 0u)
          << r.err;
      EXPECT_EQ(r.out, "");
    }
  }
  EXPECT_TRUE(fake_.state.calls.empty()) << "nothing reached the server";
}

TEST_F(NamespaceCommandsTest, BadDataIsExitTwoAndSendsNothing) {
  CliResult r = Tock({"namespace", "register", "orders", "--data", "novalue"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "error: invalid --data \"novalue\": use KEY=VALUE, for example team=payments\n");
  EXPECT_TRUE(fake_.state.calls.empty());
}

TEST_F(NamespaceCommandsTest, ServerErrorsPrintVerbatimWithTheirExitCode) {
  ASSERT_EQ(Tock({"namespace", "register", "dup"}).code, 0);
  CliResult dup = Tock({"namespace", "register", "dup"});
  EXPECT_EQ(dup.code, 5);
  EXPECT_EQ(dup.err, "error: Namespace already exists.\n");
  EXPECT_EQ(dup.out, "");

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"namespace", "describe", "nope"},
        std::vector<std::string>{"namespace", "update", "nope", "--description", "x"},
        std::vector<std::string>{"namespace", "failover", "nope", "--to", "b"},
        std::vector<std::string>{"namespace", "deprecate", "nope"},
        std::vector<std::string>{"namespace", "delete", "nope", "--yes"},
        std::vector<std::string>{"namespace", "history", "nope"},
        std::vector<std::string>{"namespace", "describe", "nope", "--as-of", "2030-01-01"}}) {
    CliResult r = Tock(args);
    EXPECT_EQ(r.code, 3) << args[1] << ": " << r.err;
    EXPECT_EQ(r.err, "error: Namespace nope is not found.\n") << args[1];
    EXPECT_EQ(r.out, "") << args[1];
  }

  ASSERT_EQ(Tock({"namespace", "deprecate", "dup"}).code, 0);
  CliResult again = Tock({"namespace", "deprecate", "dup"});
  EXPECT_EQ(again.code, 2);
  EXPECT_EQ(again.err, "error: Invalid namespace state update.\n");
}

TEST_F(NamespaceCommandsTest, DescribeDefaultsToTheGlobalNamespace) {
  ASSERT_EQ(Tock({"namespace", "register", "default"}).code, 0);
  ASSERT_EQ(Tock({"namespace", "register", "other"}).code, 0);
  EXPECT_EQ(TockJson({"namespace", "describe"})["namespaceInfo"]["name"], "default");
  EXPECT_EQ(TockJson({"-n", "other", "namespace", "describe"})["namespaceInfo"]["name"], "other");
  EXPECT_EQ(TockJson({"namespace", "describe", "-n", "other"})["namespaceInfo"]["name"], "other")
      << "global flags after the command";
  EXPECT_EQ(TockJson({"-n", "other", "ns", "describe", "default"})["namespaceInfo"]["name"],
            "default")
      << "an explicit NAME wins";
}

TEST_F(NamespaceCommandsTest, DescribeAsOfAsksTheAdminService) {
  ASSERT_EQ(Tock({"namespace", "register", "h"}).code, 0);
  json past = TockJson({"namespace", "describe", "h", "--as-of", "2026-11-22T10:15:30.5Z"});
  ASSERT_TRUE(fake_.state.last_as_of.has_value());
  EXPECT_EQ(fake_.state.last_as_of->as_of().seconds(), 1795342530);
  EXPECT_EQ(fake_.state.last_as_of->as_of().nanos(), 500000000);
  EXPECT_EQ(past["namespaceInfo"]["description"], "as it was");
  CliResult bad = Tock({"namespace", "describe", "h", "--as-of", "yesterday-ish"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err.rfind("error: ", 0), 0u);
}

TEST_F(NamespaceCommandsTest, DescribeCardShowsHumanValues) {
  ASSERT_EQ(Tock({"namespace", "register", "orders", "--retention", "3d", "--data", "b=2",
                  "--data", "a=1", "--owner-email", "ops@example.com"})
                .code,
            0);
  for (const char* format : {"card", "table"}) {
    CliResult r = Tock({"namespace", "describe", "orders", "-o", format});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("Name:                 orders\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Retention:            3d\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("State:                Registered\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Data:                 a=1, b=2\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ops@example.com"), std::string::npos) << r.out;
  }
  CliResult jsonl = Tock({"namespace", "describe", "orders", "-o", "jsonl"});
  EXPECT_EQ(std::count(jsonl.out.begin(), jsonl.out.end(), '\n'), 1);
}

TEST_F(NamespaceCommandsTest, OutputDefaultsToTableOnATerminalAndJsonInAPipe) {
  ASSERT_EQ(Tock({"namespace", "register", "orders"}).code, 0);
  CliResult piped = Tock({"namespace", "list"});
  EXPECT_TRUE(json::parse(piped.out, nullptr, false).is_array()) << piped.out;
  CliResult terminal = Tock({"namespace", "list"}, "", {.stdout_is_terminal = true});
  EXPECT_EQ(terminal.out.rfind("\033[1mNAME", 0), 0u) << "a table, bold header: " << terminal.out;
  CliResult no_color =
      Tock({"--color", "never", "namespace", "list"}, "", {.stdout_is_terminal = true});
  EXPECT_EQ(no_color.out.rfind("NAME", 0), 0u) << no_color.out;
}

TEST_F(NamespaceCommandsTest, ListFollowsEveryPageInEveryFormat) {
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    ASSERT_EQ(Tock({"namespace", "register", name}).code, 0);
  }
  ASSERT_EQ(Tock({"namespace", "delete", "c", "--yes"}).code, 0);
  fake_.state.list_requests.clear();

  CliResult jsonl = Tock({"namespace", "list", "-o", "jsonl"});
  ASSERT_EQ(jsonl.code, 0) << jsonl.err;
  std::vector<std::string> names;
  std::istringstream lines(jsonl.out);
  for (std::string line; std::getline(lines, line);) {
    names.push_back(json::parse(line)["namespaceInfo"]["name"]);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "d", "e"}));
  ASSERT_EQ(fake_.state.list_requests.size(), 2u) << "two pages of two";
  EXPECT_EQ(fake_.state.list_requests[0].page_size(), 100);
  EXPECT_FALSE(fake_.state.list_requests[0].namespace_filter().include_deleted());
  EXPECT_EQ(fake_.state.list_requests[1].next_page_token(), "2");

  json all = TockJson({"namespace", "list", "--include-deleted"});
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[2]["namespaceInfo"]["state"], "NAMESPACE_STATE_DELETED");

  CliResult table = Tock({"namespace", "list", "-o", "table", "--include-deleted"});
  EXPECT_EQ(table.out,
            "NAME  STATE       RETENTION  GLOBAL  ACTIVE CLUSTER  FAILOVER VERSION\n"
            "a     Registered  2d         no      active          0\n"
            "b     Registered  2d         no      active          0\n"
            "c     Deleted     2d         no      active          0\n"
            "d     Registered  2d         no      active          0\n"
            "e     Registered  2d         no      active          0\n");
}

TEST_F(NamespaceCommandsTest, EmptyListInEveryFormat) {
  EXPECT_EQ(Tock({"namespace", "list", "-o", "json"}).out, "[]\n");
  EXPECT_EQ(Tock({"namespace", "list", "-o", "jsonl"}).out, "");
  EXPECT_EQ(Tock({"namespace", "list", "-o", "table"}).out, "No namespaces.\n");
}

TEST_F(NamespaceCommandsTest, UpdateSendsOnlyWhatIsGivenAndPrintsTheDescribedNamespace) {
  ASSERT_EQ(Tock({"namespace", "register", "life", "--description", "first"}).code, 0);
  json updated = TockJson({"namespace", "update", "life", "--retention", "7", "--data", "b=2",
                           "--promote-global", "--clusters", "a,b"});
  ASSERT_TRUE(fake_.state.last_update.has_value());
  const wf::UpdateNamespaceRequest& req = *fake_.state.last_update;
  EXPECT_EQ(req.config().workflow_execution_retention_ttl().seconds(), 7 * 86400)
      << "bare retention numbers are days";
  EXPECT_EQ(req.update_info().description(), "");
  EXPECT_EQ(req.update_info().data().at("b"), "2");
  EXPECT_TRUE(req.promote_namespace());
  EXPECT_EQ(req.replication_config().clusters_size(), 2);
  EXPECT_EQ(req.replication_config().active_cluster_name(), "");
  EXPECT_EQ(updated["namespaceInfo"]["description"], "first");
  EXPECT_EQ(updated["config"]["workflowExecutionRetentionTtl"], "604800s");
  EXPECT_EQ(fake_.state.calls.back(), "DescribeNamespace");

  ASSERT_EQ(Tock({"namespace", "update", "life", "--description", "", "--owner-email", ""}).code, 0);
  EXPECT_FALSE(fake_.state.last_update->has_update_info()) << "empty values change nothing";
  EXPECT_FALSE(fake_.state.last_update->has_config());
}

TEST_F(NamespaceCommandsTest, FailoverSendsOnlyTheActiveClusterAndShowsTheFailoverHistory) {
  ASSERT_EQ(Tock({"namespace", "register", "pay", "--global", "--clusters", "a,b",
                  "--active-cluster", "a"})
                .code,
            0);
  json moved = TockJson({"namespace", "failover", "pay", "--to", "b"});
  ASSERT_TRUE(fake_.state.last_update.has_value());
  wf::UpdateNamespaceRequest expected;
  expected.set_namespace_("pay");
  expected.mutable_replication_config()->set_active_cluster_name("b");
  EXPECT_EQ(fake_.state.last_update->SerializeAsString(), expected.SerializeAsString())
      << fake_.state.last_update->DebugString();
  EXPECT_EQ(moved["replicationConfig"]["activeClusterName"], "b");
  EXPECT_EQ(moved["failoverVersion"], "2");
  ASSERT_EQ(moved["failoverHistory"].size(), 1u) << "the describe after, not the update reply";
  EXPECT_EQ(moved, TockJson({"namespace", "describe", "pay"}));

  CliResult no_target = Tock({"namespace", "failover", "pay"});
  EXPECT_EQ(no_target.code, 2);
  EXPECT_NE(no_target.err.find("--to"), std::string::npos) << no_target.err;
}

TEST_F(NamespaceCommandsTest, DeprecatePrintsTheNamespace) {
  ASSERT_EQ(Tock({"namespace", "register", "old"}).code, 0);
  json ns = TockJson({"namespace", "deprecate", "old"});
  EXPECT_EQ(ns["namespaceInfo"]["state"], "NAMESPACE_STATE_DEPRECATED");
}

TEST_F(NamespaceCommandsTest, DeleteNeedsYesOrATerminalAnswer) {
  ASSERT_EQ(Tock({"namespace", "register", "gone"}).code, 0);

  CliResult refused = Tock({"namespace", "delete", "gone"}, "y\n");
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("--yes"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out, "");

  CliResult no = Tock({"namespace", "delete", "gone", "-o", "json"}, "n\n",
                      {.stdin_is_terminal = true});
  EXPECT_EQ(no.code, 1);
  EXPECT_EQ(no.err.rfind("Delete namespace gone? [y/N] ", 0), 0u) << no.err;
  EXPECT_EQ(no.out, "");
  CliResult eof = Tock({"namespace", "delete", "gone"}, "", {.stdin_is_terminal = true});
  EXPECT_EQ(eof.code, 1) << "no answer is no";
  EXPECT_EQ(fake_.state.CallCount("DeleteNamespace"), 0);

  CliResult yes = Tock({"namespace", "delete", "gone", "-o", "json"}, "y\n",
                       {.stdin_is_terminal = true});
  EXPECT_EQ(yes.code, 0) << yes.err;
  EXPECT_EQ(json::parse(yes.out)["namespaceInfo"]["state"], "NAMESPACE_STATE_DELETED");
  EXPECT_EQ(fake_.state.CallCount("DeleteNamespace"), 1);

  ASSERT_EQ(Tock({"namespace", "register", "quick"}).code, 0);
  EXPECT_EQ(Tock({"namespace", "delete", "quick", "-y"}).code, 0);
}

TEST_F(NamespaceCommandsTest, HistoryInEveryFormat) {
  tock::admin::v1::GetNamespaceHistoryResponse history;
  auto* v1 = history.add_versions();
  v1->set_version(1);
  v1->set_operation("register");
  v1->mutable_valid_from()->set_seconds(1795342530);
  v1->mutable_valid_to()->set_seconds(1795342590);
  v1->mutable_record()->mutable_info()->set_name("h");
  v1->mutable_record()->mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(
      86400);
  auto* v2 = history.add_versions();
  *v2 = *v1;
  v2->set_version(2);
  v2->set_operation("update");
  v2->clear_valid_to();
  v2->mutable_valid_from()->set_seconds(1795342590);
  v2->mutable_record()->mutable_config()->mutable_workflow_execution_retention_ttl()->set_seconds(
      5 * 86400);
  v2->mutable_record()->set_failover_version(7);
  fake_.state.histories["h"] = history;

  json versions = TockJson({"namespace", "history", "h"});
  ASSERT_TRUE(versions.is_array());
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0]["version"], "1");
  EXPECT_EQ(versions[0]["operation"], "register");
  EXPECT_EQ(versions[0]["validFrom"], "2026-11-22T10:15:30Z");
  EXPECT_EQ(versions[0]["validTo"], "2026-11-22T10:16:30Z");
  EXPECT_FALSE(versions[1].contains("validTo")) << "the current version is open";
  EXPECT_EQ(versions[1]["record"]["failoverVersion"], "7");
  EXPECT_EQ(versions[1]["changes"],
            json::parse(R"([{"field":"config.workflowExecutionRetentionTtl","before":"1d",)"
                        R"("after":"5d"},{"field":"failoverVersion","before":"0","after":"7"}])"));

  CliResult jsonl = Tock({"namespace", "history", "h", "-o", "jsonl"});
  EXPECT_EQ(std::count(jsonl.out.begin(), jsonl.out.end(), '\n'), 2);

  CliResult table = Tock({"namespace", "history", "h", "-o", "table"});
  EXPECT_EQ(table.out.rfind("VERSION  VALID FROM            FAILOVER VERSION  OPERATION  CHANGES\n", 0),
            0u)
      << table.out;
  EXPECT_NE(table.out.find("1        2026-11-22T10:15:30Z  0                 register   registered\n"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("config.workflowExecutionRetentionTtl: 1d -> 5d"), std::string::npos)
      << table.out;

  CliResult defaulted = Tock({"-n", "h", "namespace", "history", "-o", "jsonl"});
  EXPECT_EQ(defaulted.code, 0) << "NAME defaults to -n: " << defaulted.err;
}

TEST_F(NamespaceCommandsTest, ApiKeyTravelsAsABearerToken) {
  ASSERT_EQ(Tock({"--api-key", "s3cret", "namespace", "register", "k"}).code, 0);
  EXPECT_EQ(fake_.state.authorization_headers[0], "Bearer s3cret");
}

}  // namespace
}  // namespace tock::cli::testing
