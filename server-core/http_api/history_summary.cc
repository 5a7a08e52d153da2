#include "server-core/http_api/history_summary.h"

#include <map>
#include <string>

#include "absl/time/time.h"
#include "lib/common/time_format.h"

namespace tock::server::http_api {
namespace {

namespace history = temporal::api::history::v1;
namespace enums = temporal::api::enums::v1;
using Json = nlohmann::ordered_json;

constexpr size_t kMaxFailure = 200;

// RFC 3339 in UTC with the event's full precision, as the events' own JSON has it.
std::string Time(const history::HistoryEvent& e) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", FromProtoTime(e.event_time()),
                          absl::UTCTimeZone());
}

// The failure's message, cut at kMaxFailure bytes (never inside a character).
std::string FailureText(const temporal::api::failure::v1::Failure& failure) {
  const std::string& message = failure.message();
  if (message.size() <= kMaxFailure) return message;
  size_t cut = kMaxFailure;  // message[cut] is the first byte left out
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
  return message.substr(0, cut);
}

const char* ClosedStatus(enums::EventType type) {
  switch (type) {
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
      return "COMPLETED";
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
      return "FAILED";
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
      return "TIMED_OUT";
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
      return "CANCELED";
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
      return "TERMINATED";
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
      return "CONTINUED_AS_NEW";
    default:
      return nullptr;
  }
}

}  // namespace

HistorySummary::HistorySummary() { summary_["status"] = "RUNNING"; }

void HistorySummary::Open(const history::HistoryEvent& e, const char* kind, const std::string& id,
                          const std::string& name, const char* status) {
  Json span;
  span["kind"] = kind;
  span["id"] = id;
  span["name"] = name;
  span["eventId"] = e.event_id();
  span["start"] = Time(e);
  span["status"] = status;
  span_at_[e.event_id()] = spans_.size();
  spans_.push_back(std::move(span));
}

HistorySummary::Json* HistorySummary::Find(int64_t first) {
  auto it = span_at_.find(first);
  return it == span_at_.end() ? nullptr : &spans_[it->second];
}

HistorySummary::Json* HistorySummary::Close(int64_t first, const history::HistoryEvent& e,
                                            const char* status) {
  Json* span = Find(first);
  if (span == nullptr) return nullptr;
  (*span)["end"] = Time(e);
  (*span)["status"] = status;
  return span;
}

nlohmann::ordered_json HistorySummary::Take() {
  Json out = std::move(summary_);
  out["events"] = events_;
  out["spans"] = std::move(spans_);
  out["points"] = std::move(points_);
  return out;
}

void HistorySummary::Add(const history::HistoryEvent& e) {
  ++events_;
  if (e.event_id() == 1) summary_["start"] = Time(e);
  if (const char* closed = ClosedStatus(e.event_type())) {
    summary_["end"] = Time(e);
    summary_["status"] = closed;
  }
  switch (e.event_type()) {
    case enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
      const auto& a = e.activity_task_scheduled_event_attributes();
      Open(e, "activity", a.activity_id(), a.activity_type().name(), "SCHEDULED");
      break;
    }
    case enums::EVENT_TYPE_ACTIVITY_TASK_STARTED: {
      const auto& a = e.activity_task_started_event_attributes();
      if (Json* span = Find(a.scheduled_event_id())) {
        (*span)["started"] = Time(e);
        (*span)["status"] = "STARTED";
        (*span)["attempt"] = a.attempt();
        if (a.has_last_failure()) (*span)["failure"] = FailureText(a.last_failure());
      }
      break;
    }
    case enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
      Close(e.activity_task_completed_event_attributes().scheduled_event_id(), e, "COMPLETED");
      break;
    case enums::EVENT_TYPE_ACTIVITY_TASK_FAILED: {
      const auto& a = e.activity_task_failed_event_attributes();
      if (Json* span = Close(a.scheduled_event_id(), e, "FAILED")) {
        (*span)["failure"] = FailureText(a.failure());
      }
      break;
    }
    case enums::EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: {
      const auto& a = e.activity_task_timed_out_event_attributes();
      if (Json* span = Close(a.scheduled_event_id(), e, "TIMED_OUT")) {
        (*span)["failure"] = FailureText(a.failure());
      }
      break;
    }
    case enums::EVENT_TYPE_ACTIVITY_TASK_CANCELED:
      Close(e.activity_task_canceled_event_attributes().scheduled_event_id(), e, "CANCELED");
      break;
    case enums::EVENT_TYPE_TIMER_STARTED: {
      const auto& a = e.timer_started_event_attributes();
      Open(e, "timer", a.timer_id(), "", "STARTED");
      break;
    }
    case enums::EVENT_TYPE_TIMER_FIRED:
      Close(e.timer_fired_event_attributes().started_event_id(), e, "FIRED");
      break;
    case enums::EVENT_TYPE_TIMER_CANCELED:
      Close(e.timer_canceled_event_attributes().started_event_id(), e, "CANCELED");
      break;
    case enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED: {
      const auto& a = e.start_child_workflow_execution_initiated_event_attributes();
      Open(e, "child", a.workflow_id(), a.workflow_type().name(), "INITIATED");
      break;
    }
    case enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED:
      Close(e.start_child_workflow_execution_failed_event_attributes().initiated_event_id(), e,
            "START_FAILED");
      break;
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED: {
      const auto& a = e.child_workflow_execution_started_event_attributes();
      if (Json* span = Find(a.initiated_event_id())) {
        (*span)["started"] = Time(e);
        (*span)["status"] = "STARTED";
        (*span)["runId"] = a.workflow_execution().run_id();
      }
      break;
    }
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
      Close(e.child_workflow_execution_completed_event_attributes().initiated_event_id(), e,
            "COMPLETED");
      break;
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED: {
      const auto& a = e.child_workflow_execution_failed_event_attributes();
      if (Json* span = Close(a.initiated_event_id(), e, "FAILED")) {
        (*span)["failure"] = FailureText(a.failure());
      }
      break;
    }
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED:
      Close(e.child_workflow_execution_canceled_event_attributes().initiated_event_id(), e,
            "CANCELED");
      break;
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT:
      Close(e.child_workflow_execution_timed_out_event_attributes().initiated_event_id(), e,
            "TIMED_OUT");
      break;
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED:
      Close(e.child_workflow_execution_terminated_event_attributes().initiated_event_id(), e,
            "TERMINATED");
      break;
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED: {
      const auto& a = e.workflow_execution_update_accepted_event_attributes();
      Open(e, "update", a.protocol_instance_id(), a.accepted_request().input().name(), "ACCEPTED");
      break;
    }
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED: {
      const auto& a = e.workflow_execution_update_completed_event_attributes();
      if (Json* span = Close(a.accepted_event_id(), e, "COMPLETED");
          span != nullptr && a.outcome().has_failure()) {
        (*span)["failure"] = FailureText(a.outcome().failure());
      }
      break;
    }
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
      points_.push_back(
          Json{{"kind", "signal"},
               {"name", e.workflow_execution_signaled_event_attributes().signal_name()},
               {"eventId", e.event_id()},
               {"time", Time(e)}});
      break;
    default:
      break;
  }
}

}  // namespace tock::server::http_api
