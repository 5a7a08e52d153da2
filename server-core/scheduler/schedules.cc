#include "server-core/scheduler/schedules.h"


#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "lib/common/grpc_status.h"
#include "lib/common/message_size.h"
#include "lib/common/proto_time.h"
#include "lib/common/retryable.h"
#include "lib/common/status.h"
#include "lib/common/time_format.h"
#include "server-core/visibility/search_attributes.h"
#include "temporal/api/errordetails/v1/message.pb.h"

namespace tock::server::scheduler {
namespace {

namespace common = temporal::api::common::v1;
using persistence::StoredSchedule;

constexpr size_t kMaxIdBytes = 1000;  // Temporal's limit.maxIDLength
constexpr char kWorkflowIdPrefix[] = "temporal-sys-scheduler:";
constexpr int kMutateAttempts = 20;
constexpr int kBackfillStartsPerTick = 100;
constexpr int kMaxPageSize = 1000;
constexpr absl::Duration kCallDeadline = absl::Seconds(10);

std::string Key(const std::string& namespace_id, const std::string& schedule_id) {
  return absl::StrCat(namespace_id, "/", schedule_id);
}

absl::Status NotFound() { return absl::NotFoundError("schedule not found"); }

// A start that fails is tried this many times in all, kStartBackoff after the first failure,
// twice that after the second, and so on; then it is recorded as a failed action.
constexpr int kStartAttempts = 5;
constexpr absl::Duration kStartBackoff = absl::Seconds(1);

absl::Duration StartBackoff(int failed_before) { return kStartBackoff * (1 << failed_before); }

void SetDeadline(grpc::ClientContext& ctx) {
  ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(kCallDeadline));
}

absl::Status CheckId(const std::string& value, absl::string_view field, size_t limit) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " is not set on request."));
  if (value.size() > limit) return absl::InvalidArgumentError(absl::StrCat(field, " length exceeds limit."));
  return absl::OkStatus();
}

// The action's start request (Temporal's validateStartWorkflowArgsForSchedule) and the
// search attributes against the namespace's schema.
absl::Status CheckAction(const temporal::api::schedule::v1::ScheduleAction& action,
                         const visibility::SearchAttributeSchema& schema) {
  if (!action.has_start_workflow()) {
    return absl::InvalidArgumentError("Only StartWorkflow action is supported for schedules");
  }
  const auto& start = action.start_workflow();
  // The id gets "-<RFC 3339 time>" appended (Temporal checks with "-2009-11-10T23:00:00Z").
  if (absl::Status s = CheckId(start.workflow_id(), "WorkflowId", kMaxIdBytes - 21); !s.ok()) return s;
  if (start.workflow_type().name().empty()) {
    return absl::InvalidArgumentError("WorkflowType is not set on request.");
  }
  if (start.workflow_type().name().size() > kMaxIdBytes) {
    return absl::InvalidArgumentError("WorkflowType length exceeds limit.");
  }
  if (absl::Status s = CheckId(start.task_queue().name(), "TaskQueue", kMaxIdBytes); !s.ok()) return s;
  if (!start.cron_schedule().empty()) {
    return absl::InvalidArgumentError("Scheduled workflow must not contain CronSchedule");
  }
  if (start.workflow_id_reuse_policy() != enums::WORKFLOW_ID_REUSE_POLICY_UNSPECIFIED &&
      start.workflow_id_reuse_policy() != enums::WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE) {
    return absl::InvalidArgumentError("Scheduled workflow must not contain WorkflowIDReusePolicy");
  }
  for (const auto* d : {&start.workflow_execution_timeout(), &start.workflow_run_timeout(),
                        &start.workflow_task_timeout()}) {
    if (d->seconds() < 0 || d->nanos() < 0) {
      return absl::InvalidArgumentError("Invalid WorkflowExecutionTimeout, WorkflowRunTimeout or WorkflowTaskTimeout: negative duration");
    }
  }
  return visibility::CheckSearchAttributes(start.search_attributes(), schema);
}

absl::Status CheckState(const temporal::api::schedule::v1::ScheduleState& state) {
  if (state.notes().size() > kMaxNotesBytes) {
    return absl::InvalidArgumentError("Schedule notes exceeds limit.");
  }
  if (state.remaining_actions() < 0) {
    return absl::InvalidArgumentError("RemainingActions must not be negative.");
  }
  return absl::OkStatus();
}

// The spec canonical, or INVALID_ARGUMENT "Invalid schedule spec: ..." (the frontend's words).
absl::Status Canonicalize(temporal::api::schedule::v1::Schedule& schedule) {
  for (const auto& iv : schedule.spec().interval()) {
    for (const auto* d : {&iv.interval(), &iv.phase()}) {
      if ((d->seconds() > 0 && d->nanos() < 0) || (d->seconds() < 0 && d->nanos() > 0) ||
          d->nanos() > 999'999'999 || d->nanos() < -999'999'999) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Invalid schedule spec: ", d == &iv.interval() ? "interval" : "phase",
            " is not a valid duration"));
      }
    }
  }
  absl::StatusOr<CompiledSpec> compiled = CompiledSpec::Compile(schedule.spec());
  if (!compiled.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid schedule spec: ", compiled.status().message()));
  }
  *schedule.mutable_spec() = compiled->canonical();
  return absl::OkStatus();
}

std::unique_ptr<CompiledSpec> CompileOf(const ScheduleRecord& r) {
  absl::StatusOr<CompiledSpec> c = CompiledSpec::Compile(r.schedule().spec());
  if (!c.ok()) return nullptr;
  return std::make_unique<CompiledSpec>(*std::move(c));
}

