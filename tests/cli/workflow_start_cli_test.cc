// `tock workflow start --start-delay` and `--cron`: the first workflow task waits (SDK tests
// check the worker side); the wait shows in the start event and the execution time.
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

TEST_F(CliTest, CronWorkflowsWaitForTheirScheduleAndBadSchedulesAreRefused) {
  StartServer();
  ASSERT_EQ(Tock({"workflow", "start", "--type", "t", "--task-queue", "nobody", "--id", "hourly",
                  "--cron", "@hourly"})
                .exit_code,
            kExitOk);
  json history = TockJson({"workflow", "show", "--workflow-id", "hourly"});
  const json& started = At(history, "/events/0/workflowExecutionStartedEventAttributes");
  EXPECT_EQ(At(started, "/cronSchedule"), "@hourly");
  json described = TockJson({"workflow", "describe", "--workflow-id", "hourly"});
  // The first run waits for the top of the next hour (Temporal rounds the wait up to whole
  // seconds, so it starts within the first second of the hour).
  const int64_t execution = TimestampNanos(At(described, "/workflowExecutionInfo/executionTime"));
  const int64_t hour = int64_t{3600} * 1'000'000'000;
  EXPECT_LT(execution % hour, int64_t{1'000'000'000}) << described.dump();
  EXPECT_GT(execution, TimestampNanos(At(described, "/workflowExecutionInfo/startTime")));

  ExpectError({"workflow", "start", "--type", "t", "--task-queue", "q", "--cron", "61 * * * *"},
              kExitUsage, "invalid CronSchedule. \"61 * * * *\": minute \"61\" is outside 0-59");
  ExpectError({"workflow", "start", "--type", "t", "--task-queue", "q", "--cron", "* * *"},
              kExitUsage,
              "invalid CronSchedule. \"* * *\": five fields are needed: minute hour day-of-month "
              "month day-of-week");
  ExpectError({"workflow", "start", "--type", "t", "--task-queue", "q", "--cron", "@hourly",
               "--start-delay", "1h"},
              kExitUsage, "CronSchedule and WorkflowStartDelay may not be used together.");
}

}  // namespace
}  // namespace tock::testing
