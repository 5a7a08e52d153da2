// `tock schedule create|describe|list|update|toggle|trigger|backfill|delete` against a real
// tock-server: bad input refused with exact messages and exit codes (before sending, or by
// the server with Temporal's words), and a schedule's life: created, described, listed,
// paused and unpaused, triggered (a run starts on a task queue nobody polls), backfilled,
// updated, deleted.
#include <chrono>
#include <functional>
#include <thread>

#include "tests/cli/cli_fixture.h"

namespace tock::testing {
namespace {

class ScheduleCliTest : public CliTest {
 protected:
  void SetUp() override { StartServer(); }

  std::vector<std::string> Create(const std::string& id, std::vector<std::string> extra) {
    std::vector<std::string> args = {"schedule", "create", "-s", id, "-w", id + "-wf",
                                     "--type", "report", "-t", "nobody-polls"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  // DescribeSchedule until `done` (10 s at most).
  json WaitFor(const std::string& id, const std::function<bool(const json&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    json d;
    while (std::chrono::steady_clock::now() < deadline) {
      d = TockJson({"schedule", "describe", "-s", id});
      if (done(d)) return d;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "schedule " << id << " never got there: " << d.dump();
    return d;
  }
};

int64_t Int(const json& v) {
  if (v.is_string()) return std::stoll(v.get<std::string>());
  return v.is_number() ? v.get<int64_t>() : 0;
}

TEST_F(ScheduleCliTest, BadInputIsRefusedWithExactMessages) {
  // Checked by tock before anything is sent.
  ExpectError(Create("s1", {}), kExitUsage,
              "a schedule needs a spec: give --cron, --interval or --calendar (e.g. --cron \"0 12 * * *\")");
  ExpectError(Create("s1", {"--interval", "often"}), kExitUsage,
              "invalid --interval \"often\": a duration is like 90s, 15m, 1h30m or 2d");
  ExpectError(Create("s1", {"--cron", "@daily", "--overlap-policy", "Sometimes"}), kExitUsage,
              "invalid --overlap-policy \"Sometimes\": choose one of Skip, BufferOne, BufferAll, "
              "CancelOther, TerminateOther, AllowAll");
  ExpectError(Create("s1", {"--cron", "@daily", "--remaining-actions", "0"}), kExitUsage,
              "invalid --remaining-actions \"0\": give a positive number of actions");
  ExpectError(Create("s1", {"--cron", "@daily", "--input", "{not json"}), kExitUsage,
              "invalid --input \"{not json\": not JSON (quote strings: '\"text\"')");
  ExpectError(Create("s1", {"--calendar", "[1]"}), kExitUsage,
              "invalid --calendar \"[1]\": give a CalendarSpec as JSON, e.g. {\"hour\": \"9\", "
              "\"dayOfWeek\": \"MON-FRI\"}");
  // Refused by the server, in Temporal's words.
  ExpectError(Create("s1", {"--cron", "61 * * * *"}), kExitUsage,
              "Invalid schedule spec: Minute is not in range [0-59]");
  ExpectError(Create("s1", {"--cron", "* * *"}), kExitUsage,
              "Invalid schedule spec: CronString does not have 5-7 fields");
  ExpectError(Create("s1", {"--cron", "0 9 * * *", "--time-zone", "Mars/Base"}), kExitUsage,
              "Invalid schedule spec: unknown time zone Mars/Base");
  ExpectError(Create("s1", {"--interval", "1h/2h"}), kExitUsage,
              "Invalid schedule spec: phase cannot be greater than Interval");
  ExpectError(Create("s1", {"--calendar", "{\"hour\": \"25\"}"}), kExitUsage,
              "Invalid schedule spec: Hour is not in range [0-23]");
  ExpectError({"schedule", "describe", "-s", "nope"}, kExitNotFound, "schedule not found");
  ExpectError({"schedule", "delete", "-s", "nope"}, kExitNotFound, "schedule not found");
  ExpectError({"schedule", "toggle", "-s", "nope", "--pause"}, kExitNotFound, "schedule not found");
  ExpectError({"schedule", "toggle", "-s", "nope"}, kExitUsage, "give --pause or --unpause");
  ExpectError({"schedule", "backfill", "-s", "nope", "--start-time", "2026-01-02T00:00:00Z",
               "--end-time", "2026-01-01T00:00:00Z"},
              kExitUsage, "--end-time is before --start-time");
  ProcessResult r = Tock({"schedule", "describe"});
  EXPECT_EQ(r.exit_code, kExitUsage) << r.err;
}

TEST_F(ScheduleCliTest, ALifeCreatedDescribedPausedTriggeredBackfilledUpdatedDeleted) {
  ProcessResult r = Tock(Create("nightly", {"--cron", "0 2 * * *", "--time-zone", "Europe/Paris",
                                            "--input", "{\"full\":true}", "-o", "json"}));
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(json::parse(r.out), (json{{"scheduleId", "nightly"}, {"result", "created"}}));
  ExpectError(Create("nightly", {"--cron", "0 2 * * *"}), kExitConflict,
              "schedule \"nightly\" is already registered");

  json d = TockJson({"schedule", "describe", "-s", "nightly"});
  EXPECT_EQ(At(d, "/schedule/spec/timezoneName"), "Europe/Paris");
  EXPECT_EQ(At(d, "/schedule/spec/structuredCalendar/0/hour/0/start"), 2);
  EXPECT_EQ(At(d, "/schedule/policies/overlapPolicy"), "SCHEDULE_OVERLAP_POLICY_SKIP");
  EXPECT_EQ(At(d, "/schedule/action/startWorkflow/input"), json({{"full", true}}))
      << "payloads shown decoded";
  ASSERT_EQ(At(d, "/info/futureActionTimes").size(), 10u);
  // 02:00 in Paris is 01:00 or 00:00 UTC.
  const std::string first = At(d, "/info/futureActionTimes/0").get<std::string>();
  EXPECT_TRUE(first.find("T01:00:00Z") != std::string::npos || first.find("T00:00:00Z") != std::string::npos)
      << first;

  // The card on a table format.
  r = Tock({"schedule", "describe", "-s", "nightly", "-o", "card"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("calendar 0 0 2 1-31 1-12 0-6 * | tz Europe/Paris"), std::string::npos) << r.out;

  r = Tock({"schedule", "toggle", "-s", "nightly", "--pause", "--reason", "db work"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  d = TockJson({"schedule", "describe", "-s", "nightly"});
  EXPECT_EQ(At(d, "/schedule/state/paused"), true);
  EXPECT_EQ(At(d, "/schedule/state/notes"), "db work");

  // A trigger starts a run now, also when paused.
  r = Tock({"schedule", "trigger", "-s", "nightly"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  d = WaitFor("nightly", [](const json& x) { return Int(At(x, "/info/actionCount")) == 1; });
  const std::string run = At(d, "/info/recentActions/0/startWorkflowResult/workflowId").get<std::string>();
  EXPECT_EQ(run.rfind("nightly-wf-", 0), 0u) << run;
  json wf = TockJson({"workflow", "describe", "--workflow-id", run});
  EXPECT_EQ(At(wf, "/workflowExecutionInfo/type/name"), "report");

  // A backfill of three days at 02:00 in Paris: three runs.
  r = Tock({"schedule", "backfill", "-s", "nightly", "--start-time", "2026-01-01T00:00:00Z",
            "--end-time", "2026-01-03T23:59:59Z", "--overlap-policy", "AllowAll"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  d = WaitFor("nightly", [](const json& x) { return Int(At(x, "/info/actionCount")) == 4; });

  // List: one row; JSON lines with the entry.
  std::vector<json> listed = TockJsonLines({"schedule", "list"});
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(At(listed[0], "/scheduleId"), "nightly");
  EXPECT_EQ(At(listed[0], "/info/workflowType/name"), "report");
  EXPECT_EQ(At(listed[0], "/info/paused"), true);

  EXPECT_EQ(TockJsonLines({"schedule", "list", "--query", "TemporalSchedulePaused = false"}).size(), 0u);
  EXPECT_EQ(TockJsonLines({"schedule", "list", "--query", "ScheduleId STARTS_WITH 'night'"}).size(), 1u);
  ExpectError({"schedule", "list", "--query", "Owner = 'me'"}, kExitUsage,
              "invalid query: unknown field Owner (schedules are listed by ScheduleId, WorkflowType "
              "or TemporalSchedulePaused)");

  // Update replaces the whole schedule.
  r = Tock({"schedule", "update", "-s", "nightly", "-w", "hourly", "--type", "report2", "-t", "q",
            "--interval", "1h/15m"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  d = TockJson({"schedule", "describe", "-s", "nightly"});
  EXPECT_EQ(At(d, "/schedule/spec/interval/0/interval"), "3600s");
  EXPECT_EQ(At(d, "/schedule/spec/interval/0/phase"), "900s");
  EXPECT_EQ(At(d, "/schedule/state/paused"), false) << "the state is replaced too";
  EXPECT_EQ(At(d, "/schedule/action/startWorkflow/workflowType/name"), "report2");

  r = Tock({"schedule", "delete", "-s", "nightly"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  ExpectError({"schedule", "describe", "-s", "nightly"}, kExitNotFound, "schedule not found");
  r = Tock({"schedule", "list"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
}

// `tock __complete` (what the shell scripts run): the subcommands, the overlap policies, and
// the live schedule ids of the namespace on the line (paused ones say so); a new id (create)
// is not completed.
TEST_F(ScheduleCliTest, CompletionOffersTheNamespacesScheduleIds) {
  for (const char* id : {"nightly", "hourly"}) {
    ProcessResult r = Tock(Create(id, {"--cron", "@daily"}));
    ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  }
  ASSERT_EQ(Tock({"schedule", "toggle", "-s", "nightly", "--pause"}).exit_code, kExitOk);
  Register({"other"});
  auto complete = [&](std::vector<std::string> words) {
    words.insert(words.begin(), "__complete");
    ProcessResult r = Tock(words);
    EXPECT_EQ(r.exit_code, kExitOk) << Describe(words, r);
    EXPECT_EQ(r.err, "") << Describe(words, r);
    return r.out;
  };
  EXPECT_EQ(complete({"schedule", "describe", "--schedule-id", ""}), "hourly\treport\nnightly\tpaused\n");
  EXPECT_EQ(complete({"schedule", "trigger", "-s", "ni"}), "nightly\tpaused\n");
  EXPECT_EQ(complete({"-n", "other", "schedule", "delete", "-s", ""}), "");
  EXPECT_EQ(complete({"schedule", "create", "-s", ""}), "");
  const std::string subcommands = complete({"schedule", "t"});
  EXPECT_NE(subcommands.find("toggle\t"), std::string::npos) << subcommands;
  EXPECT_NE(subcommands.find("trigger\t"), std::string::npos) << subcommands;
}

}  // namespace
}  // namespace tock::testing
