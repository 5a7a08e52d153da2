// Fires the timer service's timers of the history shards this host owns (issue 14).
//
// A timer is a row of the TimerStore; this engine holds, per owned shard, a window of them in
// memory: a loader pages each shard's rows by (due, namespace id, timer id) up to now +
// window (at most max_armed in memory) every load_interval, at once when a shard is taken
// and when the clock moves (Wake); a timer the service writes inside the loaded part of its
// shard is armed at once (OnWritten), one beyond it is left to the loader. Ownership is read
// from the ShardController at every pass: a shard given up is dropped from memory, and one
// whose range id changed (taken again, or renewed) is loaded again from its beginning.
//
// Firing (one thread): a timer is fired once the clock reaches its due time, never before.
// Its attempt is RECORDED FIRST (state FIRING, attempts + 1, its passed due time kept),
// fenced with the shard's range id, and only then is the callback sent through the
// CallbackSender. So:
//  - a crash (kill -9) after the record leaves a FIRING row whose due time has passed: the
//    shard's next owner (this host restarted, or another) sends it again. Duplicates happen
//    only for callbacks in flight at the crash; nothing is lost (at least once);
//  - a stale owner (its range id no longer the shard's) records nothing and sends nothing.
// Due timers are recorded in batches (one transaction for up to `batch` timers), so firing
// costs two commits per batch, not per timer.
//
// Outcomes (in batches), each a compare-and-swap on the revision the attempt wrote, fenced
// again. While the firer fires, it records the outcomes waiting in the transaction of its next
// attempts, so the store has one writer and the firer never waits behind another's commit;
// when it has nothing to fire, the writer thread records them after outcome_interval:
//   kSucceeded   SUCCEEDED
//   kReschedule  PENDING at the answer's time (attempts start again)
//   kStop (4xx)  FAILED with the answer as last_error
//   kRetry       PENDING after the retry policy's delay with last_error, or FAILED with
//                last_error when the policy allows no more attempts.
// A SUCCEEDED or FAILED timer is then due again at the end of its retention
// (TimerRetention), when its owner removes it (a fenced write at its revision), as it does a
// DELETED one. The retention is looked up again then: a timer whose retention is not over (a
// lookup failed when it finished, or the namespace's retention grew) is written due again at
// its end instead.
// An outcome that finds the timer changed (the API replaced it meanwhile: the store's
// TimerWriteRefusal::kChanged for that row) is dropped, and the new version armed; one that
// finds the shard taken (kFenced) is dropped (the new owner sends again). Any other error is
// the whole transaction's (a deadlock too), and drops nothing: a store error on an outcome
// keeps it in memory and writes it again after store_retry. One on an attempt's record leaves
// the timer to the store: whether the write landed is not known, so the shard is read again
// at the loader's next pass and the timer armed as stored.
//
// Memory per timer: the firer moves a timer out of its entry into the attempt (the entry
// keeps only its revision while the callback is in flight), and the versions move on from
// there: one copy of a timer per attempt (the outcome applied), not one per step.
//
// Thread safety: every method may be called from any thread. Lifetime: Stop() (or the
// destructor) before the sender and the store go; callbacks answered after Stop are ignored.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/random/random.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "server-core/history/shard_controller.h"
#include "server-core/persistence/timer_store.h"
#include "server-core/timers/callback_sender.h"
#include "server-core/timers/timer_retention.h"

namespace tock::server::timers {

class TimerEngine {
 public:
  struct Options {
    absl::Duration window = absl::Seconds(30);       // loaded ahead of now
    absl::Duration load_interval = absl::Seconds(1);
    int32_t page = 1000;                             // rows per load query
    // Timers in memory: the loader stops paging in at this many; timers written inside
    // the loaded part are armed regardless.
    size_t max_armed = 200'000;
    size_t batch = 1000;                             // writes per transaction
    // After a batch smaller than `batch`, the firer waits this long before the next one, so
    // that timers due a millisecond apart (10,000 a second) share a transaction instead of
    // costing one each, which took the processor the callbacks need. Adds at most this much
    // to a timer's lateness. 3 ms: at 18,000 a second a batch is about 50 timers, which the
    // sender (64 in flight) starts at once; 10 ms batches queued there (p50 lateness 14-41 ms
    // against 4-5). Smaller batches cost the firer no more once in-memory commits stopped
    // scanning the page cache (sqlite_db.cc); before that 3 ms cost 2.5 us per callback.
    absl::Duration min_batch_interval = absl::Milliseconds(3);
    // How long outcomes are left to the firer after it last took them (while it fires, it
    // records them with its attempts), and the writer's wait after a batch smaller than
    // `batch`: nothing waits for an outcome's record but the timer's state.
    absl::Duration outcome_interval = absl::Milliseconds(50);
    // When finished timers are removed (their namespace's retention after they finished);
    // null: they are kept. Outlives the engine.
    TimerRetention* retention = nullptr;
    absl::Duration store_retry = absl::Seconds(1);   // after a store error on an outcome
  };

