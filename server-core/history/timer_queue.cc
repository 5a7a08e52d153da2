#include "server-core/history/timer_queue.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/common/time_format.h"

namespace tock::server::history {
namespace {

constexpr absl::Duration kFirstRetry = absl::Seconds(1);
constexpr absl::Duration kMaxRetry = absl::Minutes(1);
// When the executor's queue is full, a due timer waits this long on the timer thread.
constexpr absl::Duration kExecutorFullDelay = absl::Milliseconds(20);

bool Before(const persistence::TimerTaskRow& row, const persistence::TimerCursor& c) {
  return row.fire_time < c.fire_time || (row.fire_time == c.fire_time && row.task_id < c.task_id);
}

absl::Duration Backoff(int attempt) {
  absl::Duration d = kFirstRetry;
  for (int i = 1; i < attempt && d < kMaxRetry; ++i) d *= 2;
  return std::min(d, kMaxRetry);
}

// Warnings at attempts 1, 2, 4, 8...: a timer failing for hours logs a few lines, not one
// a minute forever.
bool WorthAWarning(int attempt) { return (attempt & (attempt - 1)) == 0; }

}  // namespace

TimerQueue::TimerQueue(persistence::ExecutionStore& store, int32_t shard_count,
                       TimerThread& timers, Clock& clock, Logger& logger, FireFn fire,
                       Options options)
    : store_(store),
      shard_count_(shard_count),
      timers_(timers),
      clock_(clock),
      logger_(logger),
      fire_(std::move(fire)),
      options_(options),
      windows_(static_cast<size_t>(shard_count)),
      generations_(static_cast<size_t>(shard_count)),
      executor_(options.executor_threads, options.executor_queue) {}

TimerQueue::~TimerQueue() { Stop(); }

absl::Status TimerQueue::Start() {
  {
    std::lock_guard load_lock(load_mu_);
    started_ = true;
  }
  const absl::Time horizon = Horizon();
  for (int32_t shard = 1; shard <= shard_count_; ++shard) {
    if (absl::Status s = LoadShard(shard, horizon); !s.ok()) return s;
  }
  loader_ = std::thread([this] { LoaderLoop(); });
  return absl::OkStatus();
}

void TimerQueue::Activate(int32_t shard) {
  if (shard < 1 || shard > shard_count_) return;
  {
    std::lock_guard load_lock(load_mu_);
    ShardWindow& w = windows_[static_cast<size_t>(shard - 1)];
    w.active = true;
    w.covered = {};  // everything stored is the loader's again
    generations_[static_cast<size_t>(shard - 1)]++;
    if (!started_) return;  // Start loads it
  }
  if (absl::Status s = LoadShard(shard, Horizon()); !s.ok()) {
    logger_.Warn("loading the timers of a shard taken over failed; the loader tries again",
                 {{"shard_id", absl::StrCat(shard)}, {"error", s.ToString()}});
  }
}

absl::Status TimerQueue::Reread(int32_t shard) {
  if (shard < 1 || shard > shard_count_) return absl::OkStatus();
  {
    std::lock_guard load_lock(load_mu_);
    ShardWindow& w = windows_[static_cast<size_t>(shard - 1)];
    if (!w.active) return absl::OkStatus();  // given up: its new owner loads the rows
    w.covered = {};
    generations_[static_cast<size_t>(shard - 1)]++;
    if (!started_) return absl::OkStatus();  // Start loads it
  }
  return LoadShard(shard, Horizon());
}

void TimerQueue::Deactivate(int32_t shard) {
  if (shard < 1 || shard > shard_count_) return;
  std::lock_guard load_lock(load_mu_);
  windows_[static_cast<size_t>(shard - 1)].active = false;  // Activate resets the rest
  generations_[static_cast<size_t>(shard - 1)]++;
}

void TimerQueue::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (loader_.joinable()) loader_.join();
  executor_.Stop();  // queued firings see stopping_ and return at once
}

size_t TimerQueue::armed() const {
  std::lock_guard lock(mu_);
  return armed_;
}

