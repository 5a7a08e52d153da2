// Completion of the new commands through `tock __complete` (what the bash, zsh and fish
// scripts run): the command names, the static --type values, and the custom search attribute
// names of the namespace on the line, asked from the server.
#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

// `tock --address ... __complete WORDS... CURRENT`: its stdout, after checking it succeeded
// quietly.
class CompleteCliTest : public CliTest {
 protected:
  std::string Complete(std::vector<std::string> words) {
    words.insert(words.begin(), "__complete");
    ProcessResult r = Tock(words);
    EXPECT_EQ(r.exit_code, kExitOk) << Describe(words, r);
    EXPECT_EQ(r.err, "") << Describe(words, r);
    return r.out;
  }
};

TEST_F(CompleteCliTest, CommandsAndSearchAttributeTypes) {
  StartServer();
  const std::string top = Complete({""});
  EXPECT_NE(top.find("\noperator\t"), std::string::npos) << top;
  EXPECT_NE(top.find("\nactivity\t"), std::string::npos) << top;
  EXPECT_EQ(Complete({"operator", ""}),
            "search-attribute\tCreate, list and remove the custom search attributes of a "
            "namespace\nnexus\tOperate the cluster's Nexus endpoints\n");
  EXPECT_EQ(Complete({"operator", "search-attribute", "re"}),
            "remove\tRemove custom search attributes from the namespace (asks first)\n");
  EXPECT_EQ(Complete({"activity", ""}),
            "complete\tComplete a running activity with a result, as its worker would\n"
            "fail\tFail a running activity (non-retryable: the workflow sees the failure now)\n");
  EXPECT_EQ(Complete({"workflow", "st"}),
            "start\tStart a workflow and print its ids\n"
            "stack\tShow where a running workflow's code is waiting (the __stack_trace query)\n");
  EXPECT_EQ(Complete({"operator", "search-attribute", "create", "--type", ""}),
            "Keyword\nText\nInt\nDouble\nBool\nDatetime\nKeywordList\n");
  EXPECT_EQ(Complete({"operator", "search-attribute", "create", "--name", "A", "--type", "Key"}),
            "Keyword\nKeywordList\n");
}

TEST_F(CompleteCliTest, SearchAttributeNamesComeFromTheNamespaceOnTheLine) {
  StartServer();
  Register({"other"});
  for (const auto& [name, type] : {std::pair{"CustomerId", "Keyword"}, {"Amount", "Int"}}) {
    ProcessResult r =
        Tock({"operator", "search-attribute", "create", "--name", name, "--type", type});
    ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  }
  EXPECT_EQ(Complete({"operator", "search-attribute", "remove", "--name", ""}),
            "Amount\tInt\nCustomerId\tKeyword\n");
  EXPECT_EQ(
      Complete({"operator", "search-attribute", "remove", "--name", "Amount", "--name", "Cu"}),
      "CustomerId\tKeyword\n");
  // A value follows the name: "CustomerId=" (the scripts put no space after a trailing =).
  EXPECT_EQ(Complete({"workflow", "start", "--search-attribute", "Cu"}), "CustomerId=\tKeyword\n");
  EXPECT_EQ(Complete({"-n", "other", "operator", "search-attribute", "remove", "--name", ""}), "");
  // New names are not completed.
  EXPECT_EQ(Complete({"operator", "search-attribute", "create", "--name", ""}), "");
}

}  // namespace
}  // namespace tock::testing
