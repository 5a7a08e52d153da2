// REPL line splitting: what a shell would pass as argv, and what completion sees.
#include <gtest/gtest.h>

#include "cmd/tock/repl/words.h"

namespace tock::cli::repl {
namespace {

using Words = std::vector<std::string>;

TEST(SplitWordsTest, LikeAShell) {
  EXPECT_EQ(*SplitWords("  namespace   describe orders "),
            (Words{"namespace", "describe", "orders"}));
  EXPECT_EQ(*SplitWords(R"(workflow list --query 'WorkflowType = "order"')"),
            (Words{"workflow", "list", "--query", R"(WorkflowType = "order")"}));
  EXPECT_EQ(*SplitWords(R"(signal --input "{\"a\": 1}")"),
            (Words{"signal", "--input", R"({"a": 1})"}));
  EXPECT_EQ(*SplitWords(R"(a\ b c)"), (Words{"a b", "c"}));
  EXPECT_EQ(*SplitWords(R"(x "" y)"), (Words{"x", "", "y"}));
  EXPECT_EQ(*SplitWords("ab'c d'e"), (Words{"abc de"}));
  EXPECT_TRUE(SplitWords("   ")->empty());
}

TEST(SplitWordsTest, ALeadingBackslashMarksASessionCommand) {
  EXPECT_EQ(*SplitWords(R"(\output json)"), (Words{R"(\output)", "json"}));
  EXPECT_EQ(*SplitWords(R"(  \timing on)"), (Words{R"(\timing)", "on"}));
  EXPECT_EQ(*SplitWords(R"(open \x)"), (Words{"open", "x"})) << "elsewhere it escapes";
}

TEST(SplitWordsTest, UnterminatedInputIsAnErrorNamingIt) {
  auto open_single = SplitWords("describe 'orders");
  ASSERT_FALSE(open_single.ok());
  EXPECT_EQ(open_single.status().message(), "unterminated single quote: close it with '");
  auto open_double = SplitWords("describe \"orders");
  ASSERT_FALSE(open_double.ok());
  EXPECT_EQ(open_double.status().message(), "unterminated double quote: close it with \"");
  EXPECT_FALSE(SplitWords("trailing\\").ok());
}

TEST(SplitPartialTest, TheWordUnderTheCursor) {
  PartialLine p = SplitPartial("namespace describe ord");
  EXPECT_EQ(p.words, (Words{"namespace", "describe"}));
  EXPECT_EQ(p.current, "ord");
  p = SplitPartial("namespace describe ");
  EXPECT_EQ(p.words, (Words{"namespace", "describe"}));
  EXPECT_EQ(p.current, "");
  p = SplitPartial("open 'my wor");
  EXPECT_EQ(p.words, (Words{"open"}));
  EXPECT_EQ(p.current, "my wor") << "an open quote continues to the end";
  p = SplitPartial("\\out");
  EXPECT_TRUE(p.words.empty());
  EXPECT_EQ(p.current, "\\out");
}

}  // namespace
}  // namespace tock::cli::repl