// The spec's times due by `now` and a bounded part of the backfills, into the buffer.
void BufferDue(ScheduleRecord& r, absl::Time now) {
  std::unique_ptr<CompiledSpec> spec = CompileOf(r);
  if (spec != nullptr) {
    absl::Time resume = now;
    ProcessTimeRange(r, *spec, FromProtoTime(r.last_processed_time()), now,
                     enums::SCHEDULE_OVERLAP_POLICY_UNSPECIFIED, false, 0, &resume);
    *r.mutable_last_processed_time() = ToProtoTime(resume);
    // Backfills, a bounded number per look, using at most half of the buffer.
    int budget = kBackfillStartsPerTick;
    while (!r.ongoing_backfills().empty() && budget > 0 &&
           r.buffered_starts_size() < kMaxBufferSize / 2) {
      auto* b = r.mutable_ongoing_backfills(0);
      const int before = r.buffered_starts_size();
      std::optional<absl::Time> more = ProcessTimeRange(
          r, *spec, FromProtoTime(b->start_time()), FromProtoTime(b->end_time()), b->overlap_policy(),
          true, budget);
      budget -= r.buffered_starts_size() - before;
      if (more.has_value()) {
        *b->mutable_start_time() = ToProtoTime(*more);
      } else {
        r.mutable_ongoing_backfills()->erase(r.mutable_ongoing_backfills()->begin());
      }
    }
  } else {
    r.mutable_ongoing_backfills()->Clear();
    *r.mutable_last_processed_time() = ToProtoTime(now);
  }
}

}  // namespace

Schedules::Schedules(persistence::ScheduleStore& store, namespaces::NamespaceEngine& namespaces,
                     Clock& clock, Logger& logger,
                     std::function<bool(const std::string&, const std::string&)> owns)
    : store_(store),
      namespaces_(namespaces),
      clock_(clock),
      logger_(logger),
      owns_(std::move(owns)) {}

Schedules::~Schedules() { Shutdown(); }

void Schedules::Start(const std::string& frontend_address, const rpc::Dialer& dialer) {
  frontend_ = wf::WorkflowService::NewStub(dialer.Dial(frontend_address));
  std::lock_guard lock(mu_);
  started_ = true;
  loop_ = std::thread([this] { Loop(); });
  for (int i = 0; i < kWorkers; ++i) workers_.emplace_back([this] { Work(); });
}

