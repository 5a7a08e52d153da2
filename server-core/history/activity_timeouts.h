// Activity timeouts as Temporal normalises and enforces them: the timeouts a
// ScheduleActivityTask command ends up with (chasm/lib/activity/validator.go
// validateAndNormalizeTimeouts), the deadlines of an attempt no worker has picked up yet, and
// which deadline an activity missed when several expire together
// (service/history/workflow/timer_sequence.go).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server-core/history/run_transaction.h"
#include "temporal/api/command/v1/message.pb.h"
#include "temporal/api/enums/v1/workflow.pb.h"
#include "temporal/api/history/v1/message.pb.h"
#include "tock/persistence/v1/execution.pb.h"

namespace tock::server::history {

// Fills in and caps the timeouts of `a`, in place, as Temporal does:
//  - schedule-to-close set: schedule-to-start and start-to-close default to it and are
//    capped at it;
//  - else start-to-close set: schedule-to-close is the run timeout, and so is
//    schedule-to-start unless set (a run timeout of 0 means none);
//  - else INVALID_ARGUMENT;
//  - then each timeout is capped at the run timeout (when it is set), and the heartbeat
//    timeout at start-to-close.
// A negative timeout is INVALID_ARGUMENT "invalid <Name>Timeout: negative duration".
absl::Status NormalizeActivityTimeouts(
    temporal::api::command::v1::ScheduleActivityTaskCommandAttributes& a,
    absl::Duration run_timeout);

// Arms one deadline of activity `a` at `when` (a KIND_ACTIVITY_TIMEOUT timer, kept in its
// timers). `stamped`: it belongs to the current attempt (a later attempt ignores it).
void AddActivityTimeout(RunTransaction& tx, tock::persistence::v1::ActivityInfo& a,
                        temporal::api::enums::v1::TimeoutType type, absl::Time when, bool stamped);

// Arms the deadlines of an attempt that waits for a worker: schedule-to-start from when the
// attempt is due (current_attempt_scheduled_time; after a retry's backoff), stamped with the
// attempt so a later attempt ignores it, and schedule-to-close from the first schedule.
// A zero timeout arms nothing.
void ArmUnstartedActivityTimeouts(RunTransaction& tx, tock::persistence::v1::ActivityInfo& a);

// How a newly scheduled activity reaches a worker: through its queue (a poll takes it), or
// eagerly, started in the same transaction (StartActivityAttempt) by whoever scheduled it.
enum class ActivityDispatch { kQueue, kEager };

// The pending activity of ActivityTaskScheduled `scheduled_id` (attributes `a`): its first
// attempt, scheduled at `scheduled` on `queue`, stored in the run's state. Dispatched through
// the queue, it gets its unstarted deadlines (ArmUnstartedActivityTimeouts) and its task for
// matching; an eager one gets neither (its start arms its deadlines). The active side's
// command, a replicated event and a reset's rebuilt run all schedule it so.
void AddScheduledActivity(
    RunTransaction& tx, int64_t scheduled_id,
    const temporal::api::history::v1::ActivityTaskScheduledEventAttributes& a,
    const std::string& queue, absl::Time scheduled,
    ActivityDispatch dispatch = ActivityDispatch::kQueue);

// The timeout an activity reports when its timer of type `fired` comes due, or
// TIMEOUT_TYPE_UNSPECIFIED when the timer is stale (a schedule-to-start timer of an attempt
// that was picked up or replaced). Temporal sorts an activity's expired deadlines by time and
// then by type, SCHEDULE_TO_START before SCHEDULE_TO_CLOSE, and the first wins: an activity
// nobody picked up whose schedule-to-start equals its schedule-to-close (the default when
// only schedule-to-close is set) times out SCHEDULE_TO_START, whichever timer fires first.
temporal::api::enums::v1::TimeoutType MissedActivityDeadline(
    const tock::persistence::v1::ActivityInfo& a, temporal::api::enums::v1::TimeoutType fired,
    int64_t timer_stamp);

// The name Temporal's failure messages use for a timeout type ("ScheduleToStart"), as in
// "activity ScheduleToStart timeout".
std::string TimeoutTypeName(temporal::api::enums::v1::TimeoutType type);

}  // namespace tock::server::history
