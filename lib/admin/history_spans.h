// A run's history as spans on a time axis (the run itself, activities, timers, child
// workflows, updates) and points (signals), computed from the events alone, so that it works
// on archived histories too. One model for the history inspector's `timeline` (tock shell)
// and the HTTP API's run summary (GET /tock/v1/.../summary).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "temporal/api/history/v1/message.pb.h"

namespace tock::admin {

struct HistorySpan {
  enum class Kind { kWorkflow, kActivity, kTimer, kChild, kUpdate };
  Kind kind = Kind::kWorkflow;
  std::string id;    // activity id, timer id, child workflow id, update id; "" for the run
  std::string name;  // the run's, an activity's or a child's type, an update's name; "" for timers
  int64_t event_id = 0;  // the span's first event
  absl::Time start;
  std::optional<absl::Time> started;  // activities and children: when the last attempt started
  std::optional<absl::Time> end;      // the closing event's time; none while open
  // RUNNING (the run, open), SCHEDULED, STARTED, COMPLETED, FAILED, TIMED_OUT, CANCELED,
  // TERMINATED, CONTINUED_AS_NEW, FIRED, INITIATED, START_FAILED, ACCEPTED.
  std::string status;
  int attempt = 0;       // activities: the attempt that started last (0: none started)
  std::string failure;   // the last failure's message, cut at kMaxFailureBytes
  absl::Duration timer;  // timers: how long they were set for
};

struct HistoryPoint {
  std::string kind;  // "signal"
  std::string name;
  int64_t event_id = 0;
  absl::Time time;
};

// Fed the run's events in order (page by page: no event is kept).
class HistorySpans {
 public:
  static constexpr size_t kMaxFailureBytes = 200;

  void Add(const temporal::api::history::v1::HistoryEvent& event);

  // In the order they began.
  const std::vector<HistorySpan>& spans() const { return spans_; }
  const std::vector<HistoryPoint>& points() const { return points_; }
  int64_t events() const { return events_; }
  // The last event's time (where an open span's bar ends); InfinitePast without events.
  absl::Time last_event_time() const { return last_; }

 private:
  void Open(const temporal::api::history::v1::HistoryEvent& e, HistorySpan::Kind kind,
            std::string id, std::string name, const char* status);
  HistorySpan* Find(int64_t first_event_id);
  HistorySpan* Close(int64_t first_event_id, const temporal::api::history::v1::HistoryEvent& e,
                     const char* status);

  std::vector<HistorySpan> spans_;
  std::map<int64_t, size_t> span_at_;  // first event id -> index in spans_
  std::vector<HistoryPoint> points_;
  int64_t events_ = 0;
  int64_t first_event_id_ = 0;  // the run's own span
  absl::Time last_ = absl::InfinitePast();
};

}  // namespace tock::admin
