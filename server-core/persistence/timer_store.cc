#include "server-core/persistence/timer_store.h"

#include <cstdint>
#include <limits>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "server-core/persistence/execution_store.h"

namespace tock::persistence {

namespace {

constexpr char kRefusalPayload[] = "tock.persistence/timer-write-refusal";

absl::Status Marked(absl::Status s, const char* refusal) {
  s.SetPayload(kRefusalPayload, absl::Cord(refusal));
  return s;
}

}  // namespace

TimerWriteRefusal TimerWriteRefusalOf(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kFailedPrecondition) return TimerWriteRefusal::kNone;
  const auto refusal = status.GetPayload(kRefusalPayload);
  if (!refusal.has_value()) return TimerWriteRefusal::kNone;
  if (*refusal == "fenced") return TimerWriteRefusal::kFenced;
  if (*refusal == "changed") return TimerWriteRefusal::kChanged;
  return TimerWriteRefusal::kNone;
}

absl::Status ChangedConcurrently(const TimerWrite& w) {
  return Marked(absl::FailedPreconditionError(absl::StrCat(
                    "timer ", w.timer.timer_id.substr(0, 255),
                    " changed concurrently (not at revision ", w.expected_revision, ")")),
                "changed");
}

absl::Status FencedOut(const TimerWrite& w) {
  return Marked(ShardOwnedElsewhere(w.timer.shard_id,
                                    absl::StrCat("range id ", w.range_id, " is no longer ours"),
                                    "the timer was not written"),
                "fenced");
}

absl::Status CheckAttemptRecord(const TimerWrite& w) {
  if (!w.attempt || w.timer.record.state() == tock::timer::v1::TIMER_STATE_FIRING) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "timer ", w.timer.timer_id.substr(0, 255), ": an attempt's record must be FIRING"));
}

int64_t TimerDueMillis(absl::Time due) {
  if (due == absl::InfiniteFuture()) return std::numeric_limits<int64_t>::max();
  if (due == absl::InfinitePast()) return std::numeric_limits<int64_t>::min();
  // Rounded up: a timer due at 10.0004 s is loaded at 10.001 s, never at 10.000 s.
  return absl::ToUnixMillis(due) + (due > absl::FromUnixMillis(absl::ToUnixMillis(due)) ? 1 : 0);
}

absl::Time TimerDueFromMillis(int64_t ms) {
  if (ms == std::numeric_limits<int64_t>::max()) return absl::InfiniteFuture();
  if (ms == std::numeric_limits<int64_t>::min()) return absl::InfinitePast();
  return absl::FromUnixMillis(ms);
}

}  // namespace tock::persistence
