#include "server-core/timers/timer_engine.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "lib/common/named_thread.h"
#include "lib/common/time_format.h"
#include "server-core/timers/callback_protocol.h"
#include "server-core/timers/retry_policy.h"
#include "server-core/timers/timer_service.h"

namespace tock::server::timers {
namespace {

using persistence::StoredTimer;
using persistence::TimerDueCursor;
using persistence::TimerDueMillis;
namespace tv1 = tock::timer::v1;

// Whether `t` is ordered before `c` (by due millisecond, namespace id, timer id).
bool Before(const StoredTimer& t, const TimerDueCursor& c) {
  const int64_t a = TimerDueMillis(t.due), b = TimerDueMillis(c.due);
  if (a != b) return a < b;
  if (t.namespace_id != c.namespace_id) return t.namespace_id < c.namespace_id;
  return t.timer_id < c.timer_id;
}

// A timer with no more attempts to make: its due time is the end of its retention.
bool Finished(const tv1::Timer& r) {
  return r.state() == tv1::TIMER_STATE_SUCCEEDED || r.state() == tv1::TIMER_STATE_FAILED ||
         r.state() == tv1::TIMER_STATE_DELETED;
}

// The longest the firer and the loader sleep without looking at the clock again.
constexpr absl::Duration kMaxSleep = absl::Milliseconds(500);

// A sleep of `d`, at least a microsecond (a wait of less would spin) and at most kMaxSleep.
std::chrono::nanoseconds Chrono(absl::Duration d) {
  return std::chrono::nanoseconds(
      absl::ToInt64Nanoseconds(std::clamp(d, absl::Microseconds(1), kMaxSleep)));
}

// `t` rounded up to the millisecond, as the store keeps due times: a timer is armed at the
// same instant whether it was loaded or handed over by a write, never before its time.
absl::Time WholeMillisecond(absl::Time t) {
  return persistence::TimerDueFromMillis(TimerDueMillis(t));
}

}  // namespace

TimerEngine::TimerEngine(persistence::TimerStore& store, history::ShardController& shards,
                         CallbackSender& sender, Clock& clock, Logger& logger, Options options)
    : store_(store),
      shards_(shards),
      sender_(sender),
      clock_(clock),
      logger_(logger),
      options_(options),
      windows_(static_cast<size_t>(shards.shard_count())) {}

TimerEngine::~TimerEngine() { Stop(); }

const std::string& TimerEngine::LookupKeyLocked(const std::string& namespace_id,
                                                const std::string& timer_id) {
  lookup_key_.assign(namespace_id);
  lookup_key_.push_back('\0');
  lookup_key_.append(timer_id);
  return lookup_key_;
}

void TimerEngine::Start() {
  if (started_.exchange(true)) return;
  loader_ = NamedThread("timer-loader", [this] { LoaderLoop(); });
  firer_ = NamedThread("timer-firer", [this] { FirerLoop(); });
  writer_ = NamedThread("timer-writer", [this] { WriterLoop(); });
}

void TimerEngine::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  due_cv_.notify_all();
  {
    std::lock_guard lock(inbox_->mu);
    inbox_->closed = true;
  }
  inbox_->cv.notify_all();
  if (loader_.joinable()) loader_.join();
  if (firer_.joinable()) firer_.join();
  if (writer_.joinable()) writer_.join();
}

void TimerEngine::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

bool TimerEngine::WaitForDue(absl::Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::nanoseconds(absl::ToInt64Nanoseconds(timeout));
  std::unique_lock lock(mu_);
  if (!started_ || stopping_) return false;
  // A pass under way may have read the clock before it moved: one begun after this call.
  const uint64_t begun = load_passes_begun_;
  woken_ = true;
  cv_.notify_all();
  if (!due_cv_.wait_until(lock, deadline, [&] { return stopping_ || last_clean_pass_ > begun; }) ||
      stopping_) {
    return false;
  }
  // What is due is in memory: the firer looks again, and finds nothing due once it fired all.
  const uint64_t looks = stats_.idle_looks;
  cv_.notify_all();
  const bool looked =
      due_cv_.wait_until(lock, deadline, [&] { return stopping_ || stats_.idle_looks > looks; });
  return looked && !stopping_;
}

