// `tock operator search-attribute create|list|remove` and `tock workflow start
// --search-attribute` against a real tock-server: the attributes of a namespace, Temporal's
// messages for what the server refuses (reserved names, limits per type, another type for an
// existing name, unknown names), and the values a workflow starts with, shown by describe
// and found by a list query.
#include <algorithm>

#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

class SearchAttributeCliTest : public CliTest {
 protected:
  void SetUp() override { StartServer(); }

  // `operator search-attribute create` with NAME TYPE pairs; must succeed.
  void Create(const std::vector<std::pair<std::string, std::string>>& attributes,
              const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"operator", "search-attribute", "create"};
    for (const auto& [name, type] : attributes) {
      args.insert(args.end(), {"--name", name, "--type", type});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult r = Tock(args);
    ASSERT_EQ(r.exit_code, kExitOk) << Describe(args, r);
  }

  // The ListSearchAttributesResponse of a namespace (-o json).
  json List(const std::string& namespace_name = "default") {
    return TockJson({"operator", "search-attribute", "list", "-n", namespace_name});
  }
};

TEST_F(SearchAttributeCliTest, CreateListAndRemove) {
  json created = TockJson({"operator", "search-attribute", "create", "--name", "CustomerId",
                           "--type", "Keyword", "--name", "Amount", "--type", "int"});
  EXPECT_EQ(At(created, "/namespace"), "default");
  EXPECT_EQ(At(created, "/searchAttributes"), json({{"CustomerId", "INDEXED_VALUE_TYPE_KEYWORD"},
                                                    {"Amount", "INDEXED_VALUE_TYPE_INT"}}));
  // Every type, in any case.
  ASSERT_NO_FATAL_FAILURE(Create({{"Note", "TEXT"},
                                  {"Price", "double"},
                                  {"Paid", "Bool"},
                                  {"DueAt", "datetime"},
                                  {"Tags", "keywordlist"}}));

  json listed = List();
  EXPECT_EQ(At(listed, "/customAttributes"), json({{"CustomerId", "INDEXED_VALUE_TYPE_KEYWORD"},
                                                   {"Amount", "INDEXED_VALUE_TYPE_INT"},
                                                   {"Note", "INDEXED_VALUE_TYPE_TEXT"},
                                                   {"Price", "INDEXED_VALUE_TYPE_DOUBLE"},
                                                   {"Paid", "INDEXED_VALUE_TYPE_BOOL"},
                                                   {"DueAt", "INDEXED_VALUE_TYPE_DATETIME"},
                                                   {"Tags", "INDEXED_VALUE_TYPE_KEYWORD_LIST"}}));
  EXPECT_EQ(At(listed, "/systemAttributes/WorkflowId"), "INDEXED_VALUE_TYPE_KEYWORD");
  EXPECT_EQ(At(listed, "/systemAttributes/StartTime"), "INDEXED_VALUE_TYPE_DATETIME");

  // The table: custom attributes first, each kind by name.
  ProcessResult table = Tock({"operator", "search-attribute", "list", "-o", "table"});
  ASSERT_EQ(table.exit_code, kExitOk) << table.err;
  std::istringstream lines(table.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_GT(rows.size(), 8u) << table.out;
  // Columns as wide as their widest cell: compare with runs of blanks squeezed to one.
  auto squeeze = [](std::string s) {
    s.erase(std::unique(s.begin(), s.end(), [](char a, char b) { return a == ' ' && b == ' '; }),
            s.end());
    return s;
  };
  EXPECT_EQ(squeeze(rows[0]), "NAME TYPE KIND") << table.out;
  EXPECT_EQ(squeeze(rows[1]), "Amount Int custom");
  EXPECT_EQ(squeeze(rows[2]), "CustomerId Keyword custom");
  EXPECT_EQ(squeeze(rows[7]), "Tags KeywordList custom");
  EXPECT_NE(table.out.find("\nWorkflowId "), std::string::npos) << table.out;
  EXPECT_NE(squeeze(table.out).find("\nWorkflowId Keyword system\n"), std::string::npos)
      << table.out;

  json removed = TockJson(
      {"operator", "search-attribute", "remove", "--name", "Amount", "--name", "Note", "--yes"});
  EXPECT_EQ(At(removed, "/searchAttributes"), json({"Amount", "Note"}));
  json after = List();
  EXPECT_FALSE(At(after, "/customAttributes").contains("Amount")) << after.dump();
  EXPECT_FALSE(At(after, "/customAttributes").contains("Note")) << after.dump();
  EXPECT_EQ(At(after, "/customAttributes/CustomerId"), "INDEXED_VALUE_TYPE_KEYWORD");
}

TEST_F(SearchAttributeCliTest, AttributesBelongToTheirNamespace) {
  ASSERT_NO_FATAL_FAILURE(Register({"orders"}));
  ASSERT_NO_FATAL_FAILURE(Create({{"OrderId", "Keyword"}}, {"-n", "orders"}));
  EXPECT_EQ(At(List("orders"), "/customAttributes/OrderId"), "INDEXED_VALUE_TYPE_KEYWORD");
  EXPECT_TRUE(At(List("default"), "/customAttributes/OrderId").is_null());
  // The same name with another type in another namespace is another attribute.
  ASSERT_NO_FATAL_FAILURE(Create({{"OrderId", "Int"}}));
  EXPECT_EQ(At(List("default"), "/customAttributes/OrderId"), "INDEXED_VALUE_TYPE_INT");
  EXPECT_EQ(At(List("orders"), "/customAttributes/OrderId"), "INDEXED_VALUE_TYPE_KEYWORD");
}

TEST_F(SearchAttributeCliTest, CreateAgainWithTheSameTypeIsANoOpWithAnotherTypeAnError) {
  ASSERT_NO_FATAL_FAILURE(Create({{"CustomerId", "Keyword"}}));
  ASSERT_NO_FATAL_FAILURE(Create({{"CustomerId", "keyword"}}));
  ExpectError({"operator", "search-attribute", "create", "--name", "CustomerId", "--type", "Text"},
              kExitUsage, "Search attribute CustomerId already exists.");
  EXPECT_EQ(At(List(), "/customAttributes/CustomerId"), "INDEXED_VALUE_TYPE_KEYWORD");
}

TEST_F(SearchAttributeCliTest, ReservedNamesAreRefused) {
  ExpectError(
      {"operator", "search-attribute", "create", "--name", "WorkflowId", "--type", "Keyword"},
      kExitUsage, "Search attribute WorkflowId is reserved by system.");
  ExpectError({"operator", "search-attribute", "remove", "--name", "WorkflowId", "--yes"},
              kExitUsage, "Unable to remove non-custom search attributes: WorkflowId.");
}

TEST_F(SearchAttributeCliTest, LimitsPerTypeAndNamespace) {
  ASSERT_NO_FATAL_FAILURE(Create({{"I1", "Int"}, {"I2", "Int"}, {"I3", "Int"}}));
  ExpectError({"operator", "search-attribute", "create", "--name", "I4", "--type", "Int"},
              kExitUsage,
              "Unable to create search attributes: cannot have more than 3 search attribute of "
              "type Int.");
  EXPECT_TRUE(At(List(), "/customAttributes/I4").is_null());
  // A refused request adds none of its attributes.
  ExpectError({"operator", "search-attribute", "create", "--name", "B1", "--type", "Bool", "--name",
               "I5", "--type", "Int"},
              kExitUsage,
              "Unable to create search attributes: cannot have more than 3 search attribute of "
              "type Int.");
  EXPECT_TRUE(At(List(), "/customAttributes/B1").is_null());

  std::vector<std::pair<std::string, std::string>> keywords;
  for (int i = 1; i <= 10; ++i) keywords.emplace_back("K" + std::to_string(i), "Keyword");
  ASSERT_NO_FATAL_FAILURE(Create(keywords));
  ExpectError({"operator", "search-attribute", "create", "--name", "K11", "--type", "Keyword"},
              kExitUsage,
              "Unable to create search attributes: cannot have more than 10 search attribute of "
              "type Keyword.");
  // The limits are per namespace: another one starts from zero.
  ASSERT_NO_FATAL_FAILURE(Register({"other"}));
  ASSERT_NO_FATAL_FAILURE(Create({{"I4", "Int"}}, {"-n", "other"}));
  // Removing one makes room again.
  ASSERT_EQ(Tock({"operator", "search-attribute", "remove", "--name", "I1", "--yes"}).exit_code,
            kExitOk);
  ASSERT_NO_FATAL_FAILURE(Create({{"I4", "Int"}}));
}

TEST_F(SearchAttributeCliTest, RemoveOfAnUnknownAttributeIsNotFound) {
  ExpectError({"operator", "search-attribute", "remove", "--name", "Foo", "--yes"}, kExitNotFound,
              "Search attribute Foo doesn't exist.");
}

TEST_F(SearchAttributeCliTest, RemoveAsksOnATerminalAndNeedsYesElsewhere) {
  ASSERT_NO_FATAL_FAILURE(Create({{"CustomerId", "Keyword"}}));
  ExpectError({"operator", "search-attribute", "remove", "--name", "CustomerId"}, kExitUsage,
              "refusing to remove search attribute CustomerId from namespace default without "
              "confirmation: pass --yes (standard input is not a terminal)");
  std::vector<std::string> argv = {
      TOCK_CLI_BIN, "--address", server_->address(), "operator", "search-attribute",
      "remove",     "--name",    "CustomerId",       "-o",       "json"};
  ProcessResult no =
      RunProcess(argv, {}, "n\n", std::chrono::seconds(15), {.stdin_is_terminal = true});
  EXPECT_EQ(no.exit_code, kExitError) << no.err;
  EXPECT_NE(no.err.find("Remove search attribute CustomerId from namespace default? [y/N] "),
            std::string::npos)
      << no.err;
  EXPECT_EQ(At(List(), "/customAttributes/CustomerId"), "INDEXED_VALUE_TYPE_KEYWORD");

  ProcessResult yes =
      RunProcess(argv, {}, "y\n", std::chrono::seconds(15), {.stdin_is_terminal = true});
  EXPECT_EQ(yes.exit_code, kExitOk) << yes.err;
  EXPECT_TRUE(At(List(), "/customAttributes/CustomerId").is_null());
}

TEST_F(SearchAttributeCliTest, UnknownTypesAndUnpairedNamesAreUsageErrors) {
  std::vector<std::string> args = {"operator", "search-attribute", "create", "--name",
                                   "Price",    "--type",           "Money"};
  ProcessResult r = Tock(args);
  EXPECT_EQ(r.exit_code, kExitUsage) << Describe(args, r);
  EXPECT_NE(r.err.find("unknown search attribute type \"Money\"; allowed: Keyword, Text, Int, "
                       "Double, Bool, Datetime, KeywordList"),
            std::string::npos)
      << Describe(args, r);
  EXPECT_EQ(r.out, "");

  ExpectError(
      {"operator", "search-attribute", "create", "--name", "A", "--name", "B", "--type", "Int"},
      kExitUsage, "each --name needs its own --type (given: 2 --name, 1 --type)");
  for (const std::vector<std::string>& missing : std::vector<std::vector<std::string>>{
           {"operator", "search-attribute", "create", "--name", "A"},
           {"operator", "search-attribute", "create", "--type", "Int"},
           {"operator", "search-attribute", "remove", "--yes"}}) {
    ProcessResult m = Tock(missing);
    EXPECT_EQ(m.exit_code, kExitUsage) << Describe(missing, m);
  }
}

TEST_F(SearchAttributeCliTest, WorkflowsStartWithSearchAttributesThatDescribeShowsAndListFinds) {
  ASSERT_NO_FATAL_FAILURE(Create({{"CustomerId", "Keyword"},
                                  {"Amount", "Int"},
                                  {"Tags", "KeywordList"},
                                  {"Vip", "Bool"},
                                  {"Note", "Text"}}));
  ASSERT_EQ(Tock({"workflow", "start", "--type", "order", "--task-queue", "q", "--id", "o-42",
                  "--search-attribute", "CustomerId=c-42", "--search-attribute", "Amount=42",
                  "--search-attribute", R"(Tags=["a","b"])", "--search-attribute", "Vip=true",
                  "--search-attribute", R"(Note="said \"hi\"")"})
                .exit_code,
            kExitOk);
  ASSERT_EQ(Tock({"workflow", "start", "--type", "order", "--task-queue", "q", "--id", "o-43",
                  "--search-attribute", R"(CustomerId="c-43")", "--search-attribute", "Amount=7"})
                .exit_code,
            kExitOk);

  json described = TockJson({"workflow", "describe", "--workflow-id", "o-42"});
  EXPECT_EQ(At(described, "/workflowExecutionInfo/searchAttributes/indexedFields"),
            json({{"CustomerId", "c-42"},
                  {"Amount", 42},
                  {"Tags", {"a", "b"}},
                  {"Vip", true},
                  {"Note", "said \"hi\""}}))
      << described.dump();
  ProcessResult card = Tock({"workflow", "describe", "--workflow-id", "o-42", "-o", "card"});
  ASSERT_EQ(card.exit_code, kExitOk) << card.err;
  EXPECT_NE(card.out.find("Search attributes:   Amount=42, CustomerId=\"c-42\", "
                          "Note=\"said \\\"hi\\\"\", Tags=[\"a\",\"b\"], Vip=true\n"),
            std::string::npos)
      << card.out;

  // The start event carries them as the Temporal CLI sends them: json/plain, compact JSON.
  json history = TockJson({"workflow", "show", "--workflow-id", "o-43"});
  const json fields = At(
      history, "/events/0/workflowExecutionStartedEventAttributes/searchAttributes/indexedFields");
  EXPECT_EQ(At(fields, "/CustomerId/metadata/encoding"), "anNvbi9wbGFpbg==");  // json/plain
  EXPECT_EQ(At(fields, "/CustomerId/data"), "ImMtNDMi");                       // "c-43"
  EXPECT_EQ(At(fields, "/Amount/data"), "Nw==");                               // 7

  std::vector<json> found = TockJsonLines({"workflow", "list", "--query", "CustomerId = 'c-42'"});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(At(found[0], "/execution/workflowId"), "o-42");
  found = TockJsonLines({"workflow", "list", "--query", "Amount > 10"});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(At(found[0], "/execution/workflowId"), "o-42");
}

TEST_F(SearchAttributeCliTest, StartRefusesUndefinedAttributesAndValuesOfTheWrongType) {
  ExpectError(
      {"workflow", "start", "--type", "t", "--task-queue", "q", "--search-attribute", "Foo=1"},
      kExitUsage, "search attribute Foo is not defined");
  ASSERT_NO_FATAL_FAILURE(Create({{"Amount", "Int"}}));
  // "abc" is not JSON, so it is sent as the string "abc"; Temporal shows the value as Go
  // prints it (%v: no quotes).
  ExpectError(
      {"workflow", "start", "--type", "t", "--task-queue", "q", "--search-attribute", "Amount=abc"},
      kExitUsage, "invalid value for search attribute Amount of type Int: abc");
  EXPECT_EQ(TockJsonLines({"workflow", "list"}).size(), 0u) << "nothing was started";
}

TEST_F(SearchAttributeCliTest, MalformedSearchAttributeFlagsAreUsageErrors) {
  for (const std::string word : {"CustomerId", "=c-42", ""}) {
    ExpectError(
        {"workflow", "start", "--type", "t", "--task-queue", "q", "--search-attribute", word},
        kExitUsage,
        "invalid --search-attribute \"" + word +
            "\": use NAME=VALUE, the value as JSON or plain text (CustomerId=c-42, "
            "Amount=42, Tags='[\"a\",\"b\"]')");
  }
  ExpectError({"workflow", "execute", "--type", "t", "--task-queue", "q", "--search-attribute",
               "A=1", "--search-attribute", "A=2"},
              kExitUsage, "--search-attribute A is given more than once");
}

}  // namespace
}  // namespace tock::testing
