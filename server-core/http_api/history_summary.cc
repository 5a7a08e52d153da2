#include "server-core/http_api/history_summary.h"

#include <string>

namespace tock::server::http_api {
namespace {

using Json = nlohmann::ordered_json;
using Kind = admin::HistorySpan::Kind;

// RFC 3339 in UTC with full precision, as the events' own JSON has them.
std::string Time(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", t, absl::UTCTimeZone());
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kActivity: return "activity";
    case Kind::kTimer: return "timer";
    case Kind::kChild: return "child";
    case Kind::kUpdate: return "update";
    case Kind::kWorkflow: break;
  }
  return "workflow";
}

}  // namespace

Json SummaryJson(const admin::HistorySpans& spans) {
  Json summary;
  summary["status"] = "RUNNING";
  Json list = Json::array();
  for (const admin::HistorySpan& span : spans.spans()) {
    if (span.kind == Kind::kWorkflow) {  // the run itself: the summary's own fields
      summary["start"] = Time(span.start);
      if (span.end.has_value()) summary["end"] = Time(*span.end);
      summary["status"] = span.status;
      continue;
    }
    Json s;
    s["kind"] = KindName(span.kind);
    s["id"] = span.id;
    s["name"] = span.name;
    s["eventId"] = span.event_id;
    s["start"] = Time(span.start);
    if (span.started.has_value()) s["started"] = Time(*span.started);
    if (span.end.has_value()) s["end"] = Time(*span.end);
    s["status"] = span.status;
    if (span.attempt > 0) s["attempt"] = span.attempt;
    if (!span.failure.empty()) s["failure"] = span.failure;
    list.push_back(std::move(s));
  }
  Json points = Json::array();
  for (const admin::HistoryPoint& p : spans.points()) {
    points.push_back(Json{{"kind", p.kind}, {"name", p.name}, {"eventId", p.event_id}, {"time", Time(p.time)}});
  }
  summary["events"] = spans.events();
  summary["spans"] = std::move(list);
  summary["points"] = std::move(points);
  return summary;
}

}  // namespace tock::server::http_api