TimerEngine::Stats TimerEngine::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

size_t TimerEngine::held() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

size_t TimerEngine::unrecorded_outcomes() const {
  std::lock_guard lock(inbox_->mu);
  return inbox_->outcomes.size() + inbox_->failed.size();
}

void TimerEngine::OnWritten(const StoredTimer& timer) { Consider(StoredTimer(timer)); }

void TimerEngine::Consider(StoredTimer timer) {
  if (timer.shard_id < 1 || timer.shard_id > static_cast<int32_t>(windows_.size())) return;
  std::lock_guard load(load_mu_);
  const ShardWindow& w = windows_[timer.shard_id - 1];
  std::lock_guard lock(mu_);
  if (w.range_id != history::ShardController::kNotOwned && Before(timer, w.covered)) {
    ArmLocked(std::move(timer));
    return;
  }
  // Not ours, or beyond the loaded part: the loader reads it when its time comes. An attempt
  // in flight keeps its entry, with the newest version for when it is answered.
  auto it = entries_.find(LookupKeyLocked(timer.namespace_id, timer.timer_id));
  if (it == entries_.end()) return;
  if (it->second.in_flight) {
    if (timer.revision > it->second.timer.revision) it->second.timer = std::move(timer);
    return;
  }
  ForgetLocked(it);
}

void TimerEngine::ArmLocked(StoredTimer timer) {
  auto it = entries_.find(LookupKeyLocked(timer.namespace_id, timer.timer_id));
  const bool inserted = it == entries_.end();
  if (inserted) it = entries_.try_emplace(lookup_key_).first;
  Entry& e = it->second;
  if (!inserted && e.timer.revision > timer.revision) return;  // an older version
  if (e.in_flight) {
    e.timer = std::move(timer);
    return;
  }
  if (!inserted) queue_.erase({e.armed_at, &*it});
  if (timer.due == absl::InfiniteFuture()) {
    entries_.erase(it);
    return;
  }
  const absl::Time at = WholeMillisecond(timer.due);
  const bool earliest = queue_.empty() || at < queue_.begin()->first;
  e.timer = std::move(timer);
  e.armed_at = at;
  queue_.emplace(at, &*it);
  if (earliest) cv_.notify_all();
}

void TimerEngine::ForgetLocked(Entries::iterator it) {
  if (!it->second.in_flight) queue_.erase({it->second.armed_at, &*it});
  entries_.erase(it);
}

void TimerEngine::DropShardLocked(int32_t shard) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.timer.shard_id == shard && !it->second.in_flight) {
      queue_.erase({it->second.armed_at, &*it});
      entries_.erase(it++);  // a node map's erase returns nothing
    } else {
      ++it;
    }
  }
}

void TimerEngine::LoaderLoop() {
  bool sender_prepared = false;
  for (;;) {
    uint64_t pass;
    {
      std::lock_guard lock(mu_);
      pass = ++load_passes_begun_;
    }
    const bool clean = LoadAll();
    if (!sender_prepared && held() > 0) {  // before the first of them is due, most often
      sender_.Prepare();
      sender_prepared = true;
    }
    std::unique_lock lock(mu_);
    ++stats_.load_passes;
    if (clean) last_clean_pass_ = pass;
    due_cv_.notify_all();
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::nanoseconds(absl::ToInt64Nanoseconds(options_.load_interval));
    cv_.wait_until(lock, until, [&] { return stopping_ || woken_; });
    if (stopping_) return;
    woken_ = false;
  }
}

