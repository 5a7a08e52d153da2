#include "server-core/scheduler/schedule_logic.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/hashing.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"

namespace tock::server::scheduler {

std::string JitterSeed(const ScheduleRecord& r) {
  return absl::StrCat(r.namespace_id(), "-", r.schedule_id());
}

enums::ScheduleOverlapPolicy ResolveOverlap(const ScheduleRecord& r,
                                            enums::ScheduleOverlapPolicy p) {
  if (p == enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED) p = r.schedule().policies().overlap_policy();
  if (p == enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED) p = enums::SCHEDULE_OVERLAP_POLICY_SKIP;
  return p;
}

absl::Duration CatchupWindow(const ScheduleRecord& r) {
  const auto& policies = r.schedule().policies();
  if (!policies.has_catchup_window()) return kDefaultCatchupWindow;
  return std::max(FromProtoDuration(policies.catchup_window()), kMinCatchupWindow);
}

void EnsureDefaults(ScheduleRecord& r) {
  auto* policies = r.mutable_schedule()->mutable_policies();
  policies->set_overlap_policy(ResolveOverlap(r, policies->overlap_policy()));
  *policies->mutable_catchup_window() = ToProtoDuration(CatchupWindow(r));
  r.mutable_schedule()->mutable_state();
  r.mutable_schedule()->mutable_spec();
  r.mutable_schedule()->mutable_action();
}

bool CanTakeScheduledAction(const ScheduleRecord& r) {
  const auto& state = r.schedule().state();
  if (state.paused()) return false;
  return !state.limited_actions() || state.remaining_actions() > 0;
}

void AddStart(ScheduleRecord& r, absl::Time nominal, absl::Time actual,
              enums::ScheduleOverlapPolicy policy, bool manual) {
  if (r.buffered_starts_size() >= kMaxBufferSize) {
    r.mutable_info()->set_buffer_dropped(r.info().buffer_dropped() + 1);
    return;
  }
  BufferedStart* s = r.add_buffered_starts();
  *s->mutable_nominal_time() = ToProtoTime(nominal);
  *s->mutable_actual_time() = ToProtoTime(actual);
  s->set_overlap_policy(policy);
  s->set_manual(manual);
  s->set_sequence(r.next_sequence());
  r.set_next_sequence(r.next_sequence() + 1);
}

std::optional<absl::Time> ProcessTimeRange(ScheduleRecord& r, const CompiledSpec& spec,
                                           absl::Time start, absl::Time end,
                                           enums::ScheduleOverlapPolicy policy, bool manual,
                                           int limit, absl::Time* resume) {
  if (resume != nullptr) *resume = end;
  // Paused or out of actions: the whole range is skipped (not counted as missed).
  if (!manual && !CanTakeScheduledAction(r)) return std::nullopt;
  const std::string seed = JitterSeed(r);
  const absl::Duration window = CatchupWindow(r);
  const absl::Time update_time =
      r.info().has_update_time() ? FromProtoTime(r.info().update_time()) : absl::InfinitePast();
  int taken = 0;
  std::optional<NextTime> next = spec.GetNextTime(seed, start);
  for (; next.has_value() && next->next <= end; next = spec.GetNextTime(seed, next->next)) {
    if (!manual && update_time > next->next) continue;  // from before the last update
    if (!manual && end - next->next > window) {
      r.mutable_info()->set_missed_catchup_window(r.info().missed_catchup_window() + 1);
      continue;
    }
    AddStart(r, next->nominal, next->next, policy, manual);
    if (limit > 0 && ++taken >= limit) return next->next;
  }
  // A time whose nominal time has passed but whose jitter has not: looked at again next time
  // (from just before its nominal time, whole seconds, so no earlier time comes back).
  if (resume != nullptr && next.has_value() && next->nominal <= end) {
    *resume = std::max(start, next->nominal - absl::Seconds(1));
  }
  return std::nullopt;
}

BufferAction ProcessBuffer(const ScheduleRecord& r, bool is_running) {
  BufferAction action;
  for (const BufferedStart& start : r.buffered_starts()) {
    const enums::ScheduleOverlapPolicy policy = ResolveOverlap(r, start.overlap_policy());
    if (policy == enums::SCHEDULE_OVERLAP_POLICY_ALLOW_ALL) {
      action.overlapping_starts.push_back(start);
      continue;
    }
    if (!is_running && !action.non_overlapping_start.has_value()) {
      action.non_overlapping_start = start;
      continue;
    }
    switch (policy) {
      case enums::SCHEDULE_OVERLAP_POLICY_BUFFER_ONE:
        if (action.new_buffer.empty()) {
          action.new_buffer.push_back(start);
        } else {
          ++action.overlap_skipped;
        }
        break;
      case enums::SCHEDULE_OVERLAP_POLICY_BUFFER_ALL:
        action.new_buffer.push_back(start);
        break;
      case enums::SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER:
        if (is_running) {
          action.need_cancel = true;  // started once the running one is closed
          action.new_buffer.push_back(start);
        } else {
          action.non_overlapping_start = start;  // replaces the one not started yet
        }
        break;
      case enums::SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER:
        if (is_running) {
          action.need_terminate = true;
          action.new_buffer.push_back(start);
        } else {
          action.non_overlapping_start = start;
        }
        break;
      default:  // SKIP
        ++action.overlap_skipped;
        break;
    }
  }
  // The running ones are about to be cancelled or terminated: starting overlapping ones now
  // would only see them cancelled too.
  if (action.need_cancel || action.need_terminate) action.overlapping_starts.clear();
  return action;
}

std::string ActionWorkflowId(const ScheduleRecord& r, const BufferedStart& start) {
  const int64_t seconds = start.nominal_time().seconds();
  return absl::StrCat(r.schedule().action().start_workflow().workflow_id(), "-",
                      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(seconds),
                                       absl::UTCTimeZone()));
}