void TimerQueue::Add(const persistence::TimerTaskRow& row) {
  uint64_t generation = 0;
  {
    std::lock_guard load_lock(load_mu_);
    if (row.shard_id < 1 || row.shard_id > shard_count_) return;
    const ShardWindow& w = windows_[static_cast<size_t>(row.shard_id - 1)];
    if (!w.active) return;                // not ours (any more)
    if (!Before(row, w.covered)) return;  // beyond the loaded part: the loader's
    generation = generations_[static_cast<size_t>(row.shard_id - 1)];
  }
  Arm(row, generation);
}

TimerQueue::TimerKey TimerQueue::KeyOf(const persistence::TimerTaskRow& row) {
  return {row.shard_id, absl::ToUnixMillis(row.fire_time), row.task_id};
}

void TimerQueue::Remove(const persistence::TimerTaskRow& row) {
  {
    std::lock_guard load_lock(load_mu_);
    if (row.shard_id < 1 || row.shard_id > shard_count_) return;
    const ShardWindow& w = windows_[static_cast<size_t>(row.shard_id - 1)];
    // Only a row inside the loaded part can be armed; the loader will not find this one.
    if (!w.active || !Before(row, w.covered)) return;
  }
  std::lock_guard lock(mu_);
  removed_.emplace(KeyOf(row), row.fire_time);
}

bool TimerQueue::TakeRemoved(const Job& job) {
  std::lock_guard lock(mu_);
  return removed_.erase(job.key) > 0;
}

void TimerQueue::ForgetOldRemoved() {
  std::lock_guard lock(mu_);
  const absl::Time horizon = clock_.Now() - kRemovedKept;
  for (auto it = removed_.begin(); it != removed_.end();) {
    it = it->second < horizon ? removed_.erase(it) : std::next(it);
  }
}

void TimerQueue::RunWithRetries(std::function<absl::Status()> work, std::string what, Ids ids,
                                absl::Duration delay) {
  Job job;
  job.work = std::move(work);
  job.what = std::move(what);
  job.ids = std::move(ids);
  job.due = clock_.Now() + delay;
  Schedule(std::move(job));
}

void TimerQueue::Wake() {
  LoadAll();
  timers_.Wake();
}

void TimerQueue::LoaderLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, absl::ToChronoNanoseconds(options_.load_interval),
                 [this] { return stopping_ || woken_; });
    if (stopping_) break;
    woken_ = false;
    lock.unlock();
    LoadAll();
    ForgetOldRemoved();
    lock.lock();
  }
}

void TimerQueue::LoadAll() {
  const absl::Time horizon = Horizon();
  for (int32_t shard = 1; shard <= shard_count_; ++shard) {
    if (absl::Status s = LoadShard(shard, horizon); !s.ok()) {
      logger_.Warn("loading due timers failed; trying again at the next pass",
                   {{"shard_id", absl::StrCat(shard)}, {"error", s.ToString()}});
    }
  }
}

absl::Time TimerQueue::Horizon() const {
  // Whole milliseconds, as timer rows are: a row due exactly at the horizon is the next
  // load's, never skipped between two.
  return absl::FromUnixMillis(absl::ToUnixMillis(clock_.Now() + options_.window));
}

absl::Status TimerQueue::LoadShard(int32_t shard, absl::Time horizon) {
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_ || armed_ >= options_.max_armed) return absl::OkStatus();
    }
    std::vector<persistence::TimerTaskRow> rows;
    uint64_t generation = 0;
    {
      std::lock_guard load_lock(load_mu_);
      generation = generations_[static_cast<size_t>(shard - 1)];
      ShardWindow& w = windows_[static_cast<size_t>(shard - 1)];
      if (!w.active || w.covered.fire_time >= horizon) return absl::OkStatus();
      absl::StatusOr<std::vector<persistence::TimerTaskRow>> page =
          store_.LoadTimers(shard, {w.covered.fire_time, w.covered.task_id - 1}, horizon,
                            options_.page);
      if (!page.ok()) return page.status();
      rows = std::move(*page);
      if (static_cast<int32_t>(rows.size()) < options_.page) {
        w.covered = {horizon, 0};  // every row before the horizon is now in memory
      } else {
        w.covered = {rows.back().fire_time, rows.back().task_id + 1};
      }
    }
    for (const auto& row : rows) Arm(row, generation);
    if (static_cast<int32_t>(rows.size()) < options_.page) return absl::OkStatus();
  }
}

