#include "server-core/history/activity_timeouts.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::server::history {
namespace {

namespace enums = temporal::api::enums::v1;
using tock::persistence::v1::ActivityInfo;
using tock::persistence::v1::TimerTask;

// Temporal caps every timeout at 100 years (common/primitives/timestamp/duration.go).
constexpr int64_t kMaxTimeoutSeconds = int64_t{100} * 365 * 24 * 3600;

// Temporal's timestamp.ValidateAndCapProtoDuration, with its messages.
absl::Status CheckTimeout(google::protobuf::Duration& d, absl::string_view name) {
  if ((d.seconds() > 0 && d.nanos() < 0) || (d.seconds() < 0 && d.nanos() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid ", name, ": duration has seconds and nanos with different signs"));
  }
  if (d.seconds() < 0 || d.nanos() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("invalid ", name, ": negative duration"));
  }
  if (d.seconds() >= kMaxTimeoutSeconds) {
    d.set_seconds(kMaxTimeoutSeconds);
    d.set_nanos(0);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status NormalizeActivityTimeouts(
    temporal::api::command::v1::ScheduleActivityTaskCommandAttributes& a,
    absl::Duration run_timeout) {
  if (absl::Status s = CheckTimeout(*a.mutable_schedule_to_close_timeout(),
                                    "ScheduleToCloseTimeout");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckTimeout(*a.mutable_schedule_to_start_timeout(),
                                    "ScheduleToStartTimeout");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckTimeout(*a.mutable_start_to_close_timeout(), "StartToCloseTimeout");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckTimeout(*a.mutable_heartbeat_timeout(), "HeartbeatTimeout"); !s.ok()) {
    return s;
  }
  absl::Duration s2c = FromProtoDuration(a.schedule_to_close_timeout());
  absl::Duration s2s = FromProtoDuration(a.schedule_to_start_timeout());
  absl::Duration stc = FromProtoDuration(a.start_to_close_timeout());
  absl::Duration hb = FromProtoDuration(a.heartbeat_timeout());
  const absl::Duration zero = absl::ZeroDuration();
  if (s2c > zero) {
    s2s = s2s > zero ? std::min(s2s, s2c) : s2c;
    stc = stc > zero ? std::min(stc, s2c) : s2c;
  } else if (stc > zero) {
    s2c = run_timeout;
    if (s2s <= zero) s2s = run_timeout;  // one the command set is kept
  } else {
    // Temporal's message, with the ids cut short: they are checked for length elsewhere,
    // but a message should not carry more than a reader needs.
    return absl::InvalidArgumentError(absl::StrCat(
        "a valid StartToCloseTimeout or ScheduleToCloseTimeout must be set on the activity. "
        "ActivityId=",
        a.activity_id().substr(0, 200), " ActivityType=", a.activity_type().name().substr(0, 200)));
  }
  if (run_timeout > zero) {
    s2c = std::min(s2c, run_timeout);
    s2s = std::min(s2s, run_timeout);
    stc = std::min(stc, run_timeout);
    hb = std::min(hb, run_timeout);
  }
  hb = std::min(hb, stc);
  *a.mutable_schedule_to_close_timeout() = ToProtoDuration(s2c);
  *a.mutable_schedule_to_start_timeout() = ToProtoDuration(s2s);
  *a.mutable_start_to_close_timeout() = ToProtoDuration(stc);
  *a.mutable_heartbeat_timeout() = ToProtoDuration(hb);
  return absl::OkStatus();
}

void AddActivityTimeout(RunTransaction& tx, ActivityInfo& a, enums::TimeoutType type,
                        absl::Time when, bool stamped) {
  TimerTask timeout;
  timeout.set_kind(TimerTask::KIND_ACTIVITY_TIMEOUT);
  timeout.set_event_id(a.scheduled_event_id());
  if (stamped) timeout.set_stamp(a.stamp());
  timeout.set_timeout_type(type);
  *a.add_timers() = tx.AddTimer(when, timeout);
}

void ArmUnstartedActivityTimeouts(RunTransaction& tx, ActivityInfo& a) {
  const absl::Duration s2s = FromProtoDuration(a.schedule_to_start_timeout());
  if (s2s > absl::ZeroDuration()) {
    AddActivityTimeout(tx, a, enums::TIMEOUT_TYPE_SCHEDULE_TO_START,
                       FromProtoTime(a.current_attempt_scheduled_time()) + s2s, /*stamped=*/true);
  }
  const absl::Duration s2c = FromProtoDuration(a.schedule_to_close_timeout());
  if (s2c > absl::ZeroDuration()) {
    AddActivityTimeout(tx, a, enums::TIMEOUT_TYPE_SCHEDULE_TO_CLOSE,
                       FromProtoTime(a.scheduled_time()) + s2c, /*stamped=*/false);
  }
}

void AddScheduledActivity(
    RunTransaction& tx, int64_t scheduled_id,
    const temporal::api::history::v1::ActivityTaskScheduledEventAttributes& a,
    const std::string& queue, absl::Time scheduled, ActivityDispatch dispatch) {
  ActivityInfo info;
  info.set_scheduled_event_id(scheduled_id);
  info.set_activity_id(a.activity_id());
  info.set_activity_type(a.activity_type().name());
  info.set_task_queue(queue);
  *info.mutable_scheduled_time() = ToProtoTime(scheduled);
  *info.mutable_current_attempt_scheduled_time() = ToProtoTime(scheduled);
  info.set_attempt(1);
  info.set_stamp(1);
  *info.mutable_schedule_to_start_timeout() = a.schedule_to_start_timeout();
  *info.mutable_schedule_to_close_timeout() = a.schedule_to_close_timeout();
  *info.mutable_start_to_close_timeout() = a.start_to_close_timeout();
  *info.mutable_heartbeat_timeout() = a.heartbeat_timeout();
  *info.mutable_retry_policy() = a.retry_policy();
  if (dispatch == ActivityDispatch::kQueue) {
    ArmUnstartedActivityTimeouts(tx, info);
    tx.DispatchActivity(info);
  }
  (*tx.state().mutable_activities())[scheduled_id] = std::move(info);
}

enums::TimeoutType MissedActivityDeadline(const ActivityInfo& a, enums::TimeoutType fired,
                                          int64_t timer_stamp) {
  const bool waiting = !a.has_started_time();
  const absl::Duration s2s = FromProtoDuration(a.schedule_to_start_timeout());
  switch (fired) {
    case enums::TIMEOUT_TYPE_SCHEDULE_TO_START:
      return waiting && a.stamp() == timer_stamp ? fired : enums::TIMEOUT_TYPE_UNSPECIFIED;
    case enums::TIMEOUT_TYPE_SCHEDULE_TO_CLOSE: {
      if (!waiting || s2s <= absl::ZeroDuration()) return fired;
      const absl::Time start_due = FromProtoTime(a.current_attempt_scheduled_time()) + s2s;
      const absl::Time close_due =
          FromProtoTime(a.scheduled_time()) + FromProtoDuration(a.schedule_to_close_timeout());
      return start_due <= close_due ? enums::TIMEOUT_TYPE_SCHEDULE_TO_START : fired;
    }
    default:
      return fired;
  }
}

std::string TimeoutTypeName(enums::TimeoutType type) {
  switch (type) {
    case enums::TIMEOUT_TYPE_START_TO_CLOSE:
      return "StartToClose";
    case enums::TIMEOUT_TYPE_SCHEDULE_TO_START:
      return "ScheduleToStart";
    case enums::TIMEOUT_TYPE_SCHEDULE_TO_CLOSE:
      return "ScheduleToClose";
    case enums::TIMEOUT_TYPE_HEARTBEAT:
      return "Heartbeat";
    default:
      return "Unspecified";
  }
}

}  // namespace tock::server::history
