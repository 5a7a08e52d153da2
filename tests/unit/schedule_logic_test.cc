// What a schedule does with its record (server-core/scheduler/schedule_logic.h), without a
// server: spec times buffered within the catch-up window, nothing while paused, manual
// (backfill) ranges, Temporal's overlap decisions, workflow and request ids, future times.
#include "server-core/scheduler/schedule_logic.h"

#include <gtest/gtest.h>

#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::server::scheduler {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'767'225'600);  // 2026-01-01T00:00:00Z

ScheduleRecord Hourly(enums::ScheduleOverlapPolicy overlap = enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED) {
  ScheduleRecord r;
  r.set_namespace_id("ns-id");
  r.set_schedule_id("sched");
  *r.mutable_schedule()->mutable_spec()->add_interval()->mutable_interval() = ToProtoDuration(absl::Hours(1));
  r.mutable_schedule()->mutable_action()->mutable_start_workflow()->set_workflow_id("wf");
  r.mutable_schedule()->mutable_policies()->set_overlap_policy(overlap);
  EnsureDefaults(r);
  *r.mutable_last_processed_time() = ToProtoTime(kT0);
  return r;
}

CompiledSpec SpecOf(const ScheduleRecord& r) { return *CompiledSpec::Compile(r.schedule().spec()); }

TEST(ScheduleLogicTest, DefaultsShowInDescribe) {
  ScheduleRecord r = Hourly();
  EXPECT_EQ(r.schedule().policies().overlap_policy(), enums::SCHEDULE_OVERLAP_POLICY_SKIP);
  EXPECT_EQ(FromProtoDuration(r.schedule().policies().catchup_window()), absl::Hours(365 * 24));
  r.mutable_schedule()->mutable_policies()->mutable_catchup_window()->set_seconds(1);
  EXPECT_EQ(CatchupWindow(r), absl::Seconds(10)) << "at least 10 s, as Temporal";
}

TEST(ScheduleLogicTest, BuffersDueTimesAndCountsThoseOutsideTheCatchupWindow) {
  ScheduleRecord r = Hourly();
  *r.mutable_schedule()->mutable_policies()->mutable_catchup_window() = ToProtoDuration(absl::Minutes(90));
  CompiledSpec spec = SpecOf(r);
  // Five hours late: 01:00..05:00 due; only 04:00 and 05:00 are within 90 minutes of 05:00.
  ProcessTimeRange(r, spec, kT0, kT0 + absl::Hours(5), enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED, false, 0);
  ASSERT_EQ(r.buffered_starts_size(), 2);
  EXPECT_EQ(FromProtoTime(r.buffered_starts(0).nominal_time()), kT0 + absl::Hours(4));
  EXPECT_EQ(FromProtoTime(r.buffered_starts(1).nominal_time()), kT0 + absl::Hours(5));
  EXPECT_EQ(r.info().missed_catchup_window(), 3);
  EXPECT_NE(r.buffered_starts(0).sequence(), r.buffered_starts(1).sequence());
}

