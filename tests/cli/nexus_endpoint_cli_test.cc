// `tock operator nexus endpoint ...` against a real tock-server: create (worker and external
// targets, descriptions), get and list (card, table and JSON), update keeping what is not
// given, delete (only with --yes off a terminal), the errors with their exit codes, and live
// completion of endpoint names.
#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

class NexusEndpointCliTest : public CliTest {};

TEST_F(NexusEndpointCliTest, CreateGetListUpdateDelete) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ProcessResult r = Tock({"operator", "nexus", "endpoint", "list", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "No Nexus endpoints: tock operator nexus endpoint create makes one.\n");

  json created = TockJson({"operator", "nexus", "endpoint", "create", "--name", "payments",
                           "--target-namespace", "default", "--target-task-queue", "handlers",
                           "--description", "Card *payments*"});
  EXPECT_EQ(At(created, "/spec/target/worker/namespace"), "default") << created.dump();
  EXPECT_EQ(At(created, "/version"), "1") << created.dump();
  r = Tock({"operator", "nexus", "endpoint", "create", "--name", "partner", "--target-url",
            "https://nexus.example.com", "--description-file", dir_.File("absent.md")});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("--description-file: cannot read"), std::string::npos) << r.err;
  r = Tock({"operator", "nexus", "endpoint", "create", "--name", "partner", "--target-url",
            "https://nexus.example.com", "--description-file",
            dir_.Write("partner.md", "# Partner API\n")});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  json partner = TockJson({"operator", "nexus", "endpoint", "get", "--name", "partner"});
  EXPECT_EQ(At(partner, "/spec/description"), "# Partner API\n") << partner.dump();

  r = Tock({"operator", "nexus", "endpoint", "get", "--name", "payments", "-o", "card"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("default/handlers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Card *payments*"), std::string::npos) << r.out;
  json listed = TockJson({"operator", "nexus", "endpoint", "list"});
  ASSERT_EQ(listed.size(), 2u) << listed.dump();
  r = Tock({"operator", "nexus", "endpoint", "list", "-o", "table"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("https://nexus.example.com"), std::string::npos) << r.out;

  // An update changes what it names and keeps the rest.
  json updated = TockJson({"operator", "nexus", "endpoint", "update", "--name", "payments",
                           "--target-task-queue", "handlers-v2"});
  EXPECT_EQ(At(updated, "/version"), "2") << updated.dump();
  EXPECT_EQ(At(updated, "/spec/target/worker/taskQueue"), "handlers-v2");
  EXPECT_EQ(At(updated, "/spec/target/worker/namespace"), "default");
  EXPECT_TRUE(updated["spec"].contains("description")) << updated.dump();
  updated = TockJson({"operator", "nexus", "endpoint", "update", "--name", "payments",
                      "--unset-description"});
  EXPECT_FALSE(updated["spec"].contains("description")) << updated.dump();

  // Errors: the server's validation, a name that is not there, flags that do not go together.
  r = Tock({"operator", "nexus", "endpoint", "create", "--name", "bad_name", "--target-url",
            "https://x.example.com"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;  // INVALID_ARGUMENT
  EXPECT_NE(r.err.find("endpoint name must match the regex"), std::string::npos) << r.err;
  r = Tock({"operator", "nexus", "endpoint", "create", "--name", "payments", "--target-url",
            "https://x.example.com"});
  EXPECT_EQ(r.exit_code, kExitConflict) << r.err;  // ALREADY_EXISTS
  r = Tock({"operator", "nexus", "endpoint", "get", "--name", "absent"});
  EXPECT_EQ(r.exit_code, kExitNotFound) << r.err;
  EXPECT_NE(r.err.find("no Nexus endpoint is named \"absent\""), std::string::npos) << r.err;
  r = Tock({"operator", "nexus", "endpoint", "update", "--name", "payments", "--target-url",
            "https://x.example.com", "--target-task-queue", "q"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;

  // Names complete from the server.
  r = Tock({"__complete", "operator", "nexus", "endpoint", "get", "--name", "pa"});
  EXPECT_EQ(r.out, "partner\thttps://nexus.example.com\npayments\tdefault/handlers-v2\n") << r.err;

  r = Tock({"operator", "nexus", "endpoint", "delete", "--name", "payments"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("pass --yes"), std::string::npos) << r.err;
  r = Tock({"operator", "nexus", "endpoint", "delete", "--name", "payments", "--yes"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  listed = TockJson({"operator", "nexus", "endpoint", "list"});
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  EXPECT_EQ(At(listed[0], "/spec/name"), "partner");
}

}  // namespace
}  // namespace tock::testing
