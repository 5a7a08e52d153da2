#include "cmd/tock/commands/schedule_request.h"

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tock/output/history_format.h"
#include "google/protobuf/util/json_util.h"
#include "lib/admin/payloads.h"
#include "lib/common/duration.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::cli {
namespace {

namespace enums = temporal::api::enums::v1;
namespace sched = temporal::api::schedule::v1;

struct PolicyName {
  const char* label;
  enums::ScheduleOverlapPolicy policy;
};
constexpr PolicyName kPolicies[] = {
    {"Skip", enums::SCHEDULE_OVERLAP_POLICY_SKIP},
    {"BufferOne", enums::SCHEDULE_OVERLAP_POLICY_BUFFER_ONE},
    {"BufferAll", enums::SCHEDULE_OVERLAP_POLICY_BUFFER_ALL},
    {"CancelOther", enums::SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER},
    {"TerminateOther", enums::SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER},
    {"AllowAll", enums::SCHEDULE_OVERLAP_POLICY_ALLOW_ALL},
};

absl::Status Bad(absl::string_view flag, absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("invalid ", flag, " \"", text, "\": ", why));
}

absl::StatusOr<google::protobuf::Duration> DurationFlag(absl::string_view flag,
                                                        const std::string& text) {
  absl::StatusOr<absl::Duration> d = ParseHumanDuration(text);
  if (!d.ok()) return Bad(flag, text, "a duration is like 90s, 15m, 1h30m or 2d");
  if (*d < absl::ZeroDuration()) return Bad(flag, text, "a duration must not be negative");
  return ToProtoDuration(*d);
}

absl::StatusOr<google::protobuf::Timestamp> TimeFlag(absl::string_view flag, const std::string& text,
                                                     absl::Time now) {
  absl::StatusOr<absl::Time> t = ParseTimestamp(text, now);
  if (!t.ok()) return Bad(flag, text, t.status().message());
  return ToProtoTime(*t);
}

std::string RangesText(const google::protobuf::RepeatedPtrField<sched::Range>& ranges,
                       bool empty_is_star) {
  if (ranges.empty()) return empty_is_star ? "*" : "-";
  std::vector<std::string> parts;
  for (const sched::Range& r : ranges) {
    const int end = r.end() < r.start() ? r.start() : r.end();
    std::string p = absl::StrCat(r.start());
    if (end != r.start()) absl::StrAppend(&p, "-", end);
    if (r.step() > 1) absl::StrAppend(&p, "/", r.step());
    parts.push_back(p);
  }
  return absl::StrJoin(parts, ",");
}

std::string CalendarText(const sched::StructuredCalendarSpec& c) {
  std::string out = absl::StrCat(RangesText(c.second(), false), " ", RangesText(c.minute(), false), " ",
                                 RangesText(c.hour(), false), " ", RangesText(c.day_of_month(), false),
                                 " ", RangesText(c.month(), false), " ",
                                 RangesText(c.day_of_week(), false), " ", RangesText(c.year(), true));
  if (!c.comment().empty()) absl::StrAppend(&out, " # ", c.comment());
  return out;
}

}  // namespace

absl::StatusOr<enums::ScheduleOverlapPolicy> ParseOverlapPolicy(const std::string& text) {
  if (text.empty()) return enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED;
  const std::string lower = absl::AsciiStrToLower(text);
  std::vector<std::string> labels;
  for (const PolicyName& p : kPolicies) {
    labels.push_back(p.label);
    if (lower == absl::AsciiStrToLower(p.label) ||
        lower == absl::AsciiStrToLower(enums::ScheduleOverlapPolicy_Name(p.policy))) {
      return p.policy;
    }
  }
  return Bad("--overlap-policy", text, absl::StrCat("choose one of ", absl::StrJoin(labels, ", ")));
}

std::string OverlapPolicyLabel(enums::ScheduleOverlapPolicy policy) {
  for (const PolicyName& p : kPolicies) {
    if (p.policy == policy) return p.label;
  }
  return "Skip";
}

absl::StatusOr<temporal::api::common::v1::Memo> MakeMemo(const std::vector<std::string>& memo) {
  temporal::api::common::v1::Memo out;
  for (const std::string& kv : memo) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return Bad("--memo", kv, "write KEY=JSON");
    absl::StatusOr<temporal::api::common::v1::Payload> p = admin::JsonPayload(kv.substr(eq + 1));
    if (!p.ok()) return Bad("--memo", kv, "the value is not JSON");
    (*out.mutable_fields())[kv.substr(0, eq)] = *std::move(p);
  }
  return out;
}