TEST(ScheduleLogicTest, NothingWhilePausedOrOutOfActionsButBackfillsStillRun) {
  ScheduleRecord r = Hourly();
  CompiledSpec spec = SpecOf(r);
  r.mutable_schedule()->mutable_state()->set_paused(true);
  ProcessTimeRange(r, spec, kT0, kT0 + absl::Hours(3), enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED, false, 0);
  EXPECT_EQ(r.buffered_starts_size(), 0);
  EXPECT_EQ(r.info().missed_catchup_window(), 0) << "paused time is not missed";
  EXPECT_FALSE(NextWakeup(r, &spec, kT0).has_value());
  // A backfill is manual: paused or not; a limit leaves the rest for the next look.
  std::optional<absl::Time> more = ProcessTimeRange(r, spec, kT0 - absl::Milliseconds(1), kT0 + absl::Hours(3),
                                                    enums::SCHEDULE_OVERLAP_POLICY_ALLOW_ALL, true, 2);
  ASSERT_EQ(r.buffered_starts_size(), 2);
  EXPECT_EQ(FromProtoTime(r.buffered_starts(0).nominal_time()), kT0) << "start inclusive";
  ASSERT_TRUE(more.has_value());
  EXPECT_EQ(*more, kT0 + absl::Hours(1));
  EXPECT_FALSE(ProcessTimeRange(r, spec, *more, kT0 + absl::Hours(3), enums::SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
                                true, 10)
                   .has_value());
  EXPECT_EQ(r.buffered_starts_size(), 4);
  EXPECT_TRUE(r.buffered_starts(3).manual());

  ScheduleRecord limited = Hourly();
  limited.mutable_schedule()->mutable_state()->set_limited_actions(true);
  limited.mutable_schedule()->mutable_state()->set_remaining_actions(0);
  EXPECT_FALSE(CanTakeScheduledAction(limited));
  limited.mutable_schedule()->mutable_state()->set_remaining_actions(2);
  EXPECT_EQ(FutureActionTimes(limited, &spec, 10).size(), 2u);
}

ScheduleRecord WithBuffer(enums::ScheduleOverlapPolicy policy, int n) {
  ScheduleRecord r = Hourly(policy);
  for (int i = 0; i < n; ++i) {
    AddStart(r, kT0 + absl::Hours(i), kT0 + absl::Hours(i), enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED, false);
  }
  return r;
}

TEST(ScheduleLogicTest, OverlapPoliciesDecideAsTemporals) {
  // Nothing running: the first starts whatever the policy.
  BufferAction a = ProcessBuffer(WithBuffer(enums::SCHEDULE_OVERLAP_POLICY_SKIP, 1), false);
  EXPECT_TRUE(a.non_overlapping_start.has_value());
  // Running: Skip drops and counts.
  a = ProcessBuffer(WithBuffer(enums::SCHEDULE_OVERLAP_POLICY_SKIP, 2), true);
  EXPECT_FALSE(a.non_overlapping_start.has_value());
  EXPECT_EQ(a.overlap_skipped, 2);
  EXPECT_TRUE(a.new_buffer.empty());
  // BufferOne keeps the first, skips the rest; BufferAll keeps all.
  a = ProcessBuffer(WithBuffer(enums::SCHEDULE_OVERLAP_POLICY_BUFFER_ONE, 3), true);
  EXPECT_EQ(a.new_buffer.size(), 1u);
  EXPECT_EQ(a.overlap_skipped, 2);
  a = ProcessBuffer(WithBuffer(enums::SCHEDULE_OVERLAP_POLICY_BUFFER_ALL, 3), true);
  EXPECT_EQ(a.new_buffer.size(), 3u);
  EXPECT_EQ(a.overlap_skipped, 0);
  // Cancel/TerminateOther: end the running one, keep the start for when it closed.
  a = ProcessBuffer(WithBuffer(enums::SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER, 1), true);
  EXPECT_TRUE(a.need_cancel);
  EXPECT_FALSE(a.need_terminate);
  EXPECT_EQ(a.new_buffer.size(), 1u);
  a = ProcessBuffer(WithBuffer(enums::SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER, 2), false);
  EXPECT_FALSE(a.need_terminate) << "nothing runs: the later start replaces the earlier";
  ASSERT_TRUE(a.non_overlapping_start.has_value());
  EXPECT_EQ(FromProtoTime(a.non_overlapping_start->nominal_time()), kT0 + absl::Hours(1));
  // AllowAll: all at once.
  a = ProcessBuffer(WithBuffer(enums::SCHEDULE_OVERLAP_POLICY_ALLOW_ALL, 3), true);
  EXPECT_EQ(a.overlapping_starts.size(), 3u);
  EXPECT_FALSE(a.non_overlapping_start.has_value());
}