void TimerQueue::Arm(const persistence::TimerTaskRow& row, uint64_t generation) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    ++armed_;
  }
  Job job;
  job.work = [this, row] { return fire_(row); };
  job.what = "durable timer";
  job.ids = {row.task.namespace_id(), row.task.workflow_id(), row.task.run_id()};
  job.due = row.fire_time;
  job.timer = true;
  job.shard = row.shard_id;
  job.generation = generation;
  job.key = KeyOf(row);
  Schedule(std::move(job));
}

void TimerQueue::Schedule(Job job) {
  const absl::Time due = job.due;
  timers_.Schedule(due, [this, job = std::move(job)]() mutable {
    // On the timer thread: only hand over. A full executor makes the job wait a little here
    // (a timer's row is stored; nothing is lost by waiting). Counted before the hand-over,
    // so that WaitForDueForTest cannot see the executor idle while the job is on its way.
    {
      std::lock_guard lock(mu_);
      ++executing_;
    }
    if (executor_.Run([this, job]() mutable { Execute(std::move(job)); })) return;
    {
      std::lock_guard lock(mu_);
      --executing_;
      if (stopping_) return;
    }
    job.due = clock_.Now() + kExecutorFullDelay;
    Schedule(std::move(job));
  });
}

void TimerQueue::Execute(Job job) {
  RunJob(std::move(job));  // a retry is scheduled before the job counts as done
  std::lock_guard lock(mu_);
  --executing_;
  cv_.notify_all();
}

void TimerQueue::WaitForDueForTest() {
  // The timer thread runs callbacks in due order, equal times in the order scheduled: once
  // a marker due now has run, every job due by now has been handed to the executor.
  std::mutex marker_mu;
  std::condition_variable marker_cv;
  bool marker_ran = false;
  timers_.Schedule(clock_.Now(), [&] {
    std::lock_guard lock(marker_mu);
    marker_ran = true;
    marker_cv.notify_all();
  });
  timers_.Wake();
  {
    std::unique_lock lock(marker_mu);
    marker_cv.wait(lock, [&] { return marker_ran; });
  }
  // And then finished there.
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return executing_ == 0 || stopping_; });
}

void TimerQueue::RunJob(Job job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
  }
  if (job.timer && generations_[static_cast<size_t>(job.shard - 1)] != job.generation) {
    // The shard was given up (and maybe taken again, which loaded its rows anew).
    std::lock_guard lock(mu_);
    --armed_;
    return;
  }
  if (job.timer && TakeRemoved(job)) {
    std::lock_guard lock(mu_);
    --armed_;
    return;
  }
  if (job.timer && job.attempt == 0) metrics_->timer_task_latency.Observe(clock_.Now() - job.due);
  absl::Status s = job.work();
  if (job.timer) {
    // The firing's own commit deleted its row (and told Remove).
    std::lock_guard lock(mu_);
    removed_.erase(job.key);
  }
  if (s.ok() || s.code() == absl::StatusCode::kNotFound) {
    if (job.timer) {
      std::lock_guard lock(mu_);
      --armed_;
    }
    return;
  }
  ++job.attempt;
  (job.timer ? metrics_->timer_task_errors : metrics_->transfer_task_errors).Increment();
  const absl::Duration wait = Backoff(job.attempt);
  if (WorthAWarning(job.attempt)) {
    logger_.Warn(absl::StrCat(job.what, " failed; retrying"),
                 {{"namespace_id", job.ids.namespace_id},
                  {"workflow_id", job.ids.workflow_id},
                  {"run_id", job.ids.run_id},
                  {"attempt", absl::StrCat(job.attempt)},
                  {"retry_in", absl::FormatDuration(wait)},
                  {"error", s.ToString()}});
  }
  job.due = clock_.Now() + wait;
  Schedule(std::move(job));
}

}  // namespace tock::server::history