absl::StatusOr<sched::Schedule> MakeSchedule(const ScheduleFlags& f, absl::Time now) {
  sched::Schedule s;
  auto* spec = s.mutable_spec();
  if (f.cron.empty() && f.intervals.empty() && f.calendars.empty()) {
    return absl::InvalidArgumentError(
        "a schedule needs a spec: give --cron, --interval or --calendar (e.g. --cron \"0 12 * * *\")");
  }
  for (const std::string& c : f.cron) spec->add_cron_string(c);
  for (const std::string& iv : f.intervals) {
    const size_t slash = iv.find('/');
    auto* out = spec->add_interval();
    absl::StatusOr<google::protobuf::Duration> every = DurationFlag("--interval", iv.substr(0, slash));
    if (!every.ok()) return every.status();
    *out->mutable_interval() = *every;
    if (slash != std::string::npos) {
      absl::StatusOr<google::protobuf::Duration> phase = DurationFlag("--interval", iv.substr(slash + 1));
      if (!phase.ok()) return phase.status();
      *out->mutable_phase() = *phase;
    }
  }
  for (const std::string& c : f.calendars) {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    if (!google::protobuf::util::JsonStringToMessage(c, spec->add_calendar(), options).ok()) {
      return Bad("--calendar", c,
                 "give a CalendarSpec as JSON, e.g. {\"hour\": \"9\", \"dayOfWeek\": \"MON-FRI\"}");
    }
  }
  spec->set_timezone_name(f.time_zone);
  if (!f.jitter.empty()) {
    absl::StatusOr<google::protobuf::Duration> j = DurationFlag("--jitter", f.jitter);
    if (!j.ok()) return j.status();
    *spec->mutable_jitter() = *j;
  }
  if (!f.start_time.empty()) {
    absl::StatusOr<google::protobuf::Timestamp> t = TimeFlag("--start-time", f.start_time, now);
    if (!t.ok()) return t.status();
    *spec->mutable_start_time() = *t;
  }
  if (!f.end_time.empty()) {
    absl::StatusOr<google::protobuf::Timestamp> t = TimeFlag("--end-time", f.end_time, now);
    if (!t.ok()) return t.status();
    *spec->mutable_end_time() = *t;
  }

  auto* start = s.mutable_action()->mutable_start_workflow();
  start->set_workflow_id(f.workflow_id);
  start->mutable_workflow_type()->set_name(f.workflow_type);
  start->mutable_task_queue()->set_name(f.task_queue);
  for (const std::string& in : f.inputs) {
    absl::StatusOr<temporal::api::common::v1::Payload> p = admin::JsonPayload(in);
    if (!p.ok()) return Bad("--input", in, "not JSON (quote strings: '\"text\"')");
    *start->mutable_input()->add_payloads() = *std::move(p);
  }
  auto timeout = [](absl::string_view flag, const std::string& text,
                    google::protobuf::Duration* (temporal::api::workflow::v1::NewWorkflowExecutionInfo::*field)(),
                    temporal::api::workflow::v1::NewWorkflowExecutionInfo* info) -> absl::Status {
    if (text.empty()) return absl::OkStatus();
    absl::StatusOr<google::protobuf::Duration> d = DurationFlag(flag, text);
    if (!d.ok()) return d.status();
    *(info->*field)() = *d;
    return absl::OkStatus();
  };
  using Info = temporal::api::workflow::v1::NewWorkflowExecutionInfo;
  for (absl::Status st : {timeout("--execution-timeout", f.execution_timeout, &Info::mutable_workflow_execution_timeout, start),
                          timeout("--run-timeout", f.run_timeout, &Info::mutable_workflow_run_timeout, start),
                          timeout("--task-timeout", f.task_timeout, &Info::mutable_workflow_task_timeout, start)}) {
    if (!st.ok()) return st;
  }
  absl::StatusOr<temporal::api::common::v1::Memo> memo = MakeMemo(f.memo);
  if (!memo.ok()) return memo.status();
  if (!memo->fields().empty()) *start->mutable_memo() = *memo;

  auto* policies = s.mutable_policies();
  absl::StatusOr<enums::ScheduleOverlapPolicy> overlap = ParseOverlapPolicy(f.overlap_policy);
  if (!overlap.ok()) return overlap.status();
  policies->set_overlap_policy(*overlap);
  if (!f.catchup_window.empty()) {
    absl::StatusOr<google::protobuf::Duration> w = DurationFlag("--catchup-window", f.catchup_window);
    if (!w.ok()) return w.status();
    *policies->mutable_catchup_window() = *w;
  }
  policies->set_pause_on_failure(f.pause_on_failure);

  auto* state = s.mutable_state();
  state->set_paused(f.paused);
  state->set_notes(f.notes);
  if (!f.remaining_actions.empty()) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(f.remaining_actions, &n) || n <= 0) {
      return Bad("--remaining-actions", f.remaining_actions, "give a positive number of actions");
    }
    state->set_limited_actions(true);
    state->set_remaining_actions(n);
  }
  return s;
}

