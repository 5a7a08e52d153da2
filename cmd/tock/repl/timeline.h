// The text waterfall of `timeline` in the history inspector: one row per activity, timer and
// child workflow (and the run itself), placed on a common time axis, with durations and
// attempts, computed from the events alone (so it works on archived histories too).
#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "temporal/api/history/v1/message.pb.h"

namespace tock::cli::repl {

struct TimelineRow {
  std::string kind;  // workflow, activity, timer, child
  std::string name;  // activity type and id, timer id and duration, child type and id
  absl::Time start;
  absl::Time end;       // the closing event's time; for an open item, the last event's
  bool open = false;    // still running when the history was read
  int attempts = 0;     // activities: the attempt that started last; 0 for the others
  std::string outcome;  // Completed, Failed, TimedOut, Canceled, Fired, ... or Running
};

std::vector<TimelineRow> BuildTimeline(
    const std::vector<temporal::api::history::v1::HistoryEvent>& events);

// Aligned columns (KIND NAME START DURATION ATTEMPTS OUTCOME) and a bar of `bar_width`
// characters per row: '=' while the item ran, '>' at the end of one still open.
std::string RenderTimeline(const std::vector<TimelineRow>& rows, int bar_width = 40);

}  // namespace tock::cli::repl
