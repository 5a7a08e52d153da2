// A run's history as a timeline, without payloads: what a Gantt view draws, small even for
// a history of 50,000 events (GET /tock/v1/namespaces/{namespace}/workflows/{id}/summary).
// The spans are lib/admin/history_spans.h's (the history inspector's timeline too):
//
//   {"start": TIME, "end": TIME (when closed), "status": "RUNNING" | "COMPLETED" | ...,
//    "events": N,
//    "spans": [{"kind": "activity" | "timer" | "child" | "update", "id", "name",
//               "eventId" (the span's first event), "start", "started" (activities and
//               children), "end" (none while open), "status", "attempt" (activities),
//               "failure" (the last one's message, at most 200 bytes)}...],  // as they began
//    "points": [{"kind": "signal", "name", "eventId", "time"}...]}
#pragma once

#include "lib/admin/history_spans.h"
#include "nlohmann/json.hpp"

namespace tock::server::http_api {

nlohmann::ordered_json SummaryJson(const admin::HistorySpans& spans);

}  // namespace tock::server::http_api