void Schedules::Shutdown() {
  {
    std::lock_guard lock(mu_);
    if (shutdown_) return;
    shutdown_ = true;
  }
  wake_.notify_all();
  work_ready_.notify_all();
  looked_.notify_all();
  if (loop_.joinable()) loop_.join();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void Schedules::Wake() {
  {
    std::lock_guard lock(mu_);
    last_scan_ = absl::InfinitePast();  // also read every schedule's record again
  }
  wake_.notify_all();
}

bool Schedules::WaitForDue(absl::Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  std::unique_lock lock(mu_);
  if (!started_ || shutdown_) return false;
  const absl::Time t = clock_.Now();
  // A scan under way may have read the clock before it moved: one begun after this call.
  const uint64_t begun = scans_begun_;
  last_scan_ = absl::InfinitePast();
  wake_.notify_all();
  // Then every look at a schedule due by `t` (the scan's, and any the looks made due again)
  // has ended and recorded what it did.
  const bool looked = looked_.wait_until(lock, deadline, [&] {
    return shutdown_ || (last_clean_scan_ > begun && NoneDueLocked(t));
  });
  return looked && !shutdown_;
}

bool Schedules::NoneDueLocked(absl::Time t) const {
  if (!work_.empty()) return false;
  for (const auto& [key, e] : entries_) {
    if (e.busy || (e.due.has_value() && *e.due <= t)) return false;
  }
  return true;
}

void Schedules::Touch(const std::string& namespace_id, const std::string& schedule_id) {
  if (!owns_(namespace_id, schedule_id)) return;
  {
    std::lock_guard lock(mu_);
    Entry& e = entries_[Key(namespace_id, schedule_id)];
    e.namespace_id = namespace_id;
    e.schedule_id = schedule_id;
    e.due = absl::InfinitePast();
    if (e.busy) e.again = true;
  }
  wake_.notify_all();
}

// ---- the runner ----

void Schedules::Loop() {
  std::unique_lock lock(mu_);
  while (!shutdown_) {
    if (absl::Now() - last_scan_ >= kScanInterval) {
      last_scan_ = absl::Now();
      const uint64_t scan = ++scans_begun_;
      lock.unlock();
      const bool clean = Scan();
      lock.lock();
      if (clean) last_clean_scan_ = scan;
      looked_.notify_all();
      continue;
    }
    const absl::Time now = clock_.Now();
    absl::Time earliest = absl::InfiniteFuture();
    for (auto& [key, e] : entries_) {
      if (e.busy || !e.due.has_value()) continue;
      if (*e.due <= now) {
        e.busy = true;
        e.again = false;
        work_.push_back(key);
      } else {
        earliest = std::min(earliest, *e.due);
      }
    }
    if (!work_.empty()) work_ready_.notify_all();
    absl::Duration wait = std::min(earliest - now, kScanInterval - (absl::Now() - last_scan_));
    wait = std::max(wait, absl::Milliseconds(1));
    wake_.wait_for(lock, absl::ToChronoMicroseconds(wait));
  }
}

void Schedules::Work() {
  std::unique_lock lock(mu_);
  while (true) {
    work_ready_.wait(lock, [this] { return shutdown_ || !work_.empty(); });
    if (shutdown_) return;
    const std::string key = work_.front();
    work_.pop_front();
    auto it = entries_.find(key);
    if (it == entries_.end()) continue;
    const std::string ns = it->second.namespace_id, id = it->second.schedule_id;
    lock.unlock();
    std::optional<absl::Time> due = Tick(ns, id);
    lock.lock();
    it = entries_.find(key);
    if (it == entries_.end()) continue;
    Entry& e = it->second;
    e.busy = false;
    if (e.again) {
      e.due = absl::InfinitePast();
      e.again = false;
    } else {
      e.due = due;
    }
    wake_.notify_all();
    looked_.notify_all();
  }
}

bool Schedules::Scan() {
  std::set<std::string> seen;
  std::string after_ns, after_id;
  const absl::Time now = clock_.Now();
  for (int pages = 0; pages < 100'000; ++pages) {
    absl::StatusOr<std::vector<StoredSchedule>> page = store_.ListAll(after_ns, after_id, 500);
    if (!page.ok()) {
      logger_.Warn("reading the schedules failed; retried at the next scan",
                   {{"error", page.status().ToString()}});
      return false;  // keep what is known
    }
    if (page->empty()) break;
    for (const StoredSchedule& s : *page) {
      const ScheduleRecord& r = s.record;
      if (!owns_(r.namespace_id(), r.schedule_id())) continue;
      const std::string key = Key(r.namespace_id(), r.schedule_id());
      seen.insert(key);
      std::unique_ptr<CompiledSpec> spec = CompileOf(r);
      std::optional<absl::Time> due =
          r.buffered_starts().empty() ? NextWakeup(r, spec.get(), now) : std::optional<absl::Time>(now);
      if (std::optional<absl::Time> expiry = RetentionExpiry(r, spec.get())) {
        due = due.has_value() ? std::min(*due, *expiry) : *expiry;
      }
      std::lock_guard lock(mu_);
      Entry& e = entries_[key];
      e.namespace_id = r.namespace_id();
      e.schedule_id = r.schedule_id();
      // The earlier of the two: a change made since this page was read (a trigger) has set
      // an earlier time that the page does not show; a time too early only costs a look.
      if (!e.busy && due.has_value() && (!e.due.has_value() || *due < *e.due)) e.due = due;
    }
    after_ns = page->back().record.namespace_id();
    after_id = page->back().record.schedule_id();
  }
  std::lock_guard lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (!seen.contains(it->first) && !it->second.busy) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  return true;
}

absl::StatusOr<StoredSchedule> Schedules::Mutate(
    const std::string& namespace_id, const std::string& schedule_id,
    const std::function<absl::Status(ScheduleRecord&, bool*)>& change,
    std::optional<StoredSchedule> known) {
  for (int attempt = 0; attempt < kMutateAttempts; ++attempt) {
    absl::StatusOr<StoredSchedule> stored;
    if (attempt == 0 && known.has_value()) {
      stored = *std::move(known);
    } else {
      stored = store_.Get(namespace_id, schedule_id);
    }
    if (stored.status().code() == absl::StatusCode::kNotFound) return NotFound();
    if (!stored.ok()) return stored.status();
    bool write = true;
    if (absl::Status s = change(stored->record, &write); !s.ok()) return s;
    if (!write) return stored;
    absl::Status saved = store_.Update(stored->record, stored->revision);
    if (saved.ok()) {
      ++stored->revision;
      return stored;
    }
    if (saved.code() == absl::StatusCode::kNotFound) return NotFound();
    if (saved.code() != absl::StatusCode::kAborted) return saved;
  }
  return absl::AbortedError("the schedule is being changed by too many callers; try again");
}

// What a look did with one start of `starting`.
struct Schedules::Made {
  enum class Outcome {
    kStarted,  // recorded as an action, its run tracked
    kRetry,    // failed, to be tried again at its retry time
    kFailed,   // failed for good: recorded as a failed action
    kDropped,  // another run holds the workflow id: not an action
  };
  BufferedStart start;
  std::string workflow_id, run_id;
  absl::Time at;
  Outcome outcome = Outcome::kStarted;
};

std::optional<absl::Time> Schedules::Tick(const std::string& namespace_id,
                                          const std::string& schedule_id) {
  if (!owns_(namespace_id, schedule_id)) return std::nullopt;
  const absl::Time retry = clock_.Now() + absl::Seconds(1);
  auto again_unless_gone = [&](const absl::Status& s) {
    return s.code() == absl::StatusCode::kNotFound ? std::nullopt
                                                   : std::optional<absl::Time>(retry);
  };
  absl::StatusOr<StoredSchedule> stored = store_.Get(namespace_id, schedule_id);
  if (!stored.ok()) return again_unless_gone(stored.status());
  // 1. Running workflows' status, when a start waits (Temporal refreshes before deciding).
  absl::StatusOr<std::map<std::string, RunStatus>> closed = ClosedRuns(*stored);
  if (!closed.ok()) return retry;
  // 2. Buffer what is due, apply what closed, decide what starts now: one write.
  bool cancel = false, terminate = false;
  absl::StatusOr<StoredSchedule> decided =
      Decide(namespace_id, schedule_id, *stored, *closed, cancel, terminate);
  if (!decided.ok()) {
    if (decided.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    logger_.Warn("a schedule could not be processed; retried in a second",
                 {{"schedule_id", schedule_id}, {"error", decided.status().ToString()}});
    return retry;
  }
  // 3. Make every start noted and due (those of an earlier look cut short by a crash too).
  std::vector<Made> made = MakeStarts(decided->record);
  if (cancel || terminate) CancelOrTerminate(decided->record, terminate);
  absl::StatusOr<StoredSchedule> recorded = RecordStarts(namespace_id, schedule_id, made, *decided);
  if (!recorded.ok()) return again_unless_gone(recorded.status());
  return NextLook(namespace_id, schedule_id, recorded->record);
}

absl::StatusOr<std::map<std::string, Schedules::RunStatus>> Schedules::ClosedRuns(
    const StoredSchedule& stored) {
  std::map<std::string, RunStatus> closed;
  // What this look would buffer (on a copy): a start waiting while runs are open needs
  // their status first.
  ScheduleRecord preview = stored.record;
  BufferDue(preview, clock_.Now());
  if (preview.info().running_workflows_size() == 0 || preview.buffered_starts_size() == 0) {
    return closed;
  }
  for (const auto& ex : stored.record.info().running_workflows()) {
    absl::StatusOr<RunStatus> st = Watch(stored.record, ex);
    if (!st.ok()) {
      if (IsRetryable(st.status())) return st.status();
      st = RunStatus{enums::WORKFLOW_EXECUTION_STATUS_UNSPECIFIED};  // gone (deleted)
    }
    if (st->status != enums::WORKFLOW_EXECUTION_STATUS_RUNNING) closed[ex.workflow_id()] = *st;
  }
  return closed;
}

void Schedules::ApplyClosed(ScheduleRecord& r, const std::map<std::string, RunStatus>& closed) {
  // What closed: out of the running list, status in the recent actions, pause on failure.
  auto* running = r.mutable_info()->mutable_running_workflows();
  for (int i = running->size() - 1; i >= 0; --i) {
    auto it = closed.find(running->Get(i).workflow_id());
    if (it == closed.end()) continue;
    const RunStatus& st = it->second;
    for (auto& a : *r.mutable_info()->mutable_recent_actions()) {
      if (a.start_workflow_result().workflow_id() == it->first) {
        a.set_start_workflow_status(st.status);
      }
    }
    const bool failed = st.status == enums::WORKFLOW_EXECUTION_STATUS_FAILED ||
                        st.status == enums::WORKFLOW_EXECUTION_STATUS_TIMED_OUT;
    if (r.schedule().policies().pause_on_failure() && failed && !r.schedule().state().paused()) {
      auto* state = r.mutable_schedule()->mutable_state();
      state->set_paused(true);
      state->set_notes(st.status == enums::WORKFLOW_EXECUTION_STATUS_FAILED
                           ? absl::StrCat("paused due to workflow failure: ", it->first, ": ",
                                          st.failure_message)
                           : absl::StrCat("paused due to workflow timeout: ", it->first));
      r.set_conflict_token(r.conflict_token() + 1);
    }
    if (st.result.has_value()) {
      *r.mutable_last_completion_result() = *st.result;
      r.clear_continued_failure();
    } else if (!st.failure.empty()) {
      r.set_continued_failure(st.failure);
    }
    running->DeleteSubrange(i, 1);
  }
}

absl::StatusOr<StoredSchedule> Schedules::Decide(const std::string& namespace_id,
                                                 const std::string& schedule_id,
                                                 const StoredSchedule& stored,
                                                 const std::map<std::string, RunStatus>& closed,
                                                 bool& cancel, bool& terminate) {
  return Mutate(
      namespace_id, schedule_id,
      [&](ScheduleRecord& r, bool*) -> absl::Status {
        cancel = terminate = false;
        BufferDue(r, clock_.Now());
        ApplyClosed(r, closed);
        if (r.buffered_starts().empty()) return absl::OkStatus();
        if (!r.schedule().action().has_start_workflow()) {
          r.clear_buffered_starts();
          return absl::OkStatus();
        }
        BufferAction action = ProcessBuffer(r, !r.info().running_workflows().empty());
        r.clear_buffered_starts();
        for (BufferedStart& s : action.new_buffer) *r.add_buffered_starts() = std::move(s);
        r.mutable_info()->set_overlap_skipped(r.info().overlap_skipped() + action.overlap_skipped);
        std::vector<BufferedStart> all = std::move(action.overlapping_starts);
        if (action.non_overlapping_start) all.push_back(*action.non_overlapping_start);
        for (BufferedStart& s : all) {
          if (!s.manual()) {
            if (!CanTakeScheduledAction(r)) continue;  // paused or out of actions: dropped
            auto* state = r.mutable_schedule()->mutable_state();
            if (state->limited_actions()) {
              state->set_remaining_actions(state->remaining_actions() - 1);
              r.set_conflict_token(r.conflict_token() + 1);
            }
          }
          // Written before they are made: after a crash they are made again (deduplicated).
          *r.add_starting() = s;
        }
        cancel = action.need_cancel;
        terminate = action.need_terminate;
        return absl::OkStatus();
      },
      stored);
}

std::vector<Schedules::Made> Schedules::MakeStarts(const ScheduleRecord& current) {
  std::vector<Made> made;
  for (const BufferedStart& s : current.starting()) {
    if (FromProtoTime(s.retry_time()) > clock_.Now()) continue;  // failed: not due again yet
    absl::StatusOr<std::string> run_id = StartAction(current, s);
    Made m{s, ActionWorkflowId(current, s), run_id.ok() ? *run_id : "", clock_.Now()};
    if (!run_id.ok()) {
      const absl::StatusCode code = run_id.status().code();
      // INTERNAL and UNKNOWN are retried too, a bounded number of times: the start is
      // deduplicated by its request id, and a commit whose answer was lost says INTERNAL.
      const bool retryable = IsRetryable(code) || code == absl::StatusCode::kInternal ||
                             code == absl::StatusCode::kUnknown;
      if (code == absl::StatusCode::kAlreadyExists) {
        m.outcome = Made::Outcome::kDropped;
      } else if (retryable && s.attempts() + 1 < kStartAttempts) {
        m.outcome = Made::Outcome::kRetry;
        m.start.set_attempts(s.attempts() + 1);
        *m.start.mutable_retry_time() = ToProtoTime(clock_.Now() + StartBackoff(s.attempts()));
      } else {
        m.outcome = Made::Outcome::kFailed;
      }
      logger_.Warn(m.outcome == Made::Outcome::kRetry
                       ? "a scheduled workflow could not be started; it is tried again"
                       : "a scheduled workflow could not be started",
                   {{"schedule_id", current.schedule_id()},
                    {"workflow_id", m.workflow_id},
                    {"attempt", absl::StrCat(s.attempts() + 1)},
                    {"error", run_id.status().ToString()}});
    }
    made.push_back(std::move(m));
  }
  return made;
}

absl::StatusOr<StoredSchedule> Schedules::RecordStarts(const std::string& namespace_id,
                                                       const std::string& schedule_id,
                                                       const std::vector<Made>& made,
                                                       const StoredSchedule& decided) {
  return Mutate(
      namespace_id, schedule_id,
      [&](ScheduleRecord& r, bool* write) {
        if (made.empty()) *write = false;  // nothing to record
        for (const Made& m : made) {
          auto* starting = r.mutable_starting();
          int at = -1;
          for (int i = 0; i < starting->size() && at < 0; ++i) {
            if (starting->Get(i).sequence() == m.start.sequence()) at = i;
          }
          // Recorded already by another look (two hosts while a shard moves, both making the
          // same deduplicated start): counted once.
          if (at < 0) continue;
          if (m.outcome == Made::Outcome::kRetry) {
            *starting->Mutable(at) = m.start;  // its attempts and retry time
            continue;
          }
          starting->DeleteSubrange(at, 1);
          if (m.outcome != Made::Outcome::kDropped) RecordAction(r, m);
        }
        return absl::OkStatus();
      },
      decided);
}

void Schedules::RecordAction(ScheduleRecord& r, const Made& m) {
  auto* info = r.mutable_info();
  auto* a = info->add_recent_actions();
  *a->mutable_schedule_time() = m.start.actual_time();
  *a->mutable_actual_time() = ToProtoTime(m.at);
  a->mutable_start_workflow_result()->set_workflow_id(m.workflow_id);
  if (info->recent_actions_size() > kRecentActionCount) {
    info->mutable_recent_actions()->DeleteSubrange(0,
                                                   info->recent_actions_size() - kRecentActionCount);
  }
  if (m.outcome == Made::Outcome::kFailed) {
    // Never started: no run id, FAILED, not counted as an action taken nor tracked.
    a->set_start_workflow_status(enums::WORKFLOW_EXECUTION_STATUS_FAILED);
    return;
  }
  info->set_action_count(info->action_count() + 1);
  a->mutable_start_workflow_result()->set_run_id(m.run_id);
  a->set_start_workflow_status(enums::WORKFLOW_EXECUTION_STATUS_RUNNING);
  // ALLOW_ALL runs overlap by definition: not tracked (Temporal's DontTrackOverlapping).
  if (ResolveOverlap(r, m.start.overlap_policy()) != enums::SCHEDULE_OVERLAP_POLICY_ALLOW_ALL) {
    *info->add_running_workflows() = a->start_workflow_result();
  }
}

std::optional<absl::Time> Schedules::NextLook(const std::string& namespace_id,
                                              const std::string& schedule_id,
                                              const ScheduleRecord& recorded) {
  std::unique_ptr<CompiledSpec> spec = CompileOf(recorded);
  const absl::Time now = clock_.Now();
  // The next spec time, or a failed start's retry time when that is earlier.
  std::optional<absl::Time> next = NextWakeup(recorded, spec.get(), now);
  // Finished (no more actions, not paused): deleted after the retention, as Temporal does.
  std::optional<absl::Time> expiry = RetentionExpiry(recorded, spec.get());
  if (!expiry.has_value()) return next;
  if (now < *expiry) return next.has_value() ? std::min(*next, *expiry) : *expiry;
  absl::StatusOr<StoredSchedule> still =
      Mutate(namespace_id, schedule_id, [&](ScheduleRecord& r, bool* write) {
        *write = false;
        std::unique_ptr<CompiledSpec> s = CompileOf(r);
        std::optional<absl::Time> e = RetentionExpiry(r, s.get());
        return e.has_value() && now >= *e ? absl::OkStatus()
                                          : absl::FailedPreconditionError("changed: not finished");
      });
  if (still.ok() && store_.Delete(namespace_id, schedule_id).ok()) {
    logger_.Info("a finished schedule was deleted after its retention",
                 {{"schedule_id", schedule_id}});
    return std::nullopt;
  }
  return now + absl::Seconds(1);
}

absl::StatusOr<std::string> Schedules::StartAction(const ScheduleRecord& r,
                                                   const BufferedStart& start) {
  const auto& action = r.schedule().action().start_workflow();
  wf::StartWorkflowExecutionRequest req;
  req.set_namespace_(r.namespace_());
  req.set_workflow_id(ActionWorkflowId(r, start));
  *req.mutable_workflow_type() = action.workflow_type();
  *req.mutable_task_queue() = action.task_queue();
  if (action.has_input()) *req.mutable_input() = action.input();
  if (action.has_workflow_execution_timeout()) {
    *req.mutable_workflow_execution_timeout() = action.workflow_execution_timeout();
  }
  if (action.has_workflow_run_timeout()) *req.mutable_workflow_run_timeout() = action.workflow_run_timeout();
  if (action.has_workflow_task_timeout()) *req.mutable_workflow_task_timeout() = action.workflow_task_timeout();
  req.set_identity(absl::StrCat("temporal-scheduler-", r.namespace_(), "-", r.schedule_id()));
  req.set_request_id(ActionRequestId(r, start));
  req.set_workflow_id_reuse_policy(start.manual() ? enums::WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
                                                  : enums::WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE);
  if (action.has_retry_policy()) *req.mutable_retry_policy() = action.retry_policy();
  if (action.has_memo()) *req.mutable_memo() = action.memo();
  if (action.has_header()) *req.mutable_header() = action.header();
  if (action.has_user_metadata()) *req.mutable_user_metadata() = action.user_metadata();
  if (action.has_priority()) *req.mutable_priority() = action.priority();
  if (ResolveOverlap(r, start.overlap_policy()) != enums::SCHEDULE_OVERLAP_POLICY_ALLOW_ALL) {
    if (r.has_last_completion_result()) *req.mutable_last_completion_result() = r.last_completion_result();
    if (!r.continued_failure().empty()) req.mutable_continued_failure()->ParseFromString(r.continued_failure());
  }
  auto* attrs = req.mutable_search_attributes();
  *attrs = action.search_attributes();
  const int64_t nominal_s = start.nominal_time().seconds();
  common::Payload when;
  (*when.mutable_metadata())["encoding"] = "json/plain";
  when.set_data(absl::StrCat("\"", absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(nominal_s),
                                                   absl::UTCTimeZone()), "\""));
  (*attrs->mutable_indexed_fields())["TemporalScheduledStartTime"] = when;
  common::Payload by;
  (*by.mutable_metadata())["encoding"] = "json/plain";
  by.set_data(absl::StrCat("\"", r.schedule_id(), "\""));
  (*attrs->mutable_indexed_fields())["TemporalScheduledById"] = by;

  grpc::ClientContext ctx;
  SetDeadline(ctx);
  wf::StartWorkflowExecutionResponse out;
  const absl::Status s = FromGrpcStatus(frontend_->StartWorkflowExecution(&ctx, req, &out));
  if (s.ok()) return out.run_id();
  if (s.code() == absl::StatusCode::kAlreadyExists) {
    // Our own start, made before a crash cut this look short: done already.
    auto detail = GetDetail<temporal::api::errordetails::v1::WorkflowExecutionAlreadyStartedFailure>(s);
    if (detail.has_value() && detail->start_request_id() == req.request_id()) return detail->run_id();
  }
  return s;
}

absl::StatusOr<Schedules::RunStatus> Schedules::Watch(const ScheduleRecord& r,
                                                      const common::WorkflowExecution& ex) {
  // By workflow id only: the latest run of the chain (Temporal's refresh does the same).
  wf::DescribeWorkflowExecutionRequest req;
  req.set_namespace_(r.namespace_());
  req.mutable_execution()->set_workflow_id(ex.workflow_id());
  grpc::ClientContext ctx;
  SetDeadline(ctx);
  wf::DescribeWorkflowExecutionResponse out;
  absl::Status s = FromGrpcStatus(frontend_->DescribeWorkflowExecution(&ctx, req, &out));
  if (!s.ok()) return s;
  RunStatus st;
  st.status = out.workflow_execution_info().status();
  if (st.status == enums::WORKFLOW_EXECUTION_STATUS_RUNNING) return st;
  // Closed: its result or failure (for the next start and pause-on-failure).
  wf::GetWorkflowExecutionHistoryRequest hreq;
  hreq.set_namespace_(r.namespace_());
  *hreq.mutable_execution() = out.workflow_execution_info().execution();
  hreq.set_history_event_filter_type(enums::HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT);
  grpc::ClientContext hctx;
  SetDeadline(hctx);
  wf::GetWorkflowExecutionHistoryResponse hout;
  if (FromGrpcStatus(frontend_->GetWorkflowExecutionHistory(&hctx, hreq, &hout)).ok()) {
    for (const auto& e : hout.history().events()) {
      if (e.has_workflow_execution_completed_event_attributes()) {
        st.result = e.workflow_execution_completed_event_attributes().result();
      } else if (e.has_workflow_execution_failed_event_attributes()) {
        const auto& f = e.workflow_execution_failed_event_attributes().failure();
        st.failure_message = f.message();
        st.failure = f.SerializeAsString();
      }
    }
  }
  return st;
}

void Schedules::CancelOrTerminate(const ScheduleRecord& r, bool terminate) {
  const std::string identity = absl::StrCat("temporal-scheduler-", r.namespace_(), "-", r.schedule_id());
  for (const auto& ex : r.info().running_workflows()) {
    grpc::ClientContext ctx;
    SetDeadline(ctx);
    grpc::Status s;
    if (terminate) {
      wf::TerminateWorkflowExecutionRequest req;
      req.set_namespace_(r.namespace_());
      *req.mutable_workflow_execution() = ex;
      req.set_reason("terminated by schedule overlap policy");
      req.set_identity(identity);
      wf::TerminateWorkflowExecutionResponse out;
      s = frontend_->TerminateWorkflowExecution(&ctx, req, &out);
    } else {
      wf::RequestCancelWorkflowExecutionRequest req;
      req.set_namespace_(r.namespace_());
      *req.mutable_workflow_execution() = ex;
      req.set_reason("cancelled by schedule overlap policy");
      req.set_identity(identity);
      req.set_request_id(absl::StrCat("sched-cancel-", ex.run_id()));
      wf::RequestCancelWorkflowExecutionResponse out;
      s = frontend_->RequestCancelWorkflowExecution(&ctx, req, &out);
    }
    // A failure is tried again at the next look (the start stays buffered until it closes).
    if (!s.ok()) {
      logger_.Warn(terminate ? "terminating a scheduled workflow failed"
                             : "cancelling a scheduled workflow failed",
                   {{"workflow_id", ex.workflow_id()}, {"error", s.error_message()}});
    }
  }
}

// ---- the API ----

absl::StatusOr<persistence::StoredSchedule> Schedules::Find(const std::string& namespace_id,
                                                            const std::string& schedule_id) {
  absl::StatusOr<StoredSchedule> s = store_.Get(namespace_id, schedule_id);
  if (s.status().code() == absl::StatusCode::kNotFound) return NotFound();
  return s;
}

absl::Status Schedules::ApplyPatch(ScheduleRecord& r,
                                   const temporal::api::schedule::v1::SchedulePatch& p) {
  if (p.has_trigger_immediately()) {
    const absl::Time at = p.trigger_immediately().has_scheduled_time()
                              ? FromProtoTime(p.trigger_immediately().scheduled_time())
                              : clock_.Now();
    AddStart(r, at, at, p.trigger_immediately().overlap_policy(), true);
  }
  for (const auto& b : p.backfill_request()) {
    if (r.ongoing_backfills_size() >= kMaxBufferSize) {
      r.mutable_info()->set_buffer_dropped(r.info().buffer_dropped() + 1);
      continue;
    }
    auto* added = r.add_ongoing_backfills();
    *added = b;
    // The start time is inclusive (Temporal's InclusiveBackfillStartTime).
    *added->mutable_start_time() = ToProtoTime(FromProtoTime(b.start_time()) - absl::Milliseconds(1));
  }
  if (!p.pause().empty()) {
    r.mutable_schedule()->mutable_state()->set_paused(true);
    r.mutable_schedule()->mutable_state()->set_notes(p.pause());
    r.set_conflict_token(r.conflict_token() + 1);
  }
  if (!p.unpause().empty()) {
    r.mutable_schedule()->mutable_state()->set_paused(false);
    r.mutable_schedule()->mutable_state()->set_notes(p.unpause());
    r.set_conflict_token(r.conflict_token() + 1);
    // Times spent paused are skipped, not caught up.
    *r.mutable_last_processed_time() = ToProtoTime(clock_.Now());
  }
  return absl::OkStatus();
}

static absl::Status CheckPatch(const temporal::api::schedule::v1::SchedulePatch& p) {
  if (p.pause().size() > kMaxNotesBytes || p.unpause().size() > kMaxNotesBytes) {
    return absl::InvalidArgumentError("Schedule notes exceeds limit.");
  }
  if (p.backfill_request_size() > kMaxBufferSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("a patch holds at most ", kMaxBufferSize, " backfill requests"));
  }
  for (const auto& b : p.backfill_request()) {
    if (!b.has_start_time() || !b.has_end_time()) {
      return absl::InvalidArgumentError("a backfill request needs a start time and an end time");
    }
    if (FromProtoTime(b.end_time()) < FromProtoTime(b.start_time())) {
      return absl::InvalidArgumentError("a backfill request's end time is before its start time");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<wf::CreateScheduleResponse> Schedules::Create(const wf::CreateScheduleRequest& req) {
  if (absl::Status s = CheckId(req.schedule_id(), "ScheduleId", kMaxIdBytes - strlen(kWorkflowIdPrefix));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckId(req.request_id(), "RequestId", kMaxIdBytes); !s.ok()) return s;
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), false, namespaces::NamespaceAccess::kWrite);
  if (!ns.ok()) return ns.status();
  ScheduleRecord r;
  r.set_namespace_id(ns->id);
  r.set_namespace_(ns->name);
  r.set_schedule_id(req.schedule_id());
  *r.mutable_schedule() = req.schedule();
  if (absl::Status s = Canonicalize(*r.mutable_schedule()); !s.ok()) return s;
  if (absl::Status s = CheckAction(r.schedule().action(), *ns->search_attributes); !s.ok()) return s;
  if (absl::Status s = CheckState(r.schedule().state()); !s.ok()) return s;
  if (absl::Status s = CheckPatch(req.initial_patch()); !s.ok()) return s;
  if (absl::Status s = visibility::CheckSearchAttributes(req.search_attributes(), *ns->search_attributes);
      !s.ok()) {
    return s;
  }
  if (req.memo().ByteSizeLong() + r.schedule().action().start_workflow().input().ByteSizeLong() >
      2 * 1024 * 1024) {
    return absl::InvalidArgumentError("Blob data size exceeds limit.");  // Temporal's 2 MiB
  }
  EnsureDefaults(r);
  if (req.has_memo()) *r.mutable_memo() = req.memo();
  if (req.has_search_attributes()) *r.mutable_search_attributes() = req.search_attributes();
  const absl::Time now = clock_.Now();
  *r.mutable_info()->mutable_create_time() = ToProtoTime(now);
  *r.mutable_last_processed_time() = ToProtoTime(now);
  r.set_conflict_token(1);  // Temporal's InitialConflictToken
  r.set_create_request_id(req.request_id());
  if (absl::Status s = ApplyPatch(r, req.initial_patch()); !s.ok()) return s;
  absl::Status created = store_.Create(r);
  if (created.code() == absl::StatusCode::kAlreadyExists) {
    // The same request again (a client's retry): what the first one did.
    absl::StatusOr<StoredSchedule> existing = store_.Get(ns->id, req.schedule_id());
    if (existing.ok() && existing->record.create_request_id() == req.request_id()) {
      wf::CreateScheduleResponse out;
      out.set_conflict_token(EncodeConflictToken(existing->record.conflict_token()));
      return out;
    }
    return absl::AlreadyExistsError(absl::StrCat("schedule \"", req.schedule_id(), "\" is already registered"));
  }
  if (!created.ok()) return created;
  Touch(ns->id, req.schedule_id());
  wf::CreateScheduleResponse out;
  out.set_conflict_token(EncodeConflictToken(r.conflict_token()));
  return out;
}

absl::StatusOr<wf::DescribeScheduleResponse> Schedules::Describe(const wf::DescribeScheduleRequest& req) {
  if (absl::Status s = CheckId(req.schedule_id(), "ScheduleId", kMaxIdBytes); !s.ok()) return s;
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
  if (!ns.ok()) return ns.status();
  absl::StatusOr<StoredSchedule> s = Find(ns->id, req.schedule_id());
  if (!s.ok()) return s.status();
  std::unique_ptr<CompiledSpec> spec = CompileOf(s->record);
  return DescribeOf(s->record, spec.get());
}

absl::StatusOr<wf::UpdateScheduleResponse> Schedules::Update(const wf::UpdateScheduleRequest& req) {
  if (absl::Status s = CheckId(req.schedule_id(), "ScheduleId", kMaxIdBytes); !s.ok()) return s;
  if (req.request_id().size() > kMaxIdBytes) return absl::InvalidArgumentError("RequestId length exceeds limit.");
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), false, namespaces::NamespaceAccess::kWrite);
  if (!ns.ok()) return ns.status();
  temporal::api::schedule::v1::Schedule schedule = req.schedule();
  if (absl::Status s = CheckAction(schedule.action(), *ns->search_attributes); !s.ok()) return s;
  if (absl::Status s = Canonicalize(schedule); !s.ok()) return s;
  if (absl::Status s = CheckState(schedule.state()); !s.ok()) return s;
  if (absl::Status s = visibility::CheckSearchAttributes(req.search_attributes(), *ns->search_attributes);
      !s.ok()) {
    return s;
  }
  const int64_t token = DecodeConflictToken(req.conflict_token());
  absl::StatusOr<StoredSchedule> updated =
      Mutate(ns->id, req.schedule_id(), [&](ScheduleRecord& r, bool*) -> absl::Status {
        if (token != 0 && token != r.conflict_token()) {
          return absl::FailedPreconditionError("mismatched conflict token");
        }
        *r.mutable_schedule() = schedule;
        EnsureDefaults(r);
        // Nil search attributes leave them; a set (maybe empty) one replaces them.
        if (req.has_search_attributes()) *r.mutable_search_attributes() = req.search_attributes();
        const absl::Time now = clock_.Now();
        *r.mutable_info()->mutable_update_time() = ToProtoTime(now);
        // Times before the update are not taken (ProcessTimeRange drops them).
        r.set_conflict_token(r.conflict_token() + 1);
        return absl::OkStatus();
      });
  if (!updated.ok()) return updated.status();
  Touch(ns->id, req.schedule_id());
  return wf::UpdateScheduleResponse();
}