std::string ActionRequestId(const ScheduleRecord& r, const BufferedStart& start) {
  const std::string key = absl::StrCat(r.namespace_id(), "\n", r.schedule_id(), "\n",
                                       start.sequence(), "\n",
                                       absl::ToUnixMillis(FromProtoTime(start.nominal_time())), "\n",
                                       absl::ToUnixMillis(FromProtoTime(start.actual_time())));
  const uint64_t a = Fingerprint64(key);
  const uint64_t b = Fingerprint64(absl::StrCat(key, "\n2"));
  // UUID layout (version 8, "custom"), so tools that expect a UUID accept it.
  return absl::StrCat("sched-", start.manual() ? "manual" : "auto", "-",
                      absl::Hex(a >> 32, absl::kZeroPad8), "-",
                      absl::Hex((a >> 16) & 0xffff, absl::kZeroPad4), "-",
                      absl::Hex(0x8000 | (a & 0x0fff), absl::kZeroPad4), "-",
                      absl::Hex(0x8000 | ((b >> 48) & 0x3fff), absl::kZeroPad4), "-",
                      absl::Hex(b & 0xffffffffffffULL, absl::kZeroPad12));
}

std::vector<absl::Time> FutureActionTimes(const ScheduleRecord& r, const CompiledSpec* spec, int n) {
  std::vector<absl::Time> out;
  if (spec == nullptr) return out;
  if (r.schedule().state().limited_actions()) {
    n = static_cast<int>(std::min<int64_t>(n, std::max<int64_t>(r.schedule().state().remaining_actions(), 0)));
  }
  const absl::Time update_time =
      r.info().has_update_time() ? FromProtoTime(r.info().update_time()) : absl::InfinitePast();
  const std::string seed = JitterSeed(r);
  absl::Time t = FromProtoTime(r.last_processed_time());
  for (int guard = 0; static_cast<int>(out.size()) < n && guard < 10'000; ++guard) {
    std::optional<NextTime> next = spec->GetNextTime(seed, t);
    if (!next.has_value()) break;
    t = next->next;
    if (update_time > t) continue;
    out.push_back(t);
  }
  return out;
}

namespace {

// NextWakeup for what is not in `starting`.
std::optional<absl::Time> NextWakeupOfTheRest(const ScheduleRecord& r, const CompiledSpec* spec,
                                              absl::Time now) {
  if (!r.ongoing_backfills().empty()) return now;  // backfills in progress
  if (!r.buffered_starts().empty()) {
    // Waiting for a running workflow to close: look again in a second.
    return r.info().running_workflows().empty() ? now : now + absl::Seconds(1);
  }
  if (spec == nullptr || !CanTakeScheduledAction(r)) return std::nullopt;
  std::optional<NextTime> next = spec->GetNextTime(JitterSeed(r), FromProtoTime(r.last_processed_time()));
  if (!next.has_value()) return std::nullopt;
  return next->next;
}

}  // namespace