  struct Stats {
    uint64_t attempts = 0;      // attempts recorded (and so callbacks sent)
    uint64_t succeeded = 0;
    uint64_t rescheduled = 0;
    uint64_t retried = 0;       // kRetry outcomes with a retry left
    uint64_t failed = 0;        // FAILED by 4xx or by the policy
    uint64_t fenced = 0;        // writes refused because the shard was taken
    uint64_t superseded = 0;    // writes that found the timer changed by the API
    uint64_t store_errors = 0;
    uint64_t expired = 0;       // finished timers removed after their retention
    // Finished timers due whose retention, looked up again, was not over (or could not be
    // read): written due again instead of removed.
    uint64_t retention_postponed = 0;
    uint64_t load_passes = 0;   // passes of the loader over the shards
    // Looks of the firer that found nothing due at the clock's now: everything due by then
    // was fired or removed (WaitForDue waits for one, so that a test can check that
    // something did not happen yet).
    uint64_t idle_looks = 0;
  };

  TimerEngine(persistence::TimerStore& store, history::ShardController& shards,
              CallbackSender& sender, Clock& clock, Logger& logger, Options options);
  TimerEngine(persistence::TimerStore& store, history::ShardController& shards,
              CallbackSender& sender, Clock& clock, Logger& logger)
      : TimerEngine(store, shards, sender, clock, logger, Options()) {}
  ~TimerEngine();  // Stop()

  void Start();
  // No new attempts or writes; the threads end. Idempotent.
  void Stop();

  // A timer the service wrote (after its commit).
  void OnWritten(const persistence::StoredTimer& timer);
  // The clock moved (time skipping): what is now due fires without waiting.
  void Wake();
  // Time skipping and tests: wakes the engine and returns once every timer due by the
  // clock's now (as it is at the call) has been looked at: a load pass begun after the call
  // has ended without a store error (what is due is in memory), and then the firer has found
  // nothing due (it recorded and sent, or removed, all that was). A check that a timer has
  // NOT fired, made after this, so fails when the engine fires early, however slow the
  // machine. False when `timeout` (real time) passed first or the engine is not running.
  bool WaitForDue(absl::Duration timeout);

  Stats stats() const;
  // Timers held in memory (armed or in flight).
  size_t held() const;
  // Callbacks answered whose outcome is not recorded yet.
  size_t unrecorded_outcomes() const;

 private:
  struct Entry {
    persistence::StoredTimer timer;  // the newest version known
    bool in_flight = false;          // its attempt was recorded; the outcome is awaited
    absl::Time armed_at;             // its key in queue_ while armed (not in flight)
  };
  struct ShardWindow {
    int64_t range_id = history::ShardController::kNotOwned;
    persistence::TimerDueCursor covered;  // rows before it are in memory (or done)
  };
  // An answered callback, waiting to be written.
  struct Outcome {
    persistence::StoredTimer attempted;  // as the attempt wrote it
    CallbackOutcome outcome;
  };
  // An outcome applied to its attempt: the write that records it (at the attempt's revision).
  struct OutcomeWrite {
    persistence::TimerWrite write;
    CallbackOutcome::Kind kind = CallbackOutcome::Kind::kSucceeded;
    absl::Time not_before;  // a write that failed on a store error waits a little
  };
  // Where callbacks answer: outlives the engine if the sender answers late.
  struct Inbox {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Outcome> outcomes;
    // Outcomes the firer recorded with its attempts and the store failed: for the writer to
    // write again after store_retry.
    std::vector<OutcomeWrite> failed;
    // When the firer last took outcomes (real time): while it fires, it records the outcomes
    // with its attempts, and the writer leaves them to it.
    std::chrono::steady_clock::time_point firer_took;
    bool closed = false;
  };

  // Entries by namespace id + '\0' + timer id; a node map, so that queue_ can point at them.
  using Entries = absl::node_hash_map<std::string, Entry>;
  using Node = Entries::value_type;
  // The due queue's order: by due time, then by key, which is the order of the store's
  // indexes. Timers due in the same millisecond (a burst) are so fired, and their attempts
  // and outcomes written, in key order: neighbouring rows on the same b-tree pages, where an
  // order by address wandered over the whole table (about 40% more per write in SQLite).
  struct DueOrder {
    bool operator()(const std::pair<absl::Time, Node*>& a,
                    const std::pair<absl::Time, Node*>& b) const {
      if (a.first != b.first) return a.first < b.first;
      return a.second->first < b.second->first;
    }
  };