TEST(ScheduleLogicTest, IdsAreDerivedFromTheStart) {
  ScheduleRecord r = WithBuffer(enums::SCHEDULE_OVERLAP_POLICY_SKIP, 2);
  EXPECT_EQ(ActionWorkflowId(r, r.buffered_starts(1)), "wf-2026-01-01T01:00:00Z");
  EXPECT_EQ(ActionRequestId(r, r.buffered_starts(0)), ActionRequestId(r, r.buffered_starts(0)))
      << "the same after a restart";
  EXPECT_NE(ActionRequestId(r, r.buffered_starts(0)), ActionRequestId(r, r.buffered_starts(1)));
  EXPECT_EQ(DecodeConflictToken(EncodeConflictToken(0x0102030405060708)), 0x0102030405060708);
  EXPECT_EQ(EncodeConflictToken(1), std::string("\0\0\0\0\0\0\0\1", 8));
}

TEST(ScheduleLogicTest, ATimeWhoseJitterHasNotPassedIsTakenLaterNotLost) {
  ScheduleRecord r = Hourly();
  *r.mutable_schedule()->mutable_spec()->mutable_jitter() = ToProtoDuration(absl::Minutes(30));
  CompiledSpec spec = SpecOf(r);
  std::optional<NextTime> first = spec.GetNextTime(JitterSeed(r), kT0);
  ASSERT_TRUE(first.has_value());
  ASSERT_GT(first->next - first->nominal, absl::Seconds(2)) << "this seed's jitter is large enough";
  // A look between the nominal time and the jittered one: nothing yet, and the next look
  // starts before the nominal time.
  const absl::Time between = first->nominal + (first->next - first->nominal) / 2;
  absl::Time resume;
  ProcessTimeRange(r, spec, kT0, between, enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED, false, 0, &resume);
  EXPECT_EQ(r.buffered_starts_size(), 0);
  EXPECT_EQ(resume, first->nominal - absl::Seconds(1));
  ProcessTimeRange(r, spec, resume, first->next, enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED, false, 0, &resume);
  ASSERT_EQ(r.buffered_starts_size(), 1);
  EXPECT_EQ(FromProtoTime(r.buffered_starts(0).actual_time()), first->next);
  EXPECT_EQ(resume, first->next);
  // And only once.
  ProcessTimeRange(r, spec, resume, first->next + absl::Minutes(1), enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED,
                   false, 0, &resume);
  EXPECT_EQ(r.buffered_starts_size(), 1);
}

TEST(ScheduleLogicTest, ListQueriesFilterByIdTypeAndPause) {
  ScheduleRecord a = Hourly();
  a.set_schedule_id("nightly-report");
  a.mutable_schedule()->mutable_action()->mutable_start_workflow()->mutable_workflow_type()->set_name("report");
  ScheduleRecord b = a;
  b.set_schedule_id("hourly-poll");
  b.mutable_schedule()->mutable_action()->mutable_start_workflow()->mutable_workflow_type()->set_name("poll");
  b.mutable_schedule()->mutable_state()->set_paused(true);
  auto matches = [&](const std::string& q) {
    absl::StatusOr<ScheduleQuery> parsed = ParseScheduleQuery(q);
    EXPECT_TRUE(parsed.ok()) << q << ": " << parsed.status();
    std::string out;
    for (const ScheduleRecord* r : {&a, &b}) {
      if (parsed.ok() && parsed->Matches(*r)) out += r->schedule_id() + " ";
    }
    return out;
  };
  EXPECT_EQ(matches(""), "nightly-report hourly-poll ");
  EXPECT_EQ(matches("ScheduleId = 'hourly-poll'"), "hourly-poll ");
  EXPECT_EQ(matches("ScheduleId STARTS_WITH \"night\""), "nightly-report ");
  EXPECT_EQ(matches("TemporalSchedulePaused = true"), "hourly-poll ");
  EXPECT_EQ(matches("TemporalSchedulePaused != true and WorkflowType = 'report'"), "nightly-report ");
  EXPECT_EQ(matches("WorkflowType != 'report' AND TemporalSchedulePaused = false"), "");
  auto invalid = [](const std::string& q) {
    absl::StatusOr<ScheduleQuery> parsed = ParseScheduleQuery(q);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << q;
    return std::string(parsed.status().message());
  };
  EXPECT_EQ(invalid("Owner = 'x'"),
            "invalid query: unknown field Owner (schedules are listed by ScheduleId, WorkflowType or "
            "TemporalSchedulePaused)");
  EXPECT_EQ(invalid("ScheduleId = x"), "invalid query: the value of ScheduleId must be quoted");
  EXPECT_EQ(invalid("ScheduleId > 'x'"), "invalid query: operator > is not supported (=, != or STARTS_WITH)");
  EXPECT_EQ(invalid("ScheduleId = 'x' OR ScheduleId = 'y'"),
            "invalid query: expected AND, found OR (conditions are joined by AND)");
  EXPECT_EQ(invalid("ScheduleId ="), "invalid query: a condition is incomplete (Field = 'value')");
  EXPECT_EQ(invalid("ScheduleId = 'x"), "invalid query: a quoted value is not closed");
  EXPECT_EQ(invalid("TemporalSchedulePaused = yes"),
            "invalid query: TemporalSchedulePaused is compared with = or != to true or false");
}