bool TimerEngine::LoadAll() {
  const absl::Time horizon = clock_.Now() + options_.window;
  bool clean = true;
  for (int32_t shard = 1; shard <= static_cast<int32_t>(windows_.size()); ++shard) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return false;
    }
    std::lock_guard load(load_mu_);
    ShardWindow& w = windows_[shard - 1];
    const int64_t range_id = shards_.RangeId(shard);
    if (range_id == history::ShardController::kNotOwned) {
      if (w.range_id != history::ShardController::kNotOwned) {
        std::lock_guard lock(mu_);
        DropShardLocked(shard);
      }
      w = ShardWindow();
      continue;
    }
    if (range_id != w.range_id) {
      // Taken (again) or renewed: another owner may have written anything meanwhile, so the
      // shard is read from its beginning; what is in memory already is matched by revision.
      w.range_id = range_id;
      w.covered = TimerDueCursor();
    }
    for (int page = 0; page < 1000; ++page) {  // bounded: at most 1000 pages a pass
      if (held() >= options_.max_armed) break;
      if (TimerDueMillis(w.covered.due) >= TimerDueMillis(horizon)) break;
      absl::StatusOr<std::vector<StoredTimer>> rows =
          store_.LoadDue(shard, w.covered, horizon, options_.page);
      if (!rows.ok()) {
        logger_.Warn("loading due timers failed; retried at the next pass",
                     {{"shard", absl::StrCat(shard)}, {"error", rows.status().ToString()}});
        clean = false;
        break;
      }
      const bool last_page = static_cast<int32_t>(rows->size()) < options_.page;
      const TimerDueCursor next =
          last_page ? TimerDueCursor{horizon, "", ""}
                    : TimerDueCursor{rows->back().due, rows->back().namespace_id, rows->back().timer_id};
      {
        std::lock_guard lock(mu_);
        for (StoredTimer& t : *rows) ArmLocked(std::move(t));
      }
      w.covered = next;
      if (last_page) break;
    }
  }
  return clean;
}

void TimerEngine::FirerLoop() {
  absl::BitGen bits;  // the retry jitter of the outcomes it records
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      ++stats_.idle_looks;
      due_cv_.notify_all();
      cv_.wait_for(lock, Chrono(kMaxSleep));
      continue;
    }
    const absl::Time now = clock_.Now();
    const absl::Time first = queue_.begin()->first;
    if (first > now) {  // never before its time
      ++stats_.idle_looks;
      due_cv_.notify_all();
      cv_.wait_for(lock, Chrono(first - now));
      continue;
    }
    std::vector<StoredTimer> due;
    while (!queue_.empty() && queue_.begin()->first <= now && due.size() < options_.batch) {
      Entry& e = queue_.begin()->second->second;
      queue_.erase(queue_.begin());
      e.in_flight = true;
      // The attempt takes the timer; while it is in flight the entry keeps only its revision
      // (and a newer version, should the API write one meanwhile).
      due.push_back(std::move(e.timer));
      e.timer = StoredTimer();
      e.timer.revision = due.back().revision;
    }
    const bool full = due.size() >= options_.batch;
    lock.unlock();
    FireBatch(std::move(due), TakeOutcomes(bits));
    lock.lock();
    if (!full) cv_.wait_for(lock, Chrono(options_.min_batch_interval), [&] { return stopping_; });
  }
}

std::vector<absl::Status> TimerEngine::WriteFenced(std::vector<persistence::TimerWrite>& writes) {
  // The range id of every shard of the batch, held (in shard order) until the write is
  // answered: a renewal of the range by this host's own commits waits instead of fencing
  // the batch out.
  std::vector<int32_t> shards;
  for (const auto& w : writes) shards.push_back(w.timer.shard_id);
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  std::vector<history::ShardController::RangeHold> holds;
  holds.reserve(shards.size());
  std::map<int32_t, int64_t> ranges;
  for (int32_t s : shards) {
    holds.push_back(shards_.HoldRange(s));
    ranges[s] = holds.back().range_id();
  }
  for (auto& w : writes) w.range_id = ranges[w.timer.shard_id];
  std::vector<absl::Status> statuses = store_.Write(writes);
  holds.clear();
  std::set<int32_t> lost;
  for (size_t i = 0; i < writes.size(); ++i) {
    if (persistence::TimerWriteRefusalOf(statuses[i]) == persistence::TimerWriteRefusal::kFenced &&
        writes[i].range_id != history::ShardController::kNotOwned) {
      lost.insert(writes[i].timer.shard_id);
    }
  }
  // Another host took these shards: until the ring says otherwise they are not ours.
  for (int32_t s : lost) shards_.Lost(s, ranges[s]);
  return statuses;
}