absl::StatusOr<sched::BackfillRequest> MakeBackfill(const std::string& start, const std::string& end,
                                                    const std::string& overlap, absl::Time now) {
  sched::BackfillRequest b;
  absl::StatusOr<google::protobuf::Timestamp> s = TimeFlag("--start-time", start, now);
  if (!s.ok()) return s.status();
  absl::StatusOr<google::protobuf::Timestamp> e = TimeFlag("--end-time", end, now);
  if (!e.ok()) return e.status();
  if (FromProtoTime(*e) < FromProtoTime(*s)) {
    return absl::InvalidArgumentError("--end-time is before --start-time");
  }
  absl::StatusOr<enums::ScheduleOverlapPolicy> p = ParseOverlapPolicy(overlap);
  if (!p.ok()) return p.status();
  *b.mutable_start_time() = *s;
  *b.mutable_end_time() = *e;
  b.set_overlap_policy(*p);
  return b;
}

std::string SpecText(const sched::ScheduleSpec& spec) {
  std::vector<std::string> parts;
  for (const auto& c : spec.structured_calendar()) parts.push_back(absl::StrCat("calendar ", CalendarText(c)));
  for (const std::string& c : spec.cron_string()) parts.push_back(absl::StrCat("cron ", c));
  for (const auto& iv : spec.interval()) {
    std::string p = absl::StrCat("every ", FormatHumanDuration(FromProtoDuration(iv.interval())));
    if (FromProtoDuration(iv.phase()) > absl::ZeroDuration()) {
      absl::StrAppend(&p, "/", FormatHumanDuration(FromProtoDuration(iv.phase())));
    }
    parts.push_back(p);
  }
  for (const auto& c : spec.exclude_structured_calendar()) {
    parts.push_back(absl::StrCat("except ", CalendarText(c)));
  }
  if (!spec.timezone_name().empty()) parts.push_back(absl::StrCat("tz ", spec.timezone_name()));
  if (spec.has_jitter()) parts.push_back(absl::StrCat("jitter ", FormatHumanDuration(FromProtoDuration(spec.jitter()))));
  return absl::StrJoin(parts, " | ");
}

CardRows ScheduleCard(const std::string& schedule_id,
                      const temporal::api::workflowservice::v1::DescribeScheduleResponse& d) {
  const auto& s = d.schedule();
  const auto& start = s.action().start_workflow();
  CardRows card = {
      {"Schedule id", schedule_id},
      {"Spec", SpecText(s.spec())},
      {"Workflow type", start.workflow_type().name()},
      {"Workflow id", start.workflow_id()},
      {"Task queue", start.task_queue().name()},
      {"Overlap policy", OverlapPolicyLabel(s.policies().overlap_policy())},
      {"Catch-up window", FormatHumanDuration(FromProtoDuration(s.policies().catchup_window()))},
      {"Pause on failure", s.policies().pause_on_failure() ? "yes" : "no"},
      {"Paused", s.state().paused() ? "yes" : "no"},
  };
  if (!s.state().notes().empty()) card.emplace_back("Notes", s.state().notes());
  if (s.state().limited_actions()) {
    card.emplace_back("Remaining actions", std::to_string(s.state().remaining_actions()));
  }
  const auto& info = d.info();
  card.emplace_back("Actions taken", std::to_string(info.action_count()));
  card.emplace_back("Skipped (overlap)", std::to_string(info.overlap_skipped()));
  card.emplace_back("Missed (catch-up)", std::to_string(info.missed_catchup_window()));
  card.emplace_back("Running", std::to_string(info.running_workflows_size()));
  std::vector<std::string> recent;
  for (const auto& a : info.recent_actions()) recent.push_back(a.start_workflow_result().workflow_id());
  card.emplace_back("Recent actions", recent.empty() ? "-" : absl::StrJoin(recent, ", "));
  std::vector<std::string> next;
  for (const auto& t : info.future_action_times()) next.push_back(TimestampText(t));
  card.emplace_back("Next actions", next.empty() ? "-" : absl::StrJoin(next, ", "));
  card.emplace_back("Created", TimestampText(info.create_time()));
  if (info.has_update_time()) card.emplace_back("Updated", TimestampText(info.update_time()));
  return card;
}

std::vector<std::string> ScheduleColumns() { return {"SCHEDULE ID", "WORKFLOW TYPE", "PAUSED", "NEXT ACTION", "SPEC"}; }

std::vector<std::string> ScheduleRow(const sched::ScheduleListEntry& e) {
  const auto& info = e.info();
  return {e.schedule_id(), info.workflow_type().name(), info.paused() ? "yes" : "no",
          info.future_action_times().empty() ? "-" : TimestampText(info.future_action_times(0)),
          SpecText(info.spec())};
}

}  // namespace tock::cli
