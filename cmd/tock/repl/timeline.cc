#include "cmd/tock/repl/timeline.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/admin/history_spans.h"
#include "lib/common/duration.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::cli::repl {
namespace {

using temporal::api::history::v1::HistoryEvent;

std::string Seconds(absl::Duration d) { return absl::StrFormat("%.3fs", absl::ToDoubleSeconds(d)); }

}  // namespace

std::vector<TimelineRow> BuildTimeline(const std::vector<HistoryEvent>& events) {
  admin::HistorySpans spans;
  for (const HistoryEvent& e : events) spans.Add(e);
  // The statuses as this view has always shown them.
  static const std::map<std::string, std::string> kOutcome = {
      {"COMPLETED", "Completed"},   {"FAILED", "Failed"},
      {"TIMED_OUT", "TimedOut"},    {"CANCELED", "Canceled"},
      {"TERMINATED", "Terminated"}, {"CONTINUED_AS_NEW", "ContinuedAsNew"},
      {"FIRED", "Fired"},           {"START_FAILED", "StartFailed"}};
  std::vector<TimelineRow> rows;
  for (const admin::HistorySpan& span : spans.spans()) {
    TimelineRow row;
    switch (span.kind) {
      case admin::HistorySpan::Kind::kWorkflow:
        row.kind = "workflow";
        row.name = span.name;
        break;
      case admin::HistorySpan::Kind::kActivity:
        row.kind = "activity";
        row.name = absl::StrCat(span.name, " #", span.id);
        row.attempts = span.attempt;
        break;
      case admin::HistorySpan::Kind::kTimer:
        row.kind = "timer";
        row.name = absl::StrCat(span.id, " (", FormatHumanDuration(span.timer), ")");
        break;
      case admin::HistorySpan::Kind::kChild:
        row.kind = "child";
        row.name = absl::StrCat(span.name, " ", span.id);
        break;
      case admin::HistorySpan::Kind::kUpdate:
        continue;  // not a row of this view
    }
    row.start = span.start;
    row.open = !span.end.has_value();
    row.end = span.end.value_or(spans.last_event_time());
    auto outcome = kOutcome.find(span.status);
    row.outcome = row.open || outcome == kOutcome.end() ? "Running" : outcome->second;
    rows.push_back(std::move(row));
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