absl::StatusOr<wf::PatchScheduleResponse> Schedules::Patch(const wf::PatchScheduleRequest& req) {
  if (!req.has_patch()) return absl::InvalidArgumentError("Patch is not set on request.");
  if (absl::Status s = CheckId(req.schedule_id(), "ScheduleId", kMaxIdBytes); !s.ok()) return s;
  if (req.request_id().size() > kMaxIdBytes) return absl::InvalidArgumentError("RequestId length exceeds limit.");
  if (absl::Status s = CheckPatch(req.patch()); !s.ok()) return s;
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), false, namespaces::NamespaceAccess::kWrite);
  if (!ns.ok()) return ns.status();
  wf::PatchScheduleRequest patch = req;
  if (patch.patch().has_trigger_immediately() && !patch.patch().trigger_immediately().has_scheduled_time()) {
    *patch.mutable_patch()->mutable_trigger_immediately()->mutable_scheduled_time() = ToProtoTime(clock_.Now());
  }
  absl::StatusOr<StoredSchedule> patched = Mutate(
      ns->id, req.schedule_id(), [&](ScheduleRecord& r, bool*) { return ApplyPatch(r, patch.patch()); });
  if (!patched.ok()) return patched.status();
  Touch(ns->id, req.schedule_id());
  return wf::PatchScheduleResponse();
}