std::vector<persistence::TimerWrite> TimerEngine::PlanFiring(std::vector<StoredTimer> due,
                                                             absl::Time now) {
  std::vector<persistence::TimerWrite> writes(due.size());
  for (size_t i = 0; i < due.size(); ++i) {
    persistence::TimerWrite& w = writes[i];
    w.expected_revision = due[i].revision;
    w.timer = std::move(due[i]);
    if (Finished(w.timer.record)) {
      PlanRemoval(w, now);
      continue;
    }
    tv1::Timer& r = w.timer.record;
    if (r.attempts() == 0) *r.mutable_executed_at() = ToProtoTime(now);
    r.set_attempts(r.attempts() + 1);
    r.set_state(tv1::TIMER_STATE_FIRING);
    *r.mutable_updated_at() = ToProtoTime(now);
    r.clear_next_attempt_at();
    // Its due time stays, passed already: whoever owns the shard next sends an attempt whose
    // outcome was never recorded again, at once.
    w.attempt = true;
  }
  return writes;
}

void TimerEngine::PlanRemoval(persistence::TimerWrite& w, absl::Time now) {
  if (options_.retention == nullptr) {  // due only if it was when the retention was read
    w.remove = true;
    return;
  }
  // The retention is read again, not trusted from when the timer finished: that lookup may
  // have failed (the timer was then due again soon), or the namespace's retention changed.
  const absl::Time end = options_.retention->DueAfterFinish(
      w.timer.namespace_id, FromProtoTime(w.timer.record.updated_at()), now);
  if (end <= now) {
    w.remove = true;
    return;
  }
  w.timer.due = end;  // a plain write of its due time: neither an attempt nor a removal
}

void TimerEngine::FireBatch(std::vector<StoredTimer> due, std::vector<OutcomeWrite> outcomes) {
  std::vector<persistence::TimerWrite> writes = PlanFiring(std::move(due), clock_.Now());
  // One transaction for both: the firer never waits behind the writer's commit, which
  // held the store for up to 10 ms while the timers due meanwhile waited.
  std::vector<OutcomeWrite> failed;
  const std::vector<absl::Status> statuses = WriteWithOutcomes(writes, outcomes, failed);
  if (!failed.empty()) {
    {
      std::lock_guard lock(inbox_->mu);
      for (OutcomeWrite& w : failed) inbox_->failed.push_back(std::move(w));
    }
    inbox_->cv.notify_one();
  }
  SendAttempts(SettleFiring(writes, statuses));
}

std::vector<StoredTimer> TimerEngine::SettleFiring(std::vector<persistence::TimerWrite>& writes,
                                                   const std::vector<absl::Status>& statuses) {
  std::vector<StoredTimer> send;
  send.reserve(writes.size());
  std::vector<StoredTimer> reconsider;
  std::set<int32_t> reread;  // shards whose write failed: read again from the store
  bool store_error_logged = false;
  {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < writes.size(); ++i) {
      StoredTimer& written = writes[i].timer;
      auto it = entries_.find(LookupKeyLocked(written.namespace_id, written.timer_id));
      if (it == entries_.end()) continue;  // cannot happen: in flight entries stay
      Entry& e = it->second;
      const absl::Status& s = statuses[i];
      if (s.ok() && writes[i].remove) {
        ++stats_.expired;
        entries_.erase(it);
        continue;
      }
      if (s.ok() && !writes[i].attempt) {  // a finished timer due again at its retention's end
        ++stats_.retention_postponed;
        e.in_flight = false;
        e.timer.revision = 0;  // replaced by the Consider below
        reconsider.push_back(std::move(written));
        continue;
      }
      if (s.ok()) {
        if (e.timer.revision <= written.revision) e.timer.revision = written.revision;
        ++stats_.attempts;
        send.push_back(std::move(written));
        continue;
      }
      switch (persistence::TimerWriteRefusalOf(s)) {
        case persistence::TimerWriteRefusal::kFenced:
          ++stats_.fenced;
          entries_.erase(it);  // the shard's new owner fires it
          break;
        case persistence::TimerWriteRefusal::kChanged:
          ++stats_.superseded;
          if (e.timer.revision > writes[i].expected_revision) reconsider.push_back(std::move(e.timer));
          entries_.erase(it);
          break;
        case persistence::TimerWriteRefusal::kNone:
          // The whole transaction failed (a deadlock or a serialization failure too: nothing
          // says this timer changed), and whether it was written is not known (a commit can
          // fail after the fact): the store says, when the loader reads the shard again at
          // its next pass (after load_interval, so a store that keeps failing is not tried in
          // a loop).
          ++stats_.store_errors;
          if (!store_error_logged) {
            store_error_logged = true;
            logger_.Warn("recording timer attempts failed; the timers are read again from the store",
                         {{"error", s.ToString()}});
          }
          reread.insert(written.shard_id);
          entries_.erase(it);
          break;
      }
    }
  }
  if (!reread.empty()) {
    std::lock_guard load(load_mu_);
    for (int32_t shard : reread) windows_[shard - 1].covered = TimerDueCursor();
  }
  for (StoredTimer& t : reconsider) Consider(std::move(t));
  return send;
}

