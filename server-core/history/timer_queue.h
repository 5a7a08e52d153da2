// The durable timers of the history shards, in memory only as far as they are due soon.
//
// Every timer is a row in the store (written in the transaction that made it, deleted by
// the one that fires it, or by a change that retires it: a timeout whose task completed);
// this queue is a bounded window over them:
//  - a loader pages each shard's rows in (fire time, task id) order up to now + kWindow,
//    at most max_armed in memory, every kLoadInterval and when the clock is moved (Wake);
//    the rest waits in the store, so a million distant timers cost no memory;
//  - a timer committed inside the loaded part of its shard is armed at once (Add), one
//    beyond it is left for the loader; one retired while armed is dropped when due
//    (Remove), not fired to find itself stale;
//  - a due timer is handed from the timer thread to a small executor of its own, so the
//    timer thread, which also expires long polls, never waits on the database;
//  - a firing that fails (busy database, lost shard, injected fault) is retried with
//    exponential backoff (1 s doubling to 1 min) and logged; its row stays stored, so a
//    crash loses nothing;
//  - only the shards this host owns are loaded (Activate / Deactivate as ownership moves):
//    a timer of a shard given up is dropped from memory, not fired, and its new owner
//    loads it from the store.
//
// Thread safety: every method may be called from any thread. Lifetime: the TimerThread
// holds callbacks into this queue, so call Stop(), then destroy the TimerThread (which drops
// them), then this queue (the history engine and the server do it in that order).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "lib/common/blocking_pool.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/timer_thread.h"
#include "server-core/observability/server_metrics.h"
#include "server-core/persistence/execution_store.h"

namespace tock::server::history {

class TimerQueue {
 public:
  // Fires one timer: its effect and the deletion of its row in one transaction. OK or
  // NOT_FOUND (nothing left to do) end it; anything else is retried.
  using FireFn = std::function<absl::Status(const persistence::TimerTaskRow&)>;

  struct Options {
    absl::Duration window = absl::Minutes(2);        // loaded ahead of now
    absl::Duration load_interval = absl::Seconds(10);
    int32_t page = 1000;                              // rows per query
    // Timers in memory: the loader stops paging in at this many (so at most this plus one
    // page); timers committed inside the loaded part are armed regardless.
    size_t max_armed = 200000;
    int executor_threads = 2;
    size_t executor_queue = 4096;
  };

  TimerQueue(persistence::ExecutionStore& store, int32_t shard_count, TimerThread& timers,
             Clock& clock, Logger& logger, FireFn fire, Options options);
  TimerQueue(persistence::ExecutionStore& store, int32_t shard_count, TimerThread& timers,
             Clock& clock, Logger& logger, FireFn fire)
      : TimerQueue(store, shard_count, timers, clock, logger, std::move(fire), Options()) {}
  ~TimerQueue();  // Stop()

  // Loads the first window of every active shard, then starts the loader.
  absl::Status Start();
  // This host owns `shard` from now on: its timers are loaded (at once when started; a
  // failed load is logged and retried by the loader).
  void Activate(int32_t shard);
  // This host gave `shard` up: its timers in memory are dropped unfired, its rows left to
  // the new owner.
  void Deactivate(int32_t shard);
  // A timer row was committed.
  void Add(const persistence::TimerTaskRow& row);
  // A commit deleted a timer row (retired it: the run moved on). If it is armed here it is
  // dropped when due instead of fired: firing it would only find it stale, in a transaction
  // that rewrites its run for nothing.
  void Remove(const persistence::TimerTaskRow& row);
  // Rows of `shard` may have been committed without Add (a write whose answer was lost):
  // its window is read again from the store, as for a shard just taken, if this host still
  // has the shard. Timers armed before are dropped when due (an older generation) and armed
  // again by the read, so none fires twice from memory. A failed read is the loader's.
  absl::Status Reread(int32_t shard);
  // The clock moved (time skipping): loads what is now due, at once.
  void Wake();
  // No new firings; waits for those running. Idempotent.
  void Stop();
  // For tests on a ManualClock: returns once every job due at or before the clock's now
  // (when called) has run (fired, dropped, or failed and put back for its retry). So a
  // check that a timer has NOT fired yet, made after it, fails when the queue is wrong and
  // never passes only because the machine was slow. Call Wake() first if the clock moved
  // beyond the loaded window. Not from a callback of the TimerThread or a job.
  void WaitForDueForTest();