  // Under mu_: the key of a timer, built in a buffer reused for every lookup (a key is
  // longer than a short string: one allocation per lookup otherwise).
  const std::string& LookupKeyLocked(const std::string& namespace_id, const std::string& timer_id);
  void LoaderLoop();
  void FirerLoop();
  void WriterLoop();
  // One pass over the shards: ownership, then each owned shard's rows up to the horizon.
  // False when a store error (or Stop) left a shard's due rows not read.
  bool LoadAll();
  // Holds load_mu_ (and mu_ inside).
  void Consider(persistence::StoredTimer timer);
  // Under mu_: arms `timer` (replacing an older armed version), or only keeps it as the
  // newest version while its attempt is in flight.
  void ArmLocked(persistence::StoredTimer timer);
  void ForgetLocked(Entries::iterator it);
  void DropShardLocked(int32_t shard);
  // Writes a batch fenced with each shard's current range id (held across the write).
  std::vector<absl::Status> WriteFenced(std::vector<persistence::TimerWrite>& writes);
  // Records the attempts of `due` and the outcomes in one transaction, then sends `due`.
  void FireBatch(std::vector<persistence::StoredTimer> due, std::vector<OutcomeWrite> outcomes);
  // The write of each timer due: an attempt's record, or for a finished timer its removal
  // (PlanRemoval).
  std::vector<persistence::TimerWrite> PlanFiring(std::vector<persistence::StoredTimer> due,
                                                  absl::Time now);
  // A finished timer due: removed when its namespace's retention (looked up again) is over;
  // otherwise written due again at its end, or soon when the lookup failed.
  void PlanRemoval(persistence::TimerWrite& w, absl::Time now);
  // After the write of PlanFiring's `writes` answered `statuses`: counts, forgets, re-arms or
  // reads shards again; returns the attempts recorded, to send.
  std::vector<persistence::StoredTimer> SettleFiring(std::vector<persistence::TimerWrite>& writes,
                                                     const std::vector<absl::Status>& statuses);
  // Hands each recorded attempt to the sender; its outcome comes back to the inbox.
  void SendAttempts(std::vector<persistence::StoredTimer> send);
  // The firer's share of the inbox: what is waiting (at most `batch`), applied.
  std::vector<OutcomeWrite> TakeOutcomes(absl::BitGen& bits);
  // Under inbox_->mu: what is waiting, at most `batch`.
  std::deque<Outcome> TakeAnsweredLocked();
  // Each outcome applied to its attempt (Apply), with its retry jitter drawn from `bits`.
  std::vector<OutcomeWrite> ApplyAll(std::deque<Outcome> answered, absl::BitGen& bits);
  // Those that failed with a store error, to be written again after store_retry.
  std::vector<OutcomeWrite> WriteOutcomes(std::vector<OutcomeWrite> batch);
  // Writes `writes` (attempts) and `outcomes` in one fenced transaction and settles the
  // outcomes; those to write again after a store error go to `failed`. The attempts' statuses.
  std::vector<absl::Status> WriteWithOutcomes(std::vector<persistence::TimerWrite>& writes,
                                              std::vector<OutcomeWrite>& outcomes,
                                              std::vector<OutcomeWrite>& failed);
  // After the write of `batch` (its writes back in place) answered `statuses`: counts,
  // re-arms, or returns those to write again.
  std::vector<OutcomeWrite> SettleOutcomes(std::vector<OutcomeWrite>& batch,
                                           const absl::Status* statuses);
  // The timer as the outcome of its attempt leaves it.
  persistence::StoredTimer Apply(persistence::StoredTimer attempted, const CallbackOutcome& outcome,
                                 absl::Time now, double jitter);

  persistence::TimerStore& store_;
  history::ShardController& shards_;
  CallbackSender& sender_;
  Clock& clock_;
  Logger& logger_;
  const Options options_;

  // Held across a shard's load query and the move of its window, and by Consider: a row
  // written while its shard loads is either seen by the query or armed by Consider.
  std::mutex load_mu_;
  std::vector<ShardWindow> windows_;  // by shard - 1, under load_mu_

  mutable std::mutex mu_;
  std::condition_variable cv_;  // the firer's and the loader's wake-ups
  Entries entries_;
  std::string lookup_key_;  // LookupKeyLocked's buffer
  // Armed, by due time and key.
  std::set<std::pair<absl::Time, Node*>, DueOrder> queue_;
  bool stopping_ = false;
  bool woken_ = false;
  Stats stats_;
  // WaitForDue's: the loader's passes begun (each reads the clock after it is counted), the
  // last one that read every owned shard, and the signal that a pass ended or the firer
  // found nothing due.
  uint64_t load_passes_begun_ = 0;
  uint64_t last_clean_pass_ = 0;
  std::condition_variable due_cv_;

  std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
  std::atomic<bool> started_{false};
  std::thread loader_, firer_, writer_;
};

}  // namespace tock::server::timers