void TimerEngine::SendAttempts(std::vector<StoredTimer> send) {
  for (StoredTimer& t : send) {
    const tv1::Timer& r = t.record;
    CallbackRequest request;
    request.url = r.callback_url();
    request.namespace_name = r.namespace_();
    request.body_json = CallbackBodyJson(r.namespace_(), r.id(), r.payload_json(),
                                         FromProtoTime(r.execute_at()), r.attempts());
    request.timeout = absl::Seconds(r.callback_timeout_seconds() > 0
                                        ? r.callback_timeout_seconds()
                                        : kDefaultCallbackTimeoutSeconds);
    sender_.Send(std::move(request),
                 [inbox = inbox_, attempted = std::move(t)](CallbackOutcome outcome) mutable {
                   bool first = false;
                   {
                     std::lock_guard lock(inbox->mu);
                     if (inbox->closed) return;
                     first = inbox->outcomes.empty();
                     inbox->outcomes.push_back(
                         Outcome{std::move(attempted), std::move(outcome)});
                   }
                   // The writer takes everything waiting at once: only an outcome that finds
                   // the inbox empty has to wake it (not a futex wake per callback).
                   if (first) inbox->cv.notify_one();
                 });
  }
}

StoredTimer TimerEngine::Apply(StoredTimer next, const CallbackOutcome& outcome, absl::Time now,
                               double jitter) {
  tv1::Timer& r = next.record;
  *r.mutable_updated_at() = ToProtoTime(now);
  r.clear_next_attempt_at();
  // A finished timer is due again when its retention ends, to be removed (looked up only
  // for a timer that finishes: the other outcomes need no retention).
  auto finished_due = [&] {
    return options_.retention != nullptr
               ? options_.retention->DueAfterFinish(next.namespace_id, now, now)
               : absl::InfiniteFuture();
  };
  auto fail = [&](std::string error) {
    r.set_state(tv1::TIMER_STATE_FAILED);
    r.set_last_error(BoundedErrorText(error));
    next.due = finished_due();
  };
  auto retry = [&](const std::string& error) {
    const RetrySettings settings = EffectiveRetry(r.retry_policy());
    std::optional<absl::Duration> delay =
        NextRetryDelay(settings, r.attempts(), FromProtoTime(r.executed_at()), now, jitter);
    if (!delay.has_value()) {
      fail(absl::StrCat(error, " (no retry left after ", r.attempts(), " attempts)"));
      return;
    }
    // In whole milliseconds, as stored: next_attempt_at is when it fires.
    const absl::Time at = WholeMillisecond(now + *delay);
    r.set_state(tv1::TIMER_STATE_PENDING);
    r.set_last_error(BoundedErrorText(error));
    *r.mutable_next_attempt_at() = ToProtoTime(at);
    next.due = at;
  };
  switch (outcome.kind) {
    case CallbackOutcome::Kind::kSucceeded:
      r.set_state(tv1::TIMER_STATE_SUCCEEDED);
      r.clear_last_error();
      next.due = finished_due();
      break;
    case CallbackOutcome::Kind::kReschedule: {
      const absl::Time at = outcome.next_execute_at;
      if (at == absl::InfinitePast() || at == absl::InfiniteFuture() || at < now - kMaxScheduleAhead ||
          at > now + kMaxScheduleAhead) {
        retry("the callback asked for a time more than 10 years away");
        break;
      }
      // A new firing of the timer: its attempts and retry duration start again.
      r.set_state(tv1::TIMER_STATE_PENDING);
      *r.mutable_execute_at() = ToProtoTime(at);
      *r.mutable_next_attempt_at() = ToProtoTime(at);
      r.set_attempts(0);
      r.clear_last_error();
      next.due = at;
      break;
    }
    case CallbackOutcome::Kind::kStop:
      fail(outcome.error.empty() ? absl::StrCat("the callback answered HTTP ", outcome.http_status)
                                 : outcome.error);
      break;
    case CallbackOutcome::Kind::kRetry:
      retry(outcome.error.empty() ? "the callback failed" : outcome.error);
      break;
  }
  return next;
}