  // Other background work of the history service that must be retried until it is done
  // (a transfer task: start a child, tell a parent): runs `work` on the executor, and
  // again with the same backoff and logging while it fails with anything but NOT_FOUND.
  // `what` and the ids name it in the log.
  struct Ids {
    std::string namespace_id, workflow_id, run_id;
  };
  // The first run is after `delay` (the caller usually tried once already).
  void RunWithRetries(std::function<absl::Status()> work, std::string what, Ids ids,
                      absl::Duration delay);

  // Timers held in memory (armed, retrying or being fired).
  size_t armed() const;
  // Lateness of firings and failures of jobs, counted here (set once, before Start; must
  // outlive this).
  void SetMetrics(const ServerMetrics& metrics) { metrics_ = &metrics; }

 private:
  // Rows of a shard ordered before `covered` are in memory (or fired); rows at or after it
  // are the loader's.
  struct ShardWindow {
    persistence::TimerCursor covered;
    bool active = false;
  };

  void LoaderLoop();
  // One pass over every shard up to now + window; logs and keeps going on errors.
  void LoadAll();
  absl::Status LoadShard(int32_t shard, absl::Time horizon);
  absl::Time Horizon() const;
  // One piece of work that runs on the executor at `due` and is retried until done.
  // A timer row's key: (shard, fire time in ms, task id).
  using TimerKey = std::tuple<int32_t, int64_t, int64_t>;
  static TimerKey KeyOf(const persistence::TimerTaskRow& row);
  struct Job {
    std::function<absl::Status()> work;
    std::string what;
    Ids ids;
    absl::Time due;
    int attempt = 0;      // failures so far
    bool timer = false;   // counts in armed_ and reports lateness
    int32_t shard = 0;    // a timer's shard, and its generation when armed
    uint64_t generation = 0;
    TimerKey key;         // a timer's row
  };
  // Whether a timer job's row was removed (and forgets it): the job is then dropped.
  bool TakeRemoved(const Job& job);
  // Forgets removed rows no job came for within kRemovedKept (each loader pass), so that
  // removed_ stays bounded.
  void ForgetOldRemoved();
  // Removed rows are forgotten this long after their fire time if no job took them (a row
  // removed just as it fired, or while its firing was failing and waiting for a retry).
  static constexpr absl::Duration kRemovedKept = absl::Minutes(5);
  // `generation`: the shard's, read under load_mu_ where the row was found to be ours.
  void Arm(const persistence::TimerTaskRow& row, uint64_t generation);
  void Schedule(Job job);
  // Runs the job (RunJob), then counts it out of executing_.
  void Execute(Job job);
  void RunJob(Job job);

  persistence::ExecutionStore& store_;
  const int32_t shard_count_;
  TimerThread& timers_;
  Clock& clock_;
  Logger& logger_;
  const FireFn fire_;
  const Options options_;
  const ServerMetrics* metrics_ = &kNoServerMetrics;

  // Held across a shard's load query and the move of its window, and by Add: a row
  // committed while its shard loads is either seen by the query or armed by Add.
  std::mutex load_mu_;
  std::vector<ShardWindow> windows_;  // by shard - 1
  // Bumped by every Activate and Deactivate of the shard: a timer armed under an older
  // generation belongs to an ownership that ended, and is dropped. Read without load_mu_
  // (which is held across database reads).
  std::vector<std::atomic<uint64_t>> generations_;  // by shard - 1
  bool started_ = false;                           // under load_mu_

  mutable std::mutex mu_;
  std::condition_variable cv_;
  size_t armed_ = 0;
  // Rows removed (Remove) while armed here, with their fire times: their jobs are dropped.
  std::map<TimerKey, absl::Time> removed_;
  // Jobs handed to the executor and not finished: WaitForDueForTest waits for none (cv_).
  size_t executing_ = 0;
  bool stopping_ = false;
  bool woken_ = false;
  std::thread loader_;
  BlockingPool executor_;  // last: its jobs use everything above
};

}  // namespace tock::server::history
