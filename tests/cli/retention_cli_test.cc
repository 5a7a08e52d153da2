// Retention (seed 002): a closed run is deleted, with its history, once its namespace's
// retention has passed since it closed, and not before; running runs stay. Driven by the
// time-skipping dev server (`tock server advance-time`), which other servers refuse.
#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

TEST_F(CliTest, ClosedRunsGoWhenTheirRetentionHasPassed) {
  StartServer({"--enable-time-skipping"});
  ASSERT_NO_FATAL_FAILURE(Register({"short", "--retention", "1d"}));
  ASSERT_NO_FATAL_FAILURE(Register({"long", "--retention", "3d"}));
  for (const char* ns : {"short", "long"}) {
    for (const char* id : {"closed", "running"}) {
      ASSERT_EQ(
          Tock({"-n", ns, "workflow", "start", "--type", "t", "--task-queue", "nobody", "--id", id})
              .exit_code,
          kExitOk);
    }
    ASSERT_EQ(Tock({"-n", ns, "workflow", "terminate", "--workflow-id", "closed"}).exit_code,
              kExitOk);
  }
  auto exists = [&](const char* ns, const char* id) {
    ProcessResult r = Tock({"-n", ns, "workflow", "describe", "--workflow-id", id});
    EXPECT_TRUE(r.exit_code == kExitOk || r.exit_code == kExitNotFound) << r.err;
    return r.exit_code == kExitOk;
  };

  json advanced = TockJson({"server", "advance-time", "23h"});
  EXPECT_EQ(At(advanced, "/runsDeletedByRetention"), "0") << "1d has not passed yet";
  EXPECT_TRUE(exists("short", "closed"));

  advanced = TockJson({"server", "advance-time", "2h"});
  EXPECT_EQ(At(advanced, "/runsDeletedByRetention"), "1");
  EXPECT_FALSE(exists("short", "closed"));
  ExpectError({"-n", "short", "workflow", "show", "--workflow-id", "closed"}, kExitNotFound,
              "Workflow execution not found. WorkflowId: closed, RunId: .");
  EXPECT_TRUE(exists("short", "running")) << "an open run is never removed by retention";
  EXPECT_TRUE(exists("long", "closed")) << "3d have not passed";
  EXPECT_EQ(At(TockJson({"-n", "short", "workflow", "count"}), "/count"), 1)
      << "only the running run is still listed";

  advanced = TockJson({"server", "advance-time", "2d"});
  EXPECT_EQ(At(advanced, "/runsDeletedByRetention"), "1");
  EXPECT_FALSE(exists("long", "closed"));
  EXPECT_TRUE(exists("long", "running"));
}

TEST_F(CliTest, TimeSkippingIsRefusedUnlessEnabled) {
  StartServer();
  ExpectError({"server", "advance-time", "1h"}, kExitError,
              "time skipping is disabled on this server; start tock-server with "
              "--enable-time-skipping (development and tests only)");
  ExpectError({"server", "advance-time", "soon"}, kExitUsage,
              "invalid duration \"soon\": use a positive duration such as 90m, 25h or 3d");
}

}  // namespace
}  // namespace tock::testing
