#include "lib/admin/history_spans.h"

#include <algorithm>
#include <utility>

#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::admin {
namespace {

namespace history = temporal::api::history::v1;
namespace enums = temporal::api::enums::v1;
using Kind = HistorySpan::Kind;

// A failure's message, cut at kMaxFailureBytes (never inside a character).
std::string FailureText(const temporal::api::failure::v1::Failure& failure) {
  const std::string& message = failure.message();
  if (message.size() <= HistorySpans::kMaxFailureBytes) return message;
  size_t cut = HistorySpans::kMaxFailureBytes;  // message[cut] is the first byte left out
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
  return message.substr(0, cut);
}

const char* RunClosedStatus(enums::EventType type) {
  switch (type) {
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: return "COMPLETED";
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_FAILED: return "FAILED";
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT: return "TIMED_OUT";
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED: return "CANCELED";
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED: return "TERMINATED";
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW: return "CONTINUED_AS_NEW";
    default: return nullptr;
  }
}

}  // namespace

void HistorySpans::Open(const history::HistoryEvent& e, Kind kind, std::string id,
                        std::string name, const char* status) {
  HistorySpan span;
  span.kind = kind;
  span.id = std::move(id);
  span.name = std::move(name);
  span.event_id = e.event_id();
  span.start = FromProtoTime(e.event_time());
  span.status = status;
  span_at_[e.event_id()] = spans_.size();
  spans_.push_back(std::move(span));
}

HistorySpan* HistorySpans::Find(int64_t first_event_id) {
  auto it = span_at_.find(first_event_id);
  return it == span_at_.end() ? nullptr : &spans_[it->second];
}

HistorySpan* HistorySpans::Close(int64_t first_event_id, const history::HistoryEvent& e,
                                 const char* status) {
  HistorySpan* span = Find(first_event_id);
  if (span == nullptr) return nullptr;
  span->end = FromProtoTime(e.event_time());
  span->status = status;
  return span;
}

void HistorySpans::Add(const history::HistoryEvent& e) {
  ++events_;
  last_ = FromProtoTime(e.event_time());
  if (const char* closed = RunClosedStatus(e.event_type())) Close(first_event_id_, e, closed);
  switch (e.event_type()) {
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
      first_event_id_ = e.event_id();
      Open(e, Kind::kWorkflow, "", e.workflow_execution_started_event_attributes().workflow_type().name(),
           "RUNNING");
      break;
    case enums::EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
      const auto& a = e.activity_task_scheduled_event_attributes();
      Open(e, Kind::kActivity, a.activity_id(), a.activity_type().name(), "SCHEDULED");
      break;
    }
    case enums::EVENT_TYPE_ACTIVITY_TASK_STARTED: {
      const auto& a = e.activity_task_started_event_attributes();
      if (HistorySpan* span = Find(a.scheduled_event_id())) {
        span->started = FromProtoTime(e.event_time());
        span->status = "STARTED";
        span->attempt = std::max(1, a.attempt());
        if (a.has_last_failure()) span->failure = FailureText(a.last_failure());
      }
      break;
    }
    case enums::EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
      Close(e.activity_task_completed_event_attributes().scheduled_event_id(), e, "COMPLETED");
      break;
    case enums::EVENT_TYPE_ACTIVITY_TASK_FAILED: {
      const auto& a = e.activity_task_failed_event_attributes();
      if (HistorySpan* span = Close(a.scheduled_event_id(), e, "FAILED")) {
        span->failure = FailureText(a.failure());
      }
      break;
    }
    case enums::EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: {
      const auto& a = e.activity_task_timed_out_event_attributes();
      if (HistorySpan* span = Close(a.scheduled_event_id(), e, "TIMED_OUT")) {
        span->failure = FailureText(a.failure());
      }
      break;
    }
    case enums::EVENT_TYPE_ACTIVITY_TASK_CANCELED:
      Close(e.activity_task_canceled_event_attributes().scheduled_event_id(), e, "CANCELED");
      break;
    case enums::EVENT_TYPE_TIMER_STARTED: {
      const auto& a = e.timer_started_event_attributes();
      Open(e, Kind::kTimer, a.timer_id(), "", "STARTED");
      spans_.back().timer = FromProtoDuration(a.start_to_fire_timeout());
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
      Open(e, Kind::kChild, a.workflow_id(), a.workflow_type().name(), "INITIATED");
      break;
    }
    case enums::EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED:
      Close(e.start_child_workflow_execution_failed_event_attributes().initiated_event_id(), e,
            "START_FAILED");
      break;
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED: {
      const auto& a = e.child_workflow_execution_started_event_attributes();
      if (HistorySpan* span = Find(a.initiated_event_id())) {
        span->started = FromProtoTime(e.event_time());
        span->status = "STARTED";
      }
      break;
    }
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED:
      Close(e.child_workflow_execution_completed_event_attributes().initiated_event_id(), e,
            "COMPLETED");
      break;
    case enums::EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED: {
      const auto& a = e.child_workflow_execution_failed_event_attributes();
      if (HistorySpan* span = Close(a.initiated_event_id(), e, "FAILED")) {
        span->failure = FailureText(a.failure());
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
      Open(e, Kind::kUpdate, a.protocol_instance_id(), a.accepted_request().input().name(),
           "ACCEPTED");
      break;
    }
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED: {
      const auto& a = e.workflow_execution_update_completed_event_attributes();
      if (HistorySpan* span = Close(a.accepted_event_id(), e, "COMPLETED");
          span != nullptr && a.outcome().has_failure()) {
        span->failure = FailureText(a.outcome().failure());
      }
      break;
    }
    case enums::EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
      points_.push_back(HistoryPoint{"signal",
                                     e.workflow_execution_signaled_event_attributes().signal_name(),
                                     e.event_id(), FromProtoTime(e.event_time())});
      break;
    default:
      break;
  }
}

}  // namespace tock::admin