std::optional<absl::Time> NextWakeup(const ScheduleRecord& r, const CompiledSpec* spec,
                                     absl::Time now) {
  std::optional<absl::Time> next = NextWakeupOfTheRest(r, spec, now);
  if (r.starting().empty()) return next;
  // Starts decided but not recorded: at once after a crash came between (no retry time), or
  // at the retry time of the earliest start that failed.
  absl::Time retry = absl::InfiniteFuture();
  for (const BufferedStart& s : r.starting()) retry = std::min(retry, FromProtoTime(s.retry_time()));
  retry = std::max(retry, now);
  return next.has_value() ? std::min(*next, retry) : retry;
}

std::optional<absl::Time> RetentionExpiry(const ScheduleRecord& r, const CompiledSpec* spec) {
  if (r.schedule().state().paused() || !r.buffered_starts().empty() || !r.starting().empty() ||
      !r.ongoing_backfills().empty()) {
    return std::nullopt;
  }
  const bool more = CanTakeScheduledAction(r) && spec != nullptr &&
                    spec->GetNextTime(JitterSeed(r), FromProtoTime(r.last_processed_time())).has_value();
  if (more) return std::nullopt;
  absl::Time last = FromProtoTime(r.info().create_time());
  if (r.info().has_update_time()) last = std::max(last, FromProtoTime(r.info().update_time()));
  if (r.info().recent_actions_size() > 0) {
    last = std::max(last, FromProtoTime(r.info().recent_actions().rbegin()->actual_time()));
  }
  return last + kFinishedScheduleRetention;
}

namespace {

temporal::api::schedule::v1::ScheduleSpec ShownSpec(const ScheduleRecord& r) {
  temporal::api::schedule::v1::ScheduleSpec spec = r.schedule().spec();
  CleanSpec(spec);
  return spec;
}

}  // namespace

temporal::api::workflowservice::v1::DescribeScheduleResponse DescribeOf(const ScheduleRecord& r,
                                                                      const CompiledSpec* spec) {
  temporal::api::workflowservice::v1::DescribeScheduleResponse out;
  *out.mutable_schedule() = r.schedule();
  *out.mutable_schedule()->mutable_spec() = ShownSpec(r);
  *out.mutable_info() = r.info();
  for (absl::Time t : FutureActionTimes(r, spec, kFutureActionCount)) {
    *out.mutable_info()->add_future_action_times() = ToProtoTime(t);
  }
  out.mutable_info()->set_buffer_size(r.buffered_starts_size());
  if (r.has_memo()) *out.mutable_memo() = r.memo();
  if (r.has_search_attributes()) *out.mutable_search_attributes() = r.search_attributes();
  out.set_conflict_token(EncodeConflictToken(r.conflict_token()));
  return out;
}

temporal::api::schedule::v1::ScheduleListEntry ListEntryOf(const ScheduleRecord& r,
                                                           const CompiledSpec* spec) {
  temporal::api::schedule::v1::ScheduleListEntry out;
  out.set_schedule_id(r.schedule_id());
  if (r.has_memo()) *out.mutable_memo() = r.memo();
  if (r.has_search_attributes()) *out.mutable_search_attributes() = r.search_attributes();
  auto* info = out.mutable_info();
  *info->mutable_spec() = ShownSpec(r);
  info->mutable_spec()->clear_timezone_data();
  if (r.schedule().action().has_start_workflow()) {
    *info->mutable_workflow_type() = r.schedule().action().start_workflow().workflow_type();
  }
  info->set_notes(r.schedule().state().notes());
  info->set_paused(r.schedule().state().paused());
  const int recent = r.info().recent_actions_size();
  for (int i = std::max(0, recent - kRecentActionCountForList); i < recent; ++i) {
    *info->add_recent_actions() = r.info().recent_actions(i);
  }
  for (absl::Time t : FutureActionTimes(r, spec, kFutureActionCountForList)) {
    *info->add_future_action_times() = ToProtoTime(t);
  }
  return out;
}

namespace {

absl::Status BadQuery(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("invalid query: ", what));
}

