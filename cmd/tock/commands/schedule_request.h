// The pure half of `tock schedule`: flags to a Schedule (spec, action, policies, state) and
// to the patches of toggle, trigger and backfill; schedules as an operator reads them (the
// describe card, list rows). No server call, no printing; tested without a server
// (tests/cli/schedule_request_test.cc). The server checks the spec itself (cron strings,
// calendars, time zones) and answers "Invalid schedule spec: ..." for a bad one.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cmd/tock/output/printer.h"
#include "temporal/api/schedule/v1/message.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::cli {

// The flags of `tock schedule create|update`.
struct ScheduleFlags {
  std::string schedule_id;
  // Spec.
  std::vector<std::string> cron;       // cron strings (5-7 fields, @daily, @every 1h)
  std::vector<std::string> intervals;  // "1h" or "1h/15m" (every/phase)
  std::vector<std::string> calendars;  // CalendarSpec JSON: {"hour": "9", "dayOfWeek": "1-5"}
  std::string time_zone;
  std::string jitter;
  std::string start_time, end_time;
  // Action.
  std::string workflow_id;
  std::string workflow_type;
  std::string task_queue;
  std::vector<std::string> inputs;  // one JSON value per argument
  std::string execution_timeout, run_timeout, task_timeout;
  std::vector<std::string> memo;    // KEY=JSON
  // Policies and state.
  std::string overlap_policy;   // Skip, BufferOne, BufferAll, CancelOther, TerminateOther, AllowAll
  std::string catchup_window;
  bool pause_on_failure = false;
  std::string remaining_actions;  // empty: unlimited
  bool paused = false;
  std::string notes;
};

// "Skip", "BufferOne", ... (case-insensitive, also SCHEDULE_OVERLAP_POLICY_SKIP); "" is
// UNSPECIFIED. INVALID_ARGUMENT naming the choices otherwise.
absl::StatusOr<temporal::api::enums::v1::ScheduleOverlapPolicy> ParseOverlapPolicy(
    const std::string& text);
std::string OverlapPolicyLabel(temporal::api::enums::v1::ScheduleOverlapPolicy policy);

// The schedule of the flags. INVALID_ARGUMENT naming the flag: no spec (no --cron,
// --interval or --calendar), a bad duration, time or policy, an input or memo that is not
// JSON, a calendar that is not a CalendarSpec object.
absl::StatusOr<temporal::api::schedule::v1::Schedule> MakeSchedule(const ScheduleFlags& flags,
                                                                    absl::Time now);
// The memo of --memo KEY=JSON (empty when none).
absl::StatusOr<temporal::api::common::v1::Memo> MakeMemo(const std::vector<std::string>& memo);

// A backfill of [start, end] (RFC 3339 or "now"); INVALID_ARGUMENT when end is before start.
absl::StatusOr<temporal::api::schedule::v1::BackfillRequest> MakeBackfill(
    const std::string& start, const std::string& end, const std::string& overlap, absl::Time now);

// The card of `schedule describe`; the columns and a row of `schedule list`.
CardRows ScheduleCard(const std::string& schedule_id,
                      const temporal::api::workflowservice::v1::DescribeScheduleResponse& d);
std::vector<std::string> ScheduleColumns();
std::vector<std::string> ScheduleRow(const temporal::api::schedule::v1::ScheduleListEntry& e);
// A spec in one line: "cron 0 12 * * * | every 1h/15m | tz Europe/Paris".
std::string SpecText(const temporal::api::schedule::v1::ScheduleSpec& spec);

}  // namespace tock::cli