std::deque<TimerEngine::Outcome> TimerEngine::TakeAnsweredLocked() {
  std::deque<Outcome> answered;
  if (inbox_->outcomes.size() <= options_.batch) {
    answered.swap(inbox_->outcomes);
  } else {
    for (size_t i = 0; i < options_.batch; ++i) {
      answered.push_back(std::move(inbox_->outcomes.front()));
      inbox_->outcomes.pop_front();
    }
  }
  return answered;
}

std::vector<TimerEngine::OutcomeWrite> TimerEngine::ApplyAll(std::deque<Outcome> answered,
                                                             absl::BitGen& bits) {
  const absl::Time now = clock_.Now();
  std::vector<OutcomeWrite> batch;
  batch.reserve(answered.size());
  for (Outcome& o : answered) {
    OutcomeWrite& w = batch.emplace_back();
    w.kind = o.outcome.kind;
    w.write.expected_revision = o.attempted.revision;
    w.write.timer = Apply(std::move(o.attempted), o.outcome, now, absl::Uniform<double>(bits, 0.0, 1.0));
  }
  return batch;
}

std::vector<TimerEngine::OutcomeWrite> TimerEngine::TakeOutcomes(absl::BitGen& bits) {
  std::deque<Outcome> answered;
  {
    std::lock_guard lock(inbox_->mu);
    inbox_->firer_took = std::chrono::steady_clock::now();
    if (inbox_->closed) return {};
    answered = TakeAnsweredLocked();
  }
  return ApplyAll(std::move(answered), bits);
}

void TimerEngine::WriterLoop() {
  std::vector<OutcomeWrite> delayed;  // writes that failed, tried again after store_retry
  absl::BitGen bits;
  for (;;) {
    std::deque<Outcome> answered;
    bool firer_records = false;
    {
      std::unique_lock lock(inbox_->mu);
      inbox_->cv.wait_for(lock, Chrono(delayed.empty() ? kMaxSleep : options_.store_retry), [&] {
        return inbox_->closed || !inbox_->outcomes.empty() || !inbox_->failed.empty();
      });
      if (inbox_->closed) return;
      for (OutcomeWrite& w : inbox_->failed) delayed.push_back(std::move(w));
      inbox_->failed.clear();
      // The firer took outcomes lately: it is firing, and records them with its next attempts.
      firer_records = absl::FromChrono(std::chrono::steady_clock::now() - inbox_->firer_took) <
                      options_.outcome_interval;
      if (!firer_records) answered = TakeAnsweredLocked();
    }
    std::vector<OutcomeWrite> batch = ApplyAll(std::move(answered), bits);
    const absl::Time now = clock_.Now();
    for (auto it = delayed.begin(); it != delayed.end() && batch.size() < options_.batch;) {
      if (it->not_before <= now) {
        batch.push_back(std::move(*it));
        it = delayed.erase(it);
      } else {
        ++it;
      }
    }
    if (batch.empty() && !firer_records) continue;
    const bool full = batch.size() >= options_.batch;
    if (!batch.empty()) {
      for (OutcomeWrite& w : WriteOutcomes(std::move(batch))) delayed.push_back(std::move(w));
    }
    if (!full) {  // let outcomes gather (see Options::outcome_interval)
      const absl::Duration gather = delayed.empty()
                                        ? options_.outcome_interval
                                        : std::min(options_.outcome_interval, options_.store_retry);
      std::unique_lock lock(inbox_->mu);
      inbox_->cv.wait_for(lock, Chrono(gather), [&] { return inbox_->closed; });
    }
  }
}