// Words, quoted strings (with '' or \\ escapes) and operators of a query.
absl::StatusOr<std::vector<std::string>> Tokens(const std::string& q) {
  std::vector<std::string> out;
  for (size_t i = 0; i < q.size();) {
    const char c = q[i];
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '\'' || c == '"') {
      std::string text(1, c);
      size_t j = i + 1;
      for (; j < q.size() && q[j] != c; ++j) {
        if (q[j] == '\\' && j + 1 < q.size()) ++j;
        text += q[j];
      }
      if (j >= q.size()) return BadQuery("a quoted value is not closed");
      out.push_back(text);
      i = j + 1;
    } else if (c == '!' && i + 1 < q.size() && q[i + 1] == '=') {
      out.push_back("!=");
      i += 2;
    } else if (c == '=') {
      out.push_back("=");
      ++i;
    } else {
      size_t j = i;
      while (j < q.size() && !absl::ascii_isspace(static_cast<unsigned char>(q[j])) && q[j] != '=' &&
             q[j] != '!' && q[j] != '\'' && q[j] != '"') {
        ++j;
      }
      if (j == i) return BadQuery(absl::StrCat("unexpected '", std::string(1, c), "'"));
      out.push_back(q.substr(i, j - i));
      i = j;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<ScheduleQuery> ParseScheduleQuery(const std::string& query) {
  ScheduleQuery out;
  if (query.size() > 4096) return BadQuery("it is longer than 4096 bytes");
  absl::StatusOr<std::vector<std::string>> tokens = Tokens(query);
  if (!tokens.ok()) return tokens.status();
  const std::vector<std::string>& t = *tokens;
  for (size_t i = 0; i < t.size();) {
    if (!out.conditions.empty()) {
      if (absl::AsciiStrToUpper(t[i]) != "AND") {
        return BadQuery(absl::StrCat("expected AND, found ", t[i], " (conditions are joined by AND)"));
      }
      if (++i >= t.size()) return BadQuery("it ends after AND");
    }
    if (i + 2 >= t.size()) return BadQuery("a condition is incomplete (Field = 'value')");
    ScheduleQuery::Condition c{t[i], absl::AsciiStrToUpper(t[i + 1]), t[i + 2]};
    i += 3;
    if (c.field != "ScheduleId" && c.field != "WorkflowType" && c.field != "TemporalSchedulePaused") {
      return BadQuery(absl::StrCat("unknown field ", c.field,
                                   " (schedules are listed by ScheduleId, WorkflowType or "
                                   "TemporalSchedulePaused)"));
    }
    if (c.op != "=" && c.op != "!=" && c.op != "STARTS_WITH") {
      return BadQuery(absl::StrCat("operator ", c.op, " is not supported (=, != or STARTS_WITH)"));
    }
    const bool quoted = !c.value.empty() && (c.value[0] == '\'' || c.value[0] == '"');
    if (c.field == "TemporalSchedulePaused") {
      const std::string v = absl::AsciiStrToLower(quoted ? c.value.substr(1) : c.value);
      if ((v != "true" && v != "false") || c.op == "STARTS_WITH") {
        return BadQuery("TemporalSchedulePaused is compared with = or != to true or false");
      }
      c.value = v;
    } else {
      if (!quoted) return BadQuery(absl::StrCat("the value of ", c.field, " must be quoted"));
      c.value = c.value.substr(1);
    }
    out.conditions.push_back(std::move(c));
  }
  return out;
}

bool ScheduleQuery::Matches(const ScheduleRecord& r) const {
  for (const Condition& c : conditions) {
    std::string actual;
    if (c.field == "ScheduleId") {
      actual = r.schedule_id();
    } else if (c.field == "WorkflowType") {
      actual = r.schedule().action().start_workflow().workflow_type().name();
    } else {
      actual = r.schedule().state().paused() ? "true" : "false";
    }
    const bool holds = c.op == "STARTS_WITH" ? absl::StartsWith(actual, c.value)
                                             : (actual == c.value) == (c.op == "=");
    if (!holds) return false;
  }
  return true;
}

std::string EncodeConflictToken(int64_t token) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<uint64_t>(token) >> (56 - 8 * i)) & 0xff);
  return out;
}

int64_t DecodeConflictToken(const std::string& bytes) {
  if (bytes.size() < 8) return 0;
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
  return static_cast<int64_t>(v);
}

}  // namespace tock::server::scheduler
