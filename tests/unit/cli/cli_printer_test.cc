// The printer's four formats, as the commands use them.
#include "cmd/tock/output/printer.h"

#include <gtest/gtest.h>

#include <sstream>

namespace tock::cli {
namespace {

TEST(CliPrinterTest, ObjectInEveryFormat) {
  const nlohmann::json json = {{"name", "orders"}, {"failoverVersion", "0"}};
  const CardRows card = {{"Name", "orders"}, {"Retention", "3d"}};
  auto print = [&](OutputFormat format) {
    std::ostringstream out;
    Printer(out, format, false).Object(json, card);
    return out.str();
  };
  EXPECT_EQ(print(OutputFormat::kJson), json.dump(2) + "\n");
  EXPECT_EQ(print(OutputFormat::kJsonl), json.dump() + "\n");
  EXPECT_EQ(print(OutputFormat::kCard), "Name:       orders\nRetention:  3d\n");
  EXPECT_EQ(print(OutputFormat::kTable), print(OutputFormat::kCard))
      << "one object prints as a card in table mode";
}

TEST(CliPrinterTest, CardLeavesNoTrailingBlanksForEmptyValues) {
  std::ostringstream out;
  Printer(out, OutputFormat::kCard, false).Object({}, {{"Description", ""}, {"Id", "x"}});
  EXPECT_EQ(out.str(), "Description:\nId:           x\n");
}

TEST(CliPrinterTest, JsonListIsOneIndentedArrayThatParses) {
  std::ostringstream out;
  Printer p(out, OutputFormat::kJson, false);
  p.BeginList({"N"});
  p.Row({{"n", 1}, {"inner", {{"k", "v"}}}}, {"1"});
  p.Row({{"n", 2}}, {"2"});
  p.EndList();
  nlohmann::json parsed = nlohmann::json::parse(out.str());
  ASSERT_TRUE(parsed.is_array());
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0]["inner"]["k"], "v");
  // Indented as jq would print it: the array's elements two spaces in.
  EXPECT_EQ(out.str().substr(0, 6), "[\n  {\n");
  EXPECT_EQ(out.str(), nlohmann::json::parse(out.str()).dump(2) + "\n");
}

TEST(CliPrinterTest, JsonlIsOneCompactDocumentPerRowAndNothingWhenEmpty) {
  std::ostringstream out;
  Printer p(out, OutputFormat::kJsonl, false);
  p.BeginList({"N"});
  p.EndList();
  p.EmptyNote("No namespaces.");
  EXPECT_EQ(out.str(), "");
  p.BeginList({"N"});
  p.Row({{"a", {1, 2}}}, {"x"});
  p.Row({{"b", "c"}}, {"y"});
  p.EndList();
  EXPECT_EQ(out.str(), "{\"a\":[1,2]}\n{\"b\":\"c\"}\n");
}

TEST(CliPrinterTest, EmptyTableSaysSoAndEmptyJsonIsAnArray) {
  std::ostringstream table, json;
  Printer t(table, OutputFormat::kTable, false);
  t.BeginList({"NAME"});
  t.EndList();
  t.EmptyNote("No namespaces.");
  EXPECT_EQ(table.str(), "No namespaces.\n");
  Printer j(json, OutputFormat::kJson, false);
  j.BeginList({"NAME"});
  j.EndList();
  j.EmptyNote("No namespaces.");
  EXPECT_EQ(json.str(), "[]\n");
}

TEST(CliPrinterTest, LongTablePrintsItsHeaderOnceAndColumnsOnlyWiden) {
  std::ostringstream out;
  Printer p(out, OutputFormat::kTable, false);
  p.BeginList({"NAME", "STATE"});
  for (size_t i = 0; i < Printer::kPageRows; ++i) p.Row({}, {"n", "Registered"});
  // The second page has a wider name: its rows widen, the first page is already out.
  p.Row({}, {"a-much-longer-name", "Deleted"});
  p.EndList();
  std::string text = out.str();
  size_t headers = 0;
  for (size_t at = text.find("NAME"); at != std::string::npos; at = text.find("NAME", at + 1)) {
    ++headers;
  }
  EXPECT_EQ(headers, 1u) << text;
  EXPECT_EQ(text.rfind("NAME  STATE\n", 0), 0u) << text;
  EXPECT_NE(text.find("\nn     Registered\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\na-much-longer-name  Deleted\n"), std::string::npos) << text;
}

TEST(CliPrinterTest, CardListSeparatesRowsAndLabelsFromHeaders) {
  std::ostringstream out;
  Printer p(out, OutputFormat::kCard, false);
  p.BeginList({"NAME", "ACTIVE CLUSTER"});
  p.Row({}, {"a", "x"});
  p.Row({}, {"b", "y"});
  p.EndList();
  EXPECT_EQ(out.str(),
            "Name:            a\nActive cluster:  x\n\nName:            b\nActive cluster:  y\n");
}

TEST(CliPrinterTest, BoldHeadersOnlyWithColor) {
  std::ostringstream plain, colored;
  for (auto [stream, color] : {std::pair{&plain, false}, std::pair{&colored, true}}) {
    Printer p(*stream, OutputFormat::kTable, color);
    p.BeginList({"NAME"});
    p.Row({}, {"a"});
    p.EndList();
  }
  EXPECT_EQ(plain.str(), "NAME\na\n");
  EXPECT_EQ(colored.str(), "\033[1mNAME\033[0m\na\n");
}

TEST(CliPrinterTest, EnumLabels) {
  EXPECT_EQ(EnumLabel("NAMESPACE_STATE_DEPRECATED", "NAMESPACE_STATE_"), "Deprecated");
  EXPECT_EQ(EnumLabel("REPLICATION_STATE_HANDOVER", "REPLICATION_STATE_"), "Handover");
  EXPECT_EQ(EnumLabel("FAILOVER_VERSION", ""), "Failover Version");
  EXPECT_EQ(EnumLabel("UNPREFIXED", "NAMESPACE_STATE_"), "Unprefixed");
}

}  // namespace
}  // namespace tock::cli