absl::StatusOr<wf::ListSchedulesResponse> Schedules::List(const wf::ListSchedulesRequest& req) {
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
  if (!ns.ok()) return ns.status();
  absl::StatusOr<ScheduleQuery> query = ParseScheduleQuery(req.query());
  if (!query.ok()) return query.status();
  const int32_t size = req.maximum_page_size() <= 0 || req.maximum_page_size() > kMaxPageSize
                           ? kMaxPageSize
                           : req.maximum_page_size();
  wf::ListSchedulesResponse out;
  std::string after = req.next_page_token();
  while (true) {
    absl::StatusOr<std::vector<StoredSchedule>> page = store_.List(ns->id, after, kMaxPageSize);
    if (!page.ok()) return page.status();
    for (const StoredSchedule& s : *page) {
      if (out.schedules_size() == size) {
        // More remain (this one at least): the next page starts after the last one seen.
        out.set_next_page_token(after);
        return out;
      }
      after = s.record.schedule_id();
      if (!query->Matches(s.record)) continue;
      std::unique_ptr<CompiledSpec> spec = CompileOf(s.record);
      *out.add_schedules() = ListEntryOf(s.record, spec.get());
    }
    if (static_cast<int>(page->size()) < kMaxPageSize) return out;
  }
}

absl::StatusOr<wf::DeleteScheduleResponse> Schedules::Delete(const wf::DeleteScheduleRequest& req) {
  if (absl::Status s = CheckId(req.schedule_id(), "ScheduleId", kMaxIdBytes); !s.ok()) return s;
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kWrite);
  if (!ns.ok()) return ns.status();
  absl::Status s = store_.Delete(ns->id, req.schedule_id());
  if (s.code() == absl::StatusCode::kNotFound) return NotFound();
  if (!s.ok()) return s;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(Key(ns->id, req.schedule_id()));
    if (it != entries_.end() && !it->second.busy) entries_.erase(it);
  }
  return wf::DeleteScheduleResponse();
}

