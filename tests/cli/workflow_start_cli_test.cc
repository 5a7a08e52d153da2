// `tock workflow start --start-delay`: the first workflow task waits (SDK tests check the
// worker side); the delay shows in the start event and the execution time.
#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

TEST_F(CliTest, StartDelayIsRecordedAndBadDelaysAreRefused) {
  StartServer();
  ASSERT_EQ(Tock({"workflow", "start", "--type", "t", "--task-queue", "nobody", "--id", "later",
                  "--start-delay", "1h"})
                .exit_code,
            kExitOk);
  json history = TockJson({"workflow", "show", "--workflow-id", "later"});
  EXPECT_EQ(
      At(history, "/events/0/workflowExecutionStartedEventAttributes/firstWorkflowTaskBackoff"),
      "3600s");
  EXPECT_EQ(At(history, "/events").size(), 1u) << "no workflow task scheduled yet";
  json described = TockJson({"workflow", "describe", "--workflow-id", "later"});
  const int64_t start = TimestampNanos(At(described, "/workflowExecutionInfo/startTime"));
  const int64_t execution = TimestampNanos(At(described, "/workflowExecutionInfo/executionTime"));
  EXPECT_EQ(execution - start, int64_t{3600} * 1'000'000'000);

  ExpectError({"workflow", "start", "--type", "t", "--task-queue", "q", "--start-delay", "soon"},
              kExitUsage,
              "invalid --start-delay \"soon\": use a positive duration such as 30s or 1h");
}

}  // namespace
}  // namespace tock::testing
