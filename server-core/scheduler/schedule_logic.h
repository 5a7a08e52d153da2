// What a schedule does, as pure functions of its record (Temporal's scheduler workflow,
// service/worker/scheduler/workflow.go and buffer.go, without the workflow): which spec times
// are buffered, which buffered starts are made now under the overlap policies, what Describe
// and List show. No I/O: the runner (schedules.h) reads the record, calls these, makes the
// calls they ask for and writes the record back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server-core/persistence/schedule_store.h"
#include "server-core/scheduler/schedule_spec.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::scheduler {

namespace enums = temporal::api::enums::v1;
using persistence::ScheduleRecord;
using tock::persistence::v1::BufferedStart;

// Temporal's CurrentTweakablePolicies.
inline constexpr absl::Duration kDefaultCatchupWindow = absl::Hours(365 * 24);
inline constexpr absl::Duration kMinCatchupWindow = absl::Seconds(10);
inline constexpr int kFutureActionCount = 10;
inline constexpr int kRecentActionCount = 10;
inline constexpr int kFutureActionCountForList = 5;
inline constexpr int kRecentActionCountForList = 5;
inline constexpr int kMaxBufferSize = 1000;
inline constexpr int kMaxListMatchingTimes = 1000;
inline constexpr size_t kMaxNotesBytes = 1000;  // Temporal's ScheduleNotesSizeLimit

// "<namespace id>-<schedule id>": the jitter seed (Temporal's, from version NewCacheAndJitter).
std::string JitterSeed(const ScheduleRecord& r);

// The policy a start uses: its own, else the schedule's, else SKIP.
enums::ScheduleOverlapPolicy ResolveOverlap(const ScheduleRecord& r,
                                            enums::ScheduleOverlapPolicy p);
absl::Duration CatchupWindow(const ScheduleRecord& r);

// Fills the policy defaults so Describe shows them (Temporal's ensureFields).
void EnsureDefaults(ScheduleRecord& r);

// Whether a scheduled (not manual) action may be taken: not paused, actions remaining.
bool CanTakeScheduledAction(const ScheduleRecord& r);

// Appends a start to the buffer (dropped, counted in buffer_dropped, when it is full).
void AddStart(ScheduleRecord& r, absl::Time nominal, absl::Time actual,
              enums::ScheduleOverlapPolicy policy, bool manual);

// Buffers the spec's times in (start, end] (actions missing the catch-up window are counted,
// not buffered; times before the last update are dropped; nothing while paused or without
// remaining actions unless manual). At most `limit` starts (0: no limit). Returns the next
// time to look from: the first time not handled, or nullopt when the range is done.
// `resume` (when given) is where the next look at the spec must start: `end`, or just before
// the nominal time of a time whose jitter puts it after `end` (it is not lost).
std::optional<absl::Time> ProcessTimeRange(ScheduleRecord& r, const CompiledSpec& spec,
                                           absl::Time start, absl::Time end,
                                           enums::ScheduleOverlapPolicy policy, bool manual,
                                           int limit, absl::Time* resume = nullptr);

// Temporal's ProcessBuffer: what to start now and what stays buffered.
struct BufferAction {
  std::vector<BufferedStart> overlapping_starts;  // ALLOW_ALL: all at once
  std::optional<BufferedStart> non_overlapping_start;
  std::vector<BufferedStart> new_buffer;
  bool need_cancel = false;
  bool need_terminate = false;
  int64_t overlap_skipped = 0;
};
BufferAction ProcessBuffer(const ScheduleRecord& r, bool is_running);

// The workflow id of a start: the action's id and the nominal time in whole seconds, RFC 3339
// UTC ("<id>-2026-11-25T10:00:00Z"), as Temporal names them.
std::string ActionWorkflowId(const ScheduleRecord& r, const BufferedStart& start);
// A request id derived from the schedule and the start (stable across retries and restarts).
std::string ActionRequestId(const ScheduleRecord& r, const BufferedStart& start);

// The next `n` action times from the last processed time (after the last update; limited
// by the remaining actions).
std::vector<absl::Time> FutureActionTimes(const ScheduleRecord& r, const CompiledSpec* spec, int n);

// When the runner must look at the schedule again (nullopt: only when something changes it).
std::optional<absl::Time> NextWakeup(const ScheduleRecord& r, const CompiledSpec* spec,
                                     absl::Time now);

// Temporal's RetentionTime: a schedule that will take no more actions (its spec has no more
// times, or no actions remain) and is not paused is deleted this long after its last event
// (creation, update or action).
inline constexpr absl::Duration kFinishedScheduleRetention = absl::Hours(7 * 24);
// When a finished schedule is deleted; nullopt while it may still act (or is paused).
std::optional<absl::Time> RetentionExpiry(const ScheduleRecord& r, const CompiledSpec* spec);

// What DescribeSchedule and ListSchedules answer.
temporal::api::workflowservice::v1::DescribeScheduleResponse DescribeOf(const ScheduleRecord& r,
                                                                      const CompiledSpec* spec);
temporal::api::schedule::v1::ScheduleListEntry ListEntryOf(const ScheduleRecord& r,
                                                           const CompiledSpec* spec);

// A ListSchedules query: conditions joined by AND, each `Field = value`, `Field != value` or
// `Field STARTS_WITH 'prefix'` on ScheduleId and WorkflowType (quoted text) or
// TemporalSchedulePaused (true or false). INVALID_ARGUMENT "invalid query: ..." otherwise.
struct ScheduleQuery {
  struct Condition {
    std::string field;  // ScheduleId, WorkflowType, TemporalSchedulePaused
    std::string op;     // =, !=, STARTS_WITH
    std::string value;  // text, or "true"/"false"
  };
  std::vector<Condition> conditions;  // all must hold; none: every schedule
  bool Matches(const ScheduleRecord& r) const;
};
absl::StatusOr<ScheduleQuery> ParseScheduleQuery(const std::string& query);

// The conflict token on the wire: 8 bytes, big-endian (Temporal's encoding).
std::string EncodeConflictToken(int64_t token);
// 0 when the bytes are not 8 long (no check, as Temporal).
int64_t DecodeConflictToken(const std::string& bytes);

}  // namespace tock::server::scheduler
