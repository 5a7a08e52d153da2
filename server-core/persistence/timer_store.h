// The durable timers of the timer service (issue 14): one row per (namespace id, timer id),
// kept in the history shard its key hashes to, and written only by that shard's owner.
//
// Every write is fenced like a workflow commit (execution_store.h): it carries the range id
// its writer holds, and the store writes it only when that is still the shard's range id
// (SQLite: in the same IMMEDIATE transaction; PostgreSQL: the shard's row read FOR SHARE in
// the write's transaction, so a steal waits for it). A server that lost the shard writes
// nothing. Every write is also a compare-and-swap on the row's revision, so the engine's
// outcome of an attempt never overwrites what the API wrote meanwhile (an update, a
// replacement), and two writers of one timer never lose each other's changes.
//
// `due` is when the owner must act on a timer: a PENDING timer's next firing; a FIRING
// one's due time before its attempt, which has passed (its outcome was never recorded: the
// shard's next owner sends it again, the "at least once" of a crash); none (InfiniteFuture)
// when nothing is left to do.
// The engine pages a shard's rows by (due, namespace id, timer id).
//
// Lists by state read the stores' state index, which holds a timer under its ListedState:
// FIRING is listed with PENDING (and told apart by the row), so that an attempt's record
// (PENDING -> FIRING) leaves the index alone.
//
// Thread safety: implementations are safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tock/timer/v1/service.pb.h"

namespace tock::persistence {

using TimerRecord = tock::timer::v1::Timer;

struct StoredTimer {
  std::string namespace_id;
  std::string timer_id;
  int32_t shard_id = 0;
  int64_t revision = 0;  // 1 when first written, +1 by every write
  // Stored in whole milliseconds, rounded up (so a timer is never loaded as due before its
  // time); InfiniteFuture: nothing to do.
  absl::Time due = absl::InfiniteFuture();
  TimerRecord record;  // namespace (the name), id, state, attempts ...
};

// One fenced compare-and-swap write of a timer.
struct TimerWrite {
  StoredTimer timer;  // timer.revision is set to expected_revision + 1 when written
  int64_t range_id = 0;           // the range id of timer.shard_id its writer holds
  int64_t expected_revision = 0;  // 0: no timer may be stored under this key yet
  // Deletes the row instead (a finished timer past its retention), at expected_revision and
  // fenced like any write; timer.record is not read.
  bool remove = false;
  // An attempt's record (the engine's PENDING -> FIRING write; timer.record's state must be
  // FIRING, or the write fails INVALID_ARGUMENT): the stored due time is kept (timer.due is
  // not read; the timer is due already), and so is the row's place in the state index
  // (ListedState). Rewriting neither spares both indexes a delete and an insert per firing.
  bool attempt = false;
};

// The state a timer is listed under in the stores' state index: its own, but FIRING is
// listed as PENDING.
inline int ListedState(int state) {
  return state == tock::timer::v1::TIMER_STATE_FIRING ? tock::timer::v1::TIMER_STATE_PENDING
                                                      : state;
}

// A position in a shard's due timers.
struct TimerDueCursor {
  absl::Time due = absl::InfinitePast();
  std::string namespace_id;
  std::string timer_id;
};

class TimerStore {
 public:
  virtual ~TimerStore() = default;

  // Applies each write on its own, all in one transaction (a batch costs one commit): the
  // status of writes[i] is OK (and writes[i].timer.revision set) or a refusal of that write
  // alone, FAILED_PRECONDITION marked with its TimerWriteRefusal (TimerWriteRefusalOf):
  //   kFenced   "shard N is owned by another server": its range id is not the shard's;
  //   kChanged  the stored revision is not expected_revision: another write came first, or
  //             the timer is gone.
  // When the transaction itself fails, every status is its error (unmarked, whatever its
  // code: PostgreSQL's deadlock or serialization failure is ABORTED) and nothing is written.
  virtual std::vector<absl::Status> Write(std::vector<TimerWrite>& writes) = 0;

  // NOT_FOUND when there is none.
  virtual absl::StatusOr<StoredTimer> Get(const std::string& namespace_id,
                                          const std::string& timer_id) = 0;

  // The namespace's timers by id, those after `after_id` ("" for the first), only those in
  // `state` unless it is 0, at most `limit`.
  virtual absl::StatusOr<std::vector<StoredTimer>> List(const std::string& namespace_id,
                                                        const std::string& after_id, int state,
                                                        int32_t limit) = 0;

  // The shard's timers with something to do before `until` and after `after`, ordered by
  // (due, namespace id, timer id), at most `limit`.
  virtual absl::StatusOr<std::vector<StoredTimer>> LoadDue(int32_t shard_id,
                                                           const TimerDueCursor& after,
                                                           absl::Time until, int32_t limit) = 0;
};

// Why one write of a batch was refused while the others went on (TimerStore::Write). The
// mark travels as a payload of the status, so that no error of the whole transaction, whatever
// its code, can be taken for a refusal of one row: a writer that took a deadlock for "this
// timer changed" would drop the timer (review P1-10).
enum class TimerWriteRefusal {
  kNone,     // OK, or an error of the whole transaction (nothing written)
  kFenced,   // the shard is owned by another server
  kChanged,  // another revision is stored, or none
};
TimerWriteRefusal TimerWriteRefusalOf(const absl::Status& status);

// kChanged: `w` found another revision stored, or none (shared by the backends).
absl::Status ChangedConcurrently(const TimerWrite& w);
// kFenced: `w`'s range id is not its shard's.
absl::Status FencedOut(const TimerWrite& w);
// INVALID_ARGUMENT for an attempt's record whose timer is not FIRING (it would leave the row
// listed under another state than its own); OK for any other write.
absl::Status CheckAttemptRecord(const TimerWrite& w);

// `due` as stored: milliseconds since the epoch, rounded up; INT64_MAX for none. Shared by
// the backends so that both round alike.
int64_t TimerDueMillis(absl::Time due);
absl::Time TimerDueFromMillis(int64_t ms);

}  // namespace tock::persistence