absl::StatusOr<wf::ListScheduleMatchingTimesResponse> Schedules::MatchingTimes(
    const wf::ListScheduleMatchingTimesRequest& req) {
  if (absl::Status s = CheckId(req.schedule_id(), "ScheduleId", kMaxIdBytes); !s.ok()) return s;
  if (!req.has_start_time() || !req.has_end_time()) {
    return absl::InvalidArgumentError("missing or invalid query");
  }
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
  if (!ns.ok()) return ns.status();
  absl::StatusOr<StoredSchedule> s = Find(ns->id, req.schedule_id());
  if (!s.ok()) return s.status();
  absl::StatusOr<CompiledSpec> spec = CompiledSpec::Compile(s->record.schedule().spec());
  if (!spec.ok()) return absl::InvalidArgumentError(absl::StrCat("invalid schedule: ", spec.status().message()));
  wf::ListScheduleMatchingTimesResponse out;
  const std::string seed = JitterSeed(s->record);
  const absl::Time end = FromProtoTime(req.end_time());
  absl::Time t = FromProtoTime(req.start_time());
  for (int i = 0; i < kMaxListMatchingTimes; ++i) {
    std::optional<NextTime> next = spec->GetNextTime(seed, t);
    if (!next.has_value() || next->next > end) break;
    t = next->next;
    *out.add_start_time() = ToProtoTime(t);
  }
  return out;
}

