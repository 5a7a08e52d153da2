#include "cmd/tock/repl/timeline.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/common/duration.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::cli::repl {
namespace {

namespace enums = temporal::api::enums::v1;
using temporal::api::history::v1::HistoryEvent;

std::string Seconds(absl::Duration d) { return absl::StrFormat("%.3fs", absl::ToDoubleSeconds(d)); }

}  // namespace

std::vector<TimelineRow> BuildTimeline(const std::vector<HistoryEvent>& events) {
  std::vector<TimelineRow> rows;
  if (events.empty()) return rows;
  const absl::Time last = FromProtoTime(events.back().event_time());
  std::map<int64_t, size_t> by_initiating_event;  // scheduled/started/initiated id -> row
  auto open_row = [&](const HistoryEvent& e, std::string kind, std::string name) {
    TimelineRow row;
    row.kind = std::move(kind);
    row.name = std::move(name);
    row.start = FromProtoTime(e.event_time());
    row.end = last;
    row.open = true;
    row.outcome = "Running";
    by_initiating_event[e.event_id()] = rows.size();
    rows.push_back(std::move(row));
  };
  auto close_row = [&](int64_t initiating_id, const HistoryEvent& e, std::string outcome) {
    auto it = by_initiating_event.find(initiating_id);
    if (it == by_initiating_event.end()) return;
    TimelineRow& row = rows[it->second];
    row.end = FromProtoTime(e.event_time());
    row.open = false;
    row.outcome = std::move(outcome);
  };
  for (const HistoryEvent& e : events) {
    switch (e.event_type()) {
      case enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
        open_row(e, "workflow",
                 e.workflow_execution_started_event_attributes().workflow_type().name());
        break;
      case enums::EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
      case enums::EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
      case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
      case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
      case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
      case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW: {
        static const std::map<int, std::string> kOutcome = {
            {enums::EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, "Completed"},
            {enums::EVENT_TYPE_WORKFLOW_EXECUTION_FAILED, "Failed"},
            {enums::EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, "TimedOut"},
            {enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, "Canceled"},
            {enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, "Terminated"},
            {enums::EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW, "ContinuedAsNew"}};
        close_row(events.front().event_id(), e, kOutcome.at(e.event_type()));
        break;
      }
      case enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const auto& a = e.activity_task_scheduled_event_attributes();
        open_row(e, "activity", absl::StrCat(a.activity_type().name(), " #", a.activity_id()));
        break;
      }
      case enums::EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const auto& a = e.activity_task_started_event_attributes();
        auto it = by_initiating_event.find(a.scheduled_event_id());
        if (it != by_initiating_event.end()) rows[it->second].attempts = std::max(1, a.attempt());
        break;
      }
      case enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        close_row(e.activity_task_completed_event_attributes().scheduled_event_id(), e,
                  "Completed");
        break;
      case enums::EVENT_TYPE_ACTIVITY_TASK_FAILED:
        close_row(e.activity_task_failed_event_attributes().scheduled_event_id(), e, "Failed");
        break;
      case enums::EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
        close_row(e.activity_task_timed_out_event_attributes().scheduled_event_id(), e, "TimedOut");
        break;
      case enums::EVENT_TYPE_ACTIVITY_TASK_CANCELED:
        close_row(e.activity_task_canceled_event_attributes().scheduled_event_id(), e, "Canceled");
        break;
      case enums::EVENT_TYPE_TIMER_STARTED: {
        const auto& t = e.timer_started_event_attributes();
        open_row(
            e, "timer",
            absl::StrCat(t.timer_id(), " (",
                         FormatHumanDuration(FromProtoDuration(t.start_to_fire_timeout())), ")"));
        break;
      }
      case enums::EVENT_TYPE_TIMER_FIRED:
        close_row(e.timer_fired_event_attributes().started_event_id(), e, "Fired");
        break;
      case enums::EVENT_TYPE_TIMER_CANCELED:
        close_row(e.timer_canceled_event_attributes().started_event_id(), e, "Canceled");
        break;
      case enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED: {
        const auto& c = e.start_child_workflow_execution_initiated_event_attributes();
        open_row(e, "child", absl::StrCat(c.workflow_type().name(), " ", c.workflow_id()));
        break;
      }
      case enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED:
        close_row(e.start_child_workflow_execution_failed_event_attributes().initiated_event_id(),
                  e, "StartFailed");
        break;
      case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
        close_row(e.child_workflow_execution_completed_event_attributes().initiated_event_id(), e,
                  "Completed");
        break;
      case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED:
        close_row(e.child_workflow_execution_failed_event_attributes().initiated_event_id(), e,
                  "Failed");
        break;
      case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED:
        close_row(e.child_workflow_execution_canceled_event_attributes().initiated_event_id(), e,
                  "Canceled");
        break;
      case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT:
        close_row(e.child_workflow_execution_timed_out_event_attributes().initiated_event_id(), e,
                  "TimedOut");
        break;
      case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED:
        close_row(e.child_workflow_execution_terminated_event_attributes().initiated_event_id(), e,
                  "Terminated");
        break;
      default:
        break;
    }
  }
  return rows;
}

std::string RenderTimeline(const std::vector<TimelineRow>& rows, int bar_width) {
  if (rows.empty()) return "(no events)\n";
  absl::Time begin = rows.front().start, end = rows.front().end;
  for (const TimelineRow& r : rows) {
    begin = std::min(begin, r.start);
    end = std::max(end, r.end);
  }
  const double span = std::max(absl::ToDoubleSeconds(end - begin), 1e-9);
  std::vector<std::vector<std::string>> cells = {
      {"KIND", "NAME", "START", "DURATION", "ATTEMPTS", "OUTCOME"}};
  for (const TimelineRow& r : rows) {
    cells.push_back({r.kind, r.name, "+" + Seconds(r.start - begin), Seconds(r.end - r.start),
                     r.attempts > 0 ? std::to_string(r.attempts) : "-", r.outcome});
  }
  std::vector<size_t> widths(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (size_t n = 0; n < cells.size(); ++n) {
    for (size_t i = 0; i < cells[n].size(); ++i) {
      out += cells[n][i] + std::string(widths[i] - cells[n][i].size() + 2, ' ');
    }
    if (n == 0) {
      out += "|" + std::string(bar_width, ' ') + "|\n";
      continue;
    }
    const TimelineRow& r = rows[n - 1];
    int from = static_cast<int>(absl::ToDoubleSeconds(r.start - begin) / span * bar_width);
    int to = static_cast<int>(absl::ToDoubleSeconds(r.end - begin) / span * bar_width + 0.999);
    from = std::clamp(from, 0, bar_width - 1);
    to = std::clamp(to, from + 1, bar_width);
    std::string bar(bar_width, ' ');
    for (int i = from; i < to; ++i) bar[i] = '=';
    if (r.open) bar[to - 1] = '>';
    out += "|" + bar + "|\n";
  }
  return out;
}

}  // namespace tock::cli::repl