TEST(ScheduleLogicTest, AFinishedScheduleExpiresSevenDaysAfterItsLastEvent) {
  ScheduleRecord r = Hourly();
  *r.mutable_info()->mutable_create_time() = ToProtoTime(kT0);
  CompiledSpec spec = SpecOf(r);
  EXPECT_FALSE(RetentionExpiry(r, &spec).has_value()) << "more actions to come";
  r.mutable_schedule()->mutable_state()->set_limited_actions(true);
  r.mutable_schedule()->mutable_state()->set_remaining_actions(0);
  auto* a = r.mutable_info()->add_recent_actions();
  *a->mutable_actual_time() = ToProtoTime(kT0 + absl::Hours(5));
  ASSERT_TRUE(RetentionExpiry(r, &spec).has_value());
  EXPECT_EQ(*RetentionExpiry(r, &spec), kT0 + absl::Hours(5) + absl::Hours(7 * 24));
  r.mutable_schedule()->mutable_state()->set_paused(true);
  EXPECT_FALSE(RetentionExpiry(r, &spec).has_value()) << "a paused schedule is kept";
  r.mutable_schedule()->mutable_state()->set_paused(false);
  AddStart(r, kT0, kT0, enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED, true);
  EXPECT_FALSE(RetentionExpiry(r, &spec).has_value()) << "a start still waits";
  // A spec whose end has passed.
  ScheduleRecord ended = Hourly();
  *ended.mutable_info()->mutable_create_time() = ToProtoTime(kT0);
  *ended.mutable_schedule()->mutable_spec()->mutable_end_time() = ToProtoTime(kT0 - absl::Hours(1));
  CompiledSpec ended_spec = SpecOf(ended);
  EXPECT_EQ(*RetentionExpiry(ended, &ended_spec), kT0 + absl::Hours(7 * 24));
}

TEST(ScheduleLogicTest, FutureTimesSkipThoseBeforeTheLastUpdate) {
  ScheduleRecord r = Hourly();
  CompiledSpec spec = SpecOf(r);
  *r.mutable_info()->mutable_update_time() = ToProtoTime(kT0 + absl::Minutes(150));
  std::vector<absl::Time> next = FutureActionTimes(r, &spec, 2);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0], kT0 + absl::Hours(3));
  EXPECT_EQ(*NextWakeup(r, &spec, kT0), kT0 + absl::Hours(1))
      << "the runner wakes at the first time and drops it (before the update)";
}

}  // namespace
}  // namespace tock::server::scheduler