std::vector<TimerEngine::OutcomeWrite> TimerEngine::WriteOutcomes(std::vector<OutcomeWrite> batch) {
  std::vector<persistence::TimerWrite> no_attempts;
  std::vector<OutcomeWrite> failed;
  WriteWithOutcomes(no_attempts, batch, failed);
  return failed;
}

std::vector<absl::Status> TimerEngine::WriteWithOutcomes(std::vector<persistence::TimerWrite>& writes,
                                                         std::vector<OutcomeWrite>& outcomes,
                                                         std::vector<OutcomeWrite>& failed) {
  const size_t attempts = writes.size();
  for (OutcomeWrite& o : outcomes) writes.push_back(std::move(o.write));
  std::vector<absl::Status> statuses = WriteFenced(writes);
  // The outcomes' writes back in place: one that failed is written again as it is.
  for (size_t i = 0; i < outcomes.size(); ++i) outcomes[i].write = std::move(writes[attempts + i]);
  writes.resize(attempts);
  if (!outcomes.empty()) failed = SettleOutcomes(outcomes, statuses.data() + attempts);
  statuses.resize(attempts);
  return statuses;
}

std::vector<TimerEngine::OutcomeWrite> TimerEngine::SettleOutcomes(std::vector<OutcomeWrite>& batch,
                                                                   const absl::Status* statuses) {
  std::vector<StoredTimer> reconsider;
  std::vector<OutcomeWrite> again;
  bool store_error_logged = false;
  {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < batch.size(); ++i) {
      persistence::TimerWrite& write = batch[i].write;
      const absl::Status& s = statuses[i];
      auto it = entries_.find(LookupKeyLocked(write.timer.namespace_id, write.timer.timer_id));
      if (s.ok()) {
        switch (batch[i].kind) {
          case CallbackOutcome::Kind::kSucceeded: ++stats_.succeeded; break;
          case CallbackOutcome::Kind::kReschedule: ++stats_.rescheduled; break;
          default:
            if (write.timer.record.state() == tv1::TIMER_STATE_FAILED) ++stats_.failed;
            else ++stats_.retried;
        }
        if (it != entries_.end()) {
          it->second.in_flight = false;
          // A newer version the API wrote cannot exist (the write's revision check), so
          // what was written is the timer now.
          reconsider.push_back(std::move(write.timer));
          it->second.timer.revision = 0;  // replaced by the Consider below
        }
        continue;
      }
      const persistence::TimerWriteRefusal refusal = persistence::TimerWriteRefusalOf(s);
      if (refusal == persistence::TimerWriteRefusal::kFenced) {
        ++stats_.fenced;
        if (it != entries_.end()) entries_.erase(it);
        continue;
      }
      if (refusal == persistence::TimerWriteRefusal::kChanged) {
        ++stats_.superseded;
        if (it != entries_.end()) {
          if (it->second.timer.revision > write.expected_revision) {
            reconsider.push_back(std::move(it->second.timer));
          }
          entries_.erase(it);
        }
        continue;
      }
      // The whole transaction failed (a deadlock or a serialization failure too): nothing
      // says the timer changed, so the outcome is kept and written again.
      ++stats_.store_errors;
      if (!store_error_logged) {
        store_error_logged = true;
        logger_.Warn("recording timer outcomes failed; tried again shortly",
                     {{"error", s.ToString()}});
      }
      // Written again as it is: the outcome as it was applied when it came.
      OutcomeWrite& w = again.emplace_back();
      w.write = std::move(write);
      w.kind = batch[i].kind;
      w.not_before = clock_.Now() + options_.store_retry;
    }
  }
  for (StoredTimer& t : reconsider) Consider(std::move(t));
  return again;
}

}  // namespace tock::server::timers