void RegisterScheduleHandlers(rpc::Dispatcher& dispatcher, Schedules& schedules) {
  const std::string service = "temporal.api.workflowservice.v1.WorkflowService/";
  dispatcher.AddUnary<wf::CreateScheduleRequest, wf::CreateScheduleResponse>(
      service + "CreateSchedule",
      [&schedules](const auto& req, const rpc::CallContext&) { return schedules.Create(req); });
  dispatcher.AddUnary<wf::DescribeScheduleRequest, wf::DescribeScheduleResponse>(
      service + "DescribeSchedule",
      [&schedules](const auto& req, const rpc::CallContext&) { return schedules.Describe(req); });
  dispatcher.AddUnary<wf::UpdateScheduleRequest, wf::UpdateScheduleResponse>(
      service + "UpdateSchedule",
      [&schedules](const auto& req, const rpc::CallContext&) { return schedules.Update(req); });
  dispatcher.AddUnary<wf::PatchScheduleRequest, wf::PatchScheduleResponse>(
      service + "PatchSchedule",
      [&schedules](const auto& req, const rpc::CallContext&) { return schedules.Patch(req); });
  dispatcher.AddUnary<wf::ListSchedulesRequest, wf::ListSchedulesResponse>(
      service + "ListSchedules",
      [&schedules](const auto& req, const rpc::CallContext&) { return schedules.List(req); });
  dispatcher.AddUnary<wf::DeleteScheduleRequest, wf::DeleteScheduleResponse>(
      service + "DeleteSchedule",
      [&schedules](const auto& req, const rpc::CallContext&) { return schedules.Delete(req); });
  dispatcher.AddUnary<wf::ListScheduleMatchingTimesRequest, wf::ListScheduleMatchingTimesResponse>(
      service + "ListScheduleMatchingTimes",
      [&schedules](const auto& req, const rpc::CallContext&) { return schedules.MatchingTimes(req); });
}

}  // namespace tock::server::scheduler
