// A run's history as a timeline, without payloads: what a Gantt view draws, small even for
// a history of 50,000 events (GET /tock/v1/namespaces/{namespace}/workflows/{id}/summary).
//
//   {"start": TIME, "end": TIME (when closed), "status": "COMPLETED" | "RUNNING" | ...,
//    "events": N,
//    "spans": [{"kind": "activity" | "timer" | "child" | "update", "id", "name",
//               "eventId" (the span's first event), "start", "started" (activities and
//               children), "end", "status", "attempt" (activities), "failure" (the last
//               one's message, at most 200 bytes)}...],   // in the order they began
//    "points": [{"kind": "signal", "name", "eventId", "time"}...]}
//
// status: activity SCHEDULED, STARTED, COMPLETED, FAILED, TIMED_OUT, CANCELED; timer
// STARTED, FIRED, CANCELED; child INITIATED, STARTED, COMPLETED, FAILED, CANCELED,
// TIMED_OUT, TERMINATED, START_FAILED; update ACCEPTED, COMPLETED. A span whose run closed
// while it was open has no end.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "nlohmann/json.hpp"
#include "temporal/api/history/v1/message.pb.h"

namespace tock::server::http_api {

// Fed the run's events in order, page by page (no page is kept).
class HistorySummary {
 public:
  HistorySummary();
  void Add(const temporal::api::history::v1::HistoryEvent& event);
  // The summary of the events added.
  nlohmann::ordered_json Take();

 private:
  using Json = nlohmann::ordered_json;
  // The span begun by event `first`, or null when the history does not hold it.
  Json* Find(int64_t first);
  void Open(const temporal::api::history::v1::HistoryEvent& e, const char* kind,
             const std::string& id, const std::string& name, const char* status);
  Json* Close(int64_t first, const temporal::api::history::v1::HistoryEvent& e, const char* status);

  Json summary_;
  Json spans_ = Json::array();         // in the order they began
  std::map<int64_t, size_t> span_at_;  // first event id -> index in spans_
  Json points_ = Json::array();
  int64_t events_ = 0;
};

}  // namespace tock::server::http_api
