// The CLI's output formats and exit codes, without a process.
#include "cmd/tock/output/printer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "cmd/tock/context.h"

namespace tock::cli {
namespace {

TEST(PrinterTest, TableAlignsColumns) {
  std::ostringstream out;
  Printer p(out, OutputFormat::kTable, false);
  p.BeginList({"NAME", "STATE"});
  p.Row({}, {"default", "Registered"});
  p.Row({}, {"a", "Deleted"});
  p.EndList();
  EXPECT_EQ(out.str(), "NAME     STATE\ndefault  Registered\na        Deleted\n");
}

TEST(PrinterTest, JsonListIsOneArrayAndJsonlOneLinePerRow) {
  std::ostringstream json_out, jsonl_out;
  Printer json(json_out, OutputFormat::kJson, false);
  Printer jsonl(jsonl_out, OutputFormat::kJsonl, false);
  for (Printer* p : {&json, &jsonl}) {
    p->BeginList({"N"});
    p->Row({{"n", 1}}, {"1"});
    p->Row({{"n", 2}}, {"2"});
    p->EndList();
  }
  auto parsed = nlohmann::json::parse(json_out.str());
  ASSERT_TRUE(parsed.is_array());
  EXPECT_EQ(parsed.size(), 2u);
  EXPECT_EQ(jsonl_out.str(), "{\"n\":1}\n{\"n\":2}\n");
}

TEST(PrinterTest, EmptyListsStayParseable) {
  std::ostringstream out;
  Printer p(out, OutputFormat::kJson, false);
  p.BeginList({"N"});
  p.EndList();
  EXPECT_EQ(nlohmann::json::parse(out.str()), nlohmann::json::array());
}

TEST(PrinterTest, CardAlignsKeys) {
  std::ostringstream out;
  Printer p(out, OutputFormat::kCard, false);
  p.Object({}, {{"Name", "orders"}, {"Retention", "3d"}});
  EXPECT_EQ(out.str(), "Name:       orders\nRetention:  3d\n");
}

TEST(PrinterTest, ColorOnlyWhenAsked) {
  std::ostringstream out;
  Printer p(out, OutputFormat::kCard, true);
  p.Object({}, {{"K", "v"}});
  EXPECT_NE(out.str().find("\033[1m"), std::string::npos);
}

TEST(PrinterTest, FormatsAndLabels) {
  EXPECT_EQ(*ParseOutputFormat("jsonl"), OutputFormat::kJsonl);
  EXPECT_EQ(ParseOutputFormat("yaml").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EnumLabel("NAMESPACE_STATE_REGISTERED", "NAMESPACE_STATE_"), "Registered");
  EXPECT_EQ(EnumLabel("ARCHIVAL_STATE_DISABLED", "ARCHIVAL_STATE_"), "Disabled");
}

TEST(ExitCodeTest, DesignTable) {
  EXPECT_EQ(ExitCodeFor(absl::OkStatus()), 0);
  EXPECT_EQ(ExitCodeFor(absl::InternalError("x")), 1);
  EXPECT_EQ(ExitCodeFor(absl::InvalidArgumentError("x")), 2);
  EXPECT_EQ(ExitCodeFor(absl::NotFoundError("x")), 3);
  EXPECT_EQ(ExitCodeFor(absl::UnavailableError("x")), 4);
  EXPECT_EQ(ExitCodeFor(absl::DeadlineExceededError("x")), 4);
  EXPECT_EQ(ExitCodeFor(absl::AlreadyExistsError("x")), 5);
  EXPECT_EQ(ExitCodeFor(absl::AbortedError("x")), 5);
}

}  // namespace
}  // namespace tock::cli
