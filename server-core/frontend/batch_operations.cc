#include "server-core/frontend/batch_operations.h"


#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/common/retryable.h"
#include "lib/common/time_format.h"
#include "server-core/frontend/handlers.h"
#include "server-core/visibility/query.h"

namespace tock::server::frontend {
namespace {

namespace enums = temporal::api::enums::v1;
using persistence::BatchOperationRecord;
using persistence::VisibilityField;
using persistence::VisibilityOp;
using persistence::VisibilityPredicate;
using Request = wf::StartBatchOperationRequest;

constexpr size_t kMaxJobIdBytes = 255;
constexpr size_t kMaxReasonBytes = 1000;
constexpr int kMaxExecutions = 1000;
constexpr int kRecentFailures = 10;
constexpr int kAttempts = 4;
constexpr int kStopAttempts = 5;  // a stop's write against a runner's saves on another host
constexpr char kDefaultIdentity[] = "tock-batch";

std::string Key(const std::string& namespace_id, const std::string& job_id) {
  return absl::StrCat(namespace_id, "/", job_id);
}

enums::BatchOperationType TypeOf(const Request& req) {
  switch (req.operation_case()) {
    case Request::kTerminationOperation:
      return enums::BATCH_OPERATION_TYPE_TERMINATE;
    case Request::kCancellationOperation:
      return enums::BATCH_OPERATION_TYPE_CANCEL;
    case Request::kSignalOperation:
      return enums::BATCH_OPERATION_TYPE_SIGNAL;
    case Request::kDeletionOperation:
      return enums::BATCH_OPERATION_TYPE_DELETE;
    case Request::kResetOperation:
      return enums::BATCH_OPERATION_TYPE_RESET;
    default:
      return enums::BATCH_OPERATION_TYPE_UNSPECIFIED;
  }
}

// Who started the batch: each operation carries its identity.
std::string IdentityOf(const Request& req) {
  switch (req.operation_case()) {
    case Request::kTerminationOperation:
      return req.termination_operation().identity();
    case Request::kCancellationOperation:
      return req.cancellation_operation().identity();
    case Request::kSignalOperation:
      return req.signal_operation().identity();
    case Request::kDeletionOperation:
      return req.deletion_operation().identity();
    case Request::kResetOperation:
      return req.reset_operation().identity();
    default:
      return "";
  }
}

// A target: the run and its start, for the cursor.
struct Target {
  temporal::api::common::v1::WorkflowExecution execution;
  int64_t start_ms = 0;
};

// Counts one operation into `record`: `failure` is "" or what failed (the last
// kRecentFailures kept).
void CountOperation(BatchOperationRecord& record, const std::string& failure) {
  if (failure.empty()) {
    record.set_complete_operation_count(record.complete_operation_count() + 1);
    return;
  }
  record.set_failure_operation_count(record.failure_operation_count() + 1);
  record.add_recent_failures(failure);
  if (record.recent_failures_size() > kRecentFailures) {
    record.mutable_recent_failures()->erase(record.mutable_recent_failures()->begin());
  }
}

// Starts at most `rps` operations a second (a token every 1/rps), shared by a batch's callers.
class Pacer {
 public:
  explicit Pacer(double rps) : gap_(absl::Seconds(1.0 / rps)) {}
  // Waits for the caller's turn; false when `stop` was set meanwhile (checked every 50 ms,
  // so that a stop or a shutdown does not wait out a slow rate).
  bool Wait(const std::atomic<bool>& stop) {
    absl::Time at;
    {
      std::lock_guard lock(mu_);
      const absl::Time now = absl::Now();
      next_ = std::max(next_, now);
      at = next_;
      next_ += gap_;
    }
    for (absl::Time now = absl::Now(); now < at && !stop; now = absl::Now()) {
      absl::SleepFor(std::min(at - now, absl::Milliseconds(50)));
    }
    return !stop;
  }

 private:
  const absl::Duration gap_;
  std::mutex mu_;
  absl::Time next_ = absl::InfinitePast();
};

}  // namespace

struct BatchOperations::Runner {
  // The batch as last read or written by this runner (its revision with it).
  BatchOperationRecord record;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  // Under mu_: a driver is running one of its turns now. A stop waits for it to be false:
  // a runner between turns has saved everything it did, and its next turn does nothing.
  bool in_turn = false;
  // Set at the first turn (Begin), then used by the turns one at a time.
  bool begun = false;
  std::optional<persistence::VisibilityFilter> filter;
  std::unique_ptr<Pacer> pacer;
  // When a caller last read the record for a stop from another host (StoppedElsewhere).
  std::atomic<int64_t> stop_checked_at{0};
  // Runs this batch made by reset, not reset again by it when a later page lists them (a
  // new run keeps its base run's start time). Kept for the batch's life only: after a
  // restart such a run can be reset once more.
  std::mutex made_mu;
  std::set<std::string> made_by_reset;
  // Operations made after a run a stop left undone in the same page ("" or what failed):
  // the cursor cannot pass that run, so they are not in the record's counts (a resumed batch
  // makes them again); a stopped batch's final counts add them.
  std::vector<std::string> beyond_cursor;
};

// A page of runs to handle; `skipped_only`: the page held only runs this batch made (the
// cursor moved past them, nothing to apply).
struct BatchOperations::Page {
  std::vector<Target> targets;
  bool skipped_only = false;
};

BatchOperations::BatchOperations(persistence::BatchStore& store,
                                 persistence::VisibilityStore& visibility,
                                 namespaces::NamespaceEngine& namespaces, Clock& clock,
                                 Logger& logger,
                                 std::function<bool(const std::string&, const std::string&)> owns,
                                 absl::Duration stop_wait)
    : store_(store),
      visibility_(visibility),
      namespaces_(namespaces),
      clock_(clock),
      logger_(logger),
      owns_(std::move(owns)),
      stop_wait_(stop_wait) {}

BatchOperations::~BatchOperations() { Shutdown(); }

void BatchOperations::Start(const std::string& frontend_address, const rpc::Dialer& dialer) {
  frontend_ = wf::WorkflowService::NewStub(dialer.Dial(frontend_address));
  scanner_ = std::thread([this] { ScanLoop(); });
}

void BatchOperations::Shutdown() {
  {
    std::lock_guard lock(mu_);
    if (shutdown_) return;
    shutdown_ = true;
    for (auto& [key, runner] : runners_) runner->stop = true;
  }
  wake_.notify_all();
  if (scanner_.joinable()) scanner_.join();
  // The drivers first: a turn running waits for its page's callers, and the turns still
  // queued end at once (stopped).
  if (drivers_ != nullptr) drivers_->Stop();
  if (callers_ != nullptr) callers_->Stop();
  std::lock_guard lock(mu_);
  runners_.clear();
}

void BatchOperations::ScanLoop() {
  while (true) {
    {
      // Ended runners go first, so that a batch still running (one that must try again, or
      // whose owner changed back) is launched again by this scan.
      std::lock_guard lock(mu_);
      std::erase_if(runners_, [](const auto& entry) { return entry.second->done.load(); });
    }
    absl::StatusOr<std::vector<BatchOperationRecord>> running = store_.ListRunning();
    if (running.ok()) {
      for (BatchOperationRecord& record : *running) {
        if (owns_(record.namespace_id(), record.request().job_id())) Launch(std::move(record));
      }
    }
    std::unique_lock lock(mu_);
    ++scan_passes_;
    scanned_.notify_all();
    if (wake_.wait_for(lock, absl::ToChronoSeconds(kScanInterval), [this] { return shutdown_; })) {
      return;
    }
  }
}

void BatchOperations::Launch(BatchOperationRecord record) {
  std::lock_guard lock(mu_);
  if (shutdown_ || frontend_ == nullptr) return;
  const std::string key = Key(record.namespace_id(), record.request().job_id());
  auto it = runners_.find(key);
  if (it != runners_.end() && !it->second->done) return;
  if (drivers_ == nullptr) {
    // At the first batch: a server that runs none has no threads for them. A caller thread
    // for each of the kConcurrency calls of each page a driver may be running: one batch's
    // slow pace never holds up another's calls.
    drivers_ = std::make_unique<BlockingPool>(kDrivers);
    callers_ = std::make_unique<BlockingPool>(kDrivers * kConcurrency);
  }
  auto runner = std::make_unique<Runner>();
  runner->record = std::move(record);
  Runner* r = runner.get();
  if (!drivers_->Run([this, r] { Step(*r); })) return;  // stopping: the next start runs it
  runners_[key] = std::move(runner);
}

void BatchOperations::Step(Runner& runner) {
  {
    std::lock_guard lock(mu_);
    runner.in_turn = true;
  }
  // A stop sets `stop` under mu_: one set before this turn began is seen here, and one set
  // during it waits for its end.
  const bool more = !runner.stop && RunStep(runner);
  {
    std::lock_guard lock(mu_);
    runner.in_turn = false;
    if (!more || runner.stop || !drivers_->Run([this, &runner] { Step(runner); })) {
      runner.done = true;  // from here on the scan may destroy it
    }
    // else its next page comes after the other batches' turns
  }
  runner_done_.notify_all();
}

absl::StatusOr<int64_t> BatchOperations::ResetPoint(
    const wf::StartBatchOperationRequest& req,
    const temporal::api::common::v1::WorkflowExecution& execution) {
  const auto& op = req.reset_operation();
  const auto& options = op.options();
  if (options.target_case() == temporal::api::common::v1::ResetOptions::kWorkflowTaskId) {
    return options.workflow_task_id();
  }
  const bool last = options.target_case() == temporal::api::common::v1::ResetOptions::kLastWorkflowTask ||
                    (options.target_case() == temporal::api::common::v1::ResetOptions::TARGET_NOT_SET &&
                     op.reset_type() == enums::RESET_TYPE_LAST_WORKFLOW_TASK);
  // The point is a workflow task's completion: the event after its WorkflowTaskStarted.
  int64_t first_point = 0, last_point = 0;
  std::string token;
  for (int pages = 0; pages < 10'000; ++pages) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    wf::GetWorkflowExecutionHistoryRequest call;
    call.set_namespace_(req.namespace_());
    *call.mutable_execution() = execution;
    call.set_next_page_token(token);
    wf::GetWorkflowExecutionHistoryResponse out;
    grpc::Status s = frontend_->GetWorkflowExecutionHistory(&ctx, call, &out);
    if (!s.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
    }
    for (const auto& e : out.history().events()) {
      if (e.event_type() == enums::EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
        if (first_point == 0) first_point = e.event_id();
        last_point = e.event_id();
      }
    }
    token = out.next_page_token();
    if (token.empty() || (!last && first_point != 0)) break;
  }
  const int64_t point = last ? last_point : first_point;
  if (point == 0) return absl::FailedPreconditionError("the run has no completed workflow task");
  return point;
}

std::string BatchOperations::Apply(Runner& runner,
                                   const temporal::api::common::v1::WorkflowExecution& execution) {
  const Request& req = runner.record.request();
  const std::string identity =
      IdentityOf(req).empty() ? std::string(kDefaultIdentity) : IdentityOf(req);
  grpc::Status status;
  // A stopped batch retries nothing: its stop waits for the call in flight only.
  for (int attempt = 0; attempt < kAttempts && (attempt == 0 || !runner.stop); ++attempt) {
    if (attempt > 0) absl::SleepFor(absl::Milliseconds(100) * (1 << attempt));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    switch (req.operation_case()) {
      case Request::kTerminationOperation: {
        wf::TerminateWorkflowExecutionRequest call;
        call.set_namespace_(req.namespace_());
        *call.mutable_workflow_execution() = execution;
        call.set_reason(req.reason());
        call.set_identity(identity);
        wf::TerminateWorkflowExecutionResponse out;
        status = frontend_->TerminateWorkflowExecution(&ctx, call, &out);
        break;
      }
      case Request::kCancellationOperation: {
        wf::RequestCancelWorkflowExecutionRequest call;
        call.set_namespace_(req.namespace_());
        *call.mutable_workflow_execution() = execution;
        call.set_identity(identity);
        call.set_request_id(absl::StrCat(req.job_id(), ":", execution.run_id()));
        call.set_reason(req.reason());
        wf::RequestCancelWorkflowExecutionResponse out;
        status = frontend_->RequestCancelWorkflowExecution(&ctx, call, &out);
        break;
      }
      case Request::kSignalOperation: {
        const auto& op = req.signal_operation();
        wf::SignalWorkflowExecutionRequest call;
        call.set_namespace_(req.namespace_());
        *call.mutable_workflow_execution() = execution;
        call.set_signal_name(op.signal());
        *call.mutable_input() = op.input();
        *call.mutable_header() = op.header();
        call.set_identity(identity);
        call.set_request_id(absl::StrCat(req.job_id(), ":", execution.run_id()));
        wf::SignalWorkflowExecutionResponse out;
        status = frontend_->SignalWorkflowExecution(&ctx, call, &out);
        break;
      }
      case Request::kResetOperation: {
        absl::StatusOr<int64_t> point = ResetPoint(req, execution);
        if (!point.ok()) {
          if (point.status().code() == absl::StatusCode::kUnavailable) {
            status = grpc::Status(grpc::StatusCode::UNAVAILABLE, std::string(point.status().message()));
            break;
          }
          return absl::StrCat(execution.workflow_id(), ": ", point.status().message().substr(0, 200));
        }
        const auto& options = req.reset_operation().options();
        wf::ResetWorkflowExecutionRequest call;
        call.set_namespace_(req.namespace_());
        *call.mutable_workflow_execution() = execution;
        call.set_reason(req.reason());
        call.set_workflow_task_finish_event_id(*point);
        call.set_request_id(absl::StrCat(req.job_id(), ":", execution.run_id()));
        call.set_reset_reapply_type(options.reset_reapply_type() != 0
                                        ? options.reset_reapply_type()
                                        : req.reset_operation().reset_reapply_type());
        *call.mutable_reset_reapply_exclude_types() = options.reset_reapply_exclude_types();
        wf::ResetWorkflowExecutionResponse out;
        status = frontend_->ResetWorkflowExecution(&ctx, call, &out);
        if (status.ok()) {
          std::lock_guard lock(runner.made_mu);
          runner.made_by_reset.insert(out.run_id());
        }
        // A run that is no longer the current one: skipped when only current runs count.
        if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
            options.current_run_only()) {
          return "";
        }
        break;
      }
      case Request::kDeletionOperation: {
        wf::DeleteWorkflowExecutionRequest call;
        call.set_namespace_(req.namespace_());
        *call.mutable_workflow_execution() = execution;
        wf::DeleteWorkflowExecutionResponse out;
        status = frontend_->DeleteWorkflowExecution(&ctx, call, &out);
        break;
      }
      default:
        return "the operation is not supported";
    }
    if (status.ok()) return "";
    // A run that closed (or went) meanwhile needs nothing more; a signal to it did fail.
    if (status.error_code() == grpc::StatusCode::NOT_FOUND &&
        req.operation_case() != Request::kSignalOperation) {
      return "";
    }
    if (!IsRetryable(static_cast<absl::StatusCode>(status.error_code()))) break;
  }
  return absl::StrCat(execution.workflow_id(), ": ", status.error_message().substr(0, 200));
}

bool BatchOperations::RunStep(Runner& runner) {
  if (!runner.begun) {
    if (!Begin(runner)) return false;
    runner.begun = true;
  }
  BatchOperationRecord& record = runner.record;
  const Request& req = record.request();
  if (!owns_(record.namespace_id(), req.job_id())) return false;  // its new owner goes on
  absl::StatusOr<Page> page = NextPage(runner);
  if (!page.ok()) {
    logger_.Warn("batch operation: listing its runs failed; tried again at the next scan",
                 {{"job_id", req.job_id()}, {"error", std::string(page.status().message())}});
    return false;
  }
  if (page->skipped_only) return true;
  if (page->targets.empty()) {
    Complete(runner);
    return false;
  }
  const size_t handled = RunPage(runner, *page);
  if (handled > 0) {
    const Target& last = page->targets[handled - 1];
    if (req.executions_size() > 0) {
      record.set_executions_done(record.executions_done() + static_cast<int32_t>(handled));
    } else {
      record.set_cursor_set(true);
      record.set_cursor_start_ms(last.start_ms);
      record.set_cursor_run_id(last.execution.run_id());
    }
  }
  const int64_t seen = record.complete_operation_count() + record.failure_operation_count();
  if (seen > record.total_operation_count()) record.set_total_operation_count(seen);
  if (!SaveProgress(runner)) return false;  // stopped, or gone on elsewhere
  // Stopped within the page: the record holds where it got to.
  return handled == page->targets.size();
}

bool BatchOperations::Begin(Runner& runner) {
  BatchOperationRecord& record = runner.record;
  {
    // The batch as stored now, under state_mu_: a stop written after the scan (or StartBatch)
    // read this record found no runner to stop, and a runner that just ended may have saved
    // progress since.
    std::lock_guard lock(state_mu_);
    absl::StatusOr<BatchOperationRecord> stored =
        store_.Get(record.namespace_id(), record.request().job_id());
    if (!stored.ok()) {
      logger_.Warn("batch operation: reading it failed; tried again at the next scan",
                   {{"job_id", record.request().job_id()},
                    {"error", std::string(stored.status().message())}});
      return false;
    }
    if (stored->state() != enums::BATCH_OPERATION_STATE_RUNNING) return false;
    record = *std::move(stored);
  }
  const Request& req = record.request();
  runner.pacer = std::make_unique<Pacer>(
      req.max_operations_per_second() > 0 ? req.max_operations_per_second() : kDefaultRps);
  runner.stop_checked_at = absl::GetCurrentTimeNanos();
  if (req.visibility_query().empty()) return true;
  absl::StatusOr<persistence::VisibilityFilter> filter = CompileFilter(record);
  if (filter.ok()) {
    runner.filter = *std::move(filter);
    return true;
  }
  // Never run without its query (that would complete it with nothing done): a store that
  // cannot answer now is asked again at the next scan; a query that no longer compiles
  // against the namespace as stored fails the batch, saying why.
  const std::string error(filter.status().message().substr(0, 500));
  if (IsRetryable(filter.status())) {
    logger_.Warn("batch operation: its query cannot be compiled now; tried again at the next scan",
                 {{"job_id", req.job_id()}, {"error", error}});
    return false;
  }
  logger_.Error("batch operation: its query cannot be compiled; the batch failed",
                {{"job_id", req.job_id()}, {"error", error}});
  Fail(runner, absl::StrCat("the batch's query cannot be compiled: ", error));
  return false;
}

absl::StatusOr<persistence::VisibilityFilter> BatchOperations::CompileFilter(
    const BatchOperationRecord& record) {
  absl::StatusOr<std::shared_ptr<const visibility::SearchAttributeSchema>> schema =
      namespaces_.SchemaForNamespaceId(record.namespace_id());
  if (!schema.ok()) {
    return absl::Status(schema.status().code(),
                        absl::StrCat("reading the namespace failed: ", schema.status().message()));
  }
  absl::StatusOr<persistence::VisibilityFilter> filter =
      visibility::CompileQuery(record.request().visibility_query(), **schema);
  if (!filter.ok()) {
    // The query compiled at the start; against the namespace as stored now it does not.
    return absl::InvalidArgumentError(filter.status().message());
  }
  filter->order_by = {{VisibilityField::kStartTime, true}, {VisibilityField::kRunId, true}};
  return filter;
}

absl::StatusOr<BatchOperations::Page> BatchOperations::NextPage(Runner& runner) {
  BatchOperationRecord& record = runner.record;
  const Request& req = record.request();
  Page page;
  if (req.executions_size() > 0) {
    for (int i = record.executions_done();
         i < req.executions_size() && page.targets.size() < static_cast<size_t>(kPageSize); ++i) {
      page.targets.push_back({req.executions(i), 0});
    }
    return page;
  }
  if (!runner.filter.has_value()) return page;  // nothing to select
  const persistence::VisibilityFilter& filter = *runner.filter;
  persistence::VisibilityFilter next = filter;
  if (record.cursor_set()) {
    const int64_t at = record.cursor_start_ms();
    next.predicate = VisibilityPredicate::And(
        {filter.predicate,
         VisibilityPredicate::Or(
             {VisibilityPredicate::Of(VisibilityField::kStartTime, VisibilityOp::kLess, {at}),
              VisibilityPredicate::And(
                  {VisibilityPredicate::Of(VisibilityField::kStartTime, VisibilityOp::kEqual, {at}),
                   VisibilityPredicate::Of(VisibilityField::kRunId, VisibilityOp::kLess,
                                           {record.cursor_run_id()})})})});
  }
  absl::StatusOr<persistence::VisibilityPage> listed =
      visibility_.List(record.namespace_id(), next, kPageSize, "");
  if (!listed.ok()) return listed.status();
  for (const std::string& bytes : listed->executions) {
    temporal::api::workflow::v1::WorkflowExecutionInfo info;
    if (!info.ParseFromString(bytes)) continue;
    page.targets.push_back({info.execution(), absl::ToUnixMillis(FromProtoTime(info.start_time()))});
  }
  // A reset's new run keeps its base run's start time, so it may come up in a later page:
  // the runs this batch made are not reset again.
  {
    std::lock_guard lock(runner.made_mu);
    std::erase_if(page.targets, [&](const Target& t) {
      return runner.made_by_reset.contains(t.execution.run_id());
    });
  }
  if (page.targets.empty() && !listed->executions.empty()) {
    // Only runs this batch made: move the cursor past them.
    temporal::api::workflow::v1::WorkflowExecutionInfo info;
    info.ParseFromString(listed->executions.back());
    record.set_cursor_set(true);
    record.set_cursor_start_ms(absl::ToUnixMillis(FromProtoTime(info.start_time())));
    record.set_cursor_run_id(info.execution().run_id());
    page.skipped_only = true;
  }
  return page;
}

size_t BatchOperations::RunPage(Runner& runner, const Page& page) {
  const std::vector<Target>& targets = page.targets;
  std::vector<std::string> failures(targets.size());
  std::vector<char> applied(targets.size(), 0);
  std::atomic<size_t> next_index{0};
  std::mutex mu;
  std::condition_variable ended;
  int active = 0;
  auto call_loop = [&] {
    while (!runner.stop) {
      const size_t i = next_index++;
      if (i >= targets.size()) break;
      if (!runner.pacer->Wait(runner.stop)) break;
      if (StoppedElsewhere(runner.record, runner.stop_checked_at)) {
        runner.stop = true;
        break;
      }
      failures[i] = Apply(runner, targets[i].execution);
      applied[i] = 1;
    }
    std::lock_guard lock(mu);
    if (--active == 0) ended.notify_all();
  };
  const int loops = static_cast<int>(std::min<size_t>(kConcurrency, targets.size()));
  for (int c = 0; c < loops; ++c) {
    {
      std::lock_guard lock(mu);
      ++active;
    }
    if (!callers_->Run(call_loop)) {  // stopping: the runs not reached wait for the next start
      std::lock_guard lock(mu);
      --active;
    }
  }
  {
    std::unique_lock lock(mu);
    ended.wait(lock, [&] { return active == 0; });
  }
  // The cursor moves past the runs handled without a gap; a stop can leave a few handled
  // after a gap, which a resumed batch handles again (at least once).
  BatchOperationRecord& record = runner.record;
  size_t handled = 0;
  while (handled < targets.size() && applied[handled]) ++handled;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (i < handled) {
      CountOperation(record, failures[i]);
    } else if (applied[i]) {
      runner.beyond_cursor.push_back(failures[i]);
    }
  }
  return handled;
}

void BatchOperations::Complete(Runner& runner) {
  BatchOperationRecord& record = runner.record;
  std::lock_guard lock(state_mu_);
  record.set_state(enums::BATCH_OPERATION_STATE_COMPLETED);
  *record.mutable_close_time() = ToProtoTime(clock_.Now());
  absl::Status s = store_.Update(record);
  // ABORTED: stopped (or ended by another host) since it was read; that state stands.
  if (!s.ok() && s.code() != absl::StatusCode::kAborted) {
    logger_.Warn("batch operation: recording its end failed; it runs again",
                 {{"job_id", record.request().job_id()}, {"error", std::string(s.message())}});
  }
}

void BatchOperations::Fail(Runner& runner, const std::string& reason) {
  BatchOperationRecord& record = runner.record;
  std::lock_guard lock(state_mu_);
  record.set_state(enums::BATCH_OPERATION_STATE_FAILED);
  *record.mutable_close_time() = ToProtoTime(clock_.Now());
  record.set_stop_reason(reason.substr(0, kMaxReasonBytes));
  record.set_stop_identity(kDefaultIdentity);
  record.add_recent_failures(reason.substr(0, kMaxReasonBytes));
  absl::Status s = store_.Update(record);
  if (!s.ok() && s.code() != absl::StatusCode::kAborted) {
    logger_.Warn("batch operation: recording its failure failed; it is tried again",
                 {{"job_id", record.request().job_id()}, {"error", std::string(s.message())}});
  }
}

bool BatchOperations::StoppedElsewhere(const BatchOperationRecord& record,
                                       std::atomic<int64_t>& checked_at) {
  // One caller reads the record when kStopCheckInterval has passed; the others go on.
  const int64_t now = absl::GetCurrentTimeNanos();
  int64_t last = checked_at.load();
  if (now - last < absl::ToInt64Nanoseconds(kStopCheckInterval) ||
      !checked_at.compare_exchange_strong(last, now)) {
    return false;
  }
  absl::StatusOr<BatchOperationRecord> stored =
      store_.Get(record.namespace_id(), record.request().job_id());
  return stored.ok() && stored->state() != enums::BATCH_OPERATION_STATE_RUNNING;
}

bool BatchOperations::SaveProgress(Runner& runner) {
  BatchOperationRecord& record = runner.record;
  // A compare-and-swap on the revision this runner read or wrote last: a stop (from any
  // host) or another runner's progress written since is never overwritten.
  std::lock_guard lock(state_mu_);
  absl::Status s = store_.Update(record);
  if (s.ok()) {
    record.set_revision(record.revision() + 1);
    return true;
  }
  if (s.code() != absl::StatusCode::kAborted) {
    // Not saved: the next page saves it (or a restart handles these runs again).
    logger_.Warn("batch operation: saving its progress failed",
                 {{"job_id", record.request().job_id()}, {"error", std::string(s.message())}});
    return true;
  }
  absl::StatusOr<BatchOperationRecord> stored =
      store_.Get(record.namespace_id(), record.request().job_id());
  if (!stored.ok()) return false;
  if (stored->state() == enums::BATCH_OPERATION_STATE_RUNNING) {
    // Another host's runner (the batch's shard moved) went on: this one ends, and the next
    // scan goes on from the stored record if this host owns the batch again.
    logger_.Info("batch operation: another runner saved its progress; this one ends",
                 {{"job_id", record.request().job_id()}});
    return false;
  }
  SaveFinalCounts(runner, *std::move(stored));
  return false;
}

void BatchOperations::SaveFinalCounts(const Runner& runner, BatchOperationRecord stopped) {
  const BatchOperationRecord& record = runner.record;
  // One write since this runner's last save: the stop's. More means another runner saved
  // (its counts stand) or this runner's counts were written already.
  if (stopped.revision() != record.revision() + 1) return;
  stopped.set_total_operation_count(record.total_operation_count());
  stopped.set_complete_operation_count(record.complete_operation_count());
  stopped.set_failure_operation_count(record.failure_operation_count());
  *stopped.mutable_recent_failures() = record.recent_failures();
  stopped.set_cursor_set(record.cursor_set());
  stopped.set_cursor_start_ms(record.cursor_start_ms());
  stopped.set_cursor_run_id(record.cursor_run_id());
  stopped.set_executions_done(record.executions_done());
  for (const std::string& failure : runner.beyond_cursor) CountOperation(stopped, failure);
  const int64_t seen = stopped.complete_operation_count() + stopped.failure_operation_count();
  if (seen > stopped.total_operation_count()) stopped.set_total_operation_count(seen);
  absl::Status s = store_.Update(stopped);
  if (!s.ok()) {
    // The counts stay those of the last page saved before the stop.
    logger_.Warn("batch operation: recording its counts at the stop failed",
                 {{"job_id", record.request().job_id()}, {"error", std::string(s.message())}});
  }
}

absl::Status BatchOperations::StartBatch(const wf::StartBatchOperationRequest& req) {
  const bool has_target = !req.visibility_query().empty() || req.executions_size() > 0;
  if (req.operation_case() == Request::OPERATION_NOT_SET || req.reason().empty() ||
      req.namespace_().empty() || !has_target) {
    return absl::InvalidArgumentError(
        "must provide required parameters: BatchType,Reason,Namespace, AND one of (Query OR "
        "Executions)");
  }
  if (req.job_id().empty()) return absl::InvalidArgumentError("JobId is not set on request.");
  if (req.job_id().size() > kMaxJobIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("JobId exceeds length limit (", kMaxJobIdBytes, " bytes)."));
  }
  if (!req.visibility_query().empty() && req.executions_size() > 0) {
    return absl::InvalidArgumentError("visibility query and executions are mutually exclusive");
  }
  if (req.executions_size() > kMaxExecutions) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Executions exceed the limit of ", kMaxExecutions, "; select more with a visibility query."));
  }
  if (req.reason().size() > kMaxReasonBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Reason exceeds length limit (", kMaxReasonBytes, " bytes)."));
  }
  switch (req.operation_case()) {
    case Request::kTerminationOperation:
    case Request::kCancellationOperation:
    case Request::kDeletionOperation:
      break;
    case Request::kResetOperation: {
      const auto& options = req.reset_operation().options();
      using Options = temporal::api::common::v1::ResetOptions;
      if (options.target_case() == Options::kBuildId) {
        return absl::InvalidArgumentError(
            "a reset to a build id is not supported by this server; use first_workflow_task, "
            "last_workflow_task or workflow_task_id");
      }
      if (options.target_case() == Options::TARGET_NOT_SET &&
          req.reset_operation().reset_type() != enums::RESET_TYPE_FIRST_WORKFLOW_TASK &&
          req.reset_operation().reset_type() != enums::RESET_TYPE_LAST_WORKFLOW_TASK) {
        return absl::InvalidArgumentError(
            "the reset operation needs a target: options.first_workflow_task, "
            "last_workflow_task or workflow_task_id");
      }
      break;
    }
    case Request::kSignalOperation:
      if (req.signal_operation().signal().empty()) {
        return absl::InvalidArgumentError("SignalName is not set on request.");
      }
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "The operation type ",
          Request::descriptor()->FindFieldByNumber(req.operation_case())->name(),
          " is not supported by this server; it supports termination_operation, "
          "cancellation_operation, signal_operation, deletion_operation and reset_operation"));
  }
  if (!(req.max_operations_per_second() >= 0)) {
    return absl::InvalidArgumentError("MaxOperationsPerSecond must not be negative.");
  }
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), false, namespaces::NamespaceAccess::kWrite);
  if (!ns.ok()) return ns.status();

  int64_t total = req.executions_size();
  if (!req.visibility_query().empty()) {
    absl::StatusOr<persistence::VisibilityFilter> filter =
        visibility::CompileQuery(req.visibility_query(), *ns->search_attributes);
    if (!filter.ok()) return filter.status();
    if (filter->group_by_status || !filter->order_by.empty()) {
      return absl::InvalidArgumentError(
          "invalid query: a batch's query takes no GROUP BY or ORDER BY");
    }
    absl::StatusOr<int64_t> count = visibility_.Count(ns->id, filter->predicate);
    if (!count.ok()) return count.status();
    total = *count;
  }
  BatchOperationRecord record;
  *record.mutable_request() = req;
  record.set_namespace_id(ns->id);
  record.set_state(enums::BATCH_OPERATION_STATE_RUNNING);
  *record.mutable_start_time() = ToProtoTime(clock_.Now());
  record.set_total_operation_count(total);
  // The store checks the limit and inserts in one step: concurrent starts cannot both pass.
  absl::Status created = store_.Create(record);
  if (created.code() == absl::StatusCode::kAlreadyExists) {
    return absl::AlreadyExistsError(
        absl::StrCat("a batch operation with job id ", req.job_id(), " already exists"));
  }
  if (created.code() == absl::StatusCode::kResourceExhausted) {
    // Temporal's frontend.MaxConcurrentBatchOperationPerNamespace (default 1).
    return absl::ResourceExhaustedError("Max concurrent batch operations is reached");
  }
  if (!created.ok()) return created;
  if (owns_(record.namespace_id(), req.job_id())) Launch(std::move(record));
  return absl::OkStatus();
}

bool BatchOperations::RunsHere(const std::string& namespace_id, const std::string& job_id) {
  std::lock_guard lock(mu_);
  auto it = runners_.find(Key(namespace_id, job_id));
  return it != runners_.end() && !it->second->done;
}

bool BatchOperations::WaitForScanPassesForTest(int64_t passes, absl::Duration timeout) {
  std::unique_lock lock(mu_);
  return scanned_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                           [&] { return scan_passes_ >= passes; });
}

bool BatchOperations::WaitUntilNotRunningHereForTest(const std::string& namespace_id,
                                                     const std::string& job_id,
                                                     absl::Duration timeout) {
  const std::string key = Key(namespace_id, job_id);
  std::unique_lock lock(mu_);
  // By key, not by pointer: an ended runner may be destroyed (or replaced) by the scan.
  return runner_done_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] {
    auto found = runners_.find(key);
    return found == runners_.end() || found->second->done;
  });
}

absl::StatusOr<BatchOperationRecord> BatchOperations::Find(const std::string& namespace_id,
                                                           const std::string& job_id) {
  absl::StatusOr<BatchOperationRecord> r = store_.Get(namespace_id, job_id);
  if (r.status().code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(
        absl::StrCat("batch operation ", job_id.substr(0, kMaxJobIdBytes), " not found"));
  }
  return r;
}

absl::StatusOr<wf::DescribeBatchOperationResponse> BatchOperations::Describe(
    const wf::DescribeBatchOperationRequest& req) {
  if (req.job_id().empty()) return absl::InvalidArgumentError("JobId is not set on request.");
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
  if (!ns.ok()) return ns.status();
  absl::StatusOr<BatchOperationRecord> r = Find(ns->id, req.job_id());
  if (!r.ok()) return r.status();
  wf::DescribeBatchOperationResponse out;
  out.set_operation_type(TypeOf(r->request()));
  out.set_job_id(r->request().job_id());
  out.set_state(r->state());
  *out.mutable_start_time() = r->start_time();
  if (r->has_close_time()) *out.mutable_close_time() = r->close_time();
  out.set_total_operation_count(r->total_operation_count());
  out.set_complete_operation_count(r->complete_operation_count());
  out.set_failure_operation_count(r->failure_operation_count());
  out.set_identity(IdentityOf(r->request()));
  out.set_reason(r->request().reason());
  out.set_query(r->request().visibility_query());
  return out;
}

absl::StatusOr<wf::ListBatchOperationsResponse> BatchOperations::List(
    const wf::ListBatchOperationsRequest& req) {
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), true, namespaces::NamespaceAccess::kRead);
  if (!ns.ok()) return ns.status();
  int64_t offset = 0;
  if (!req.next_page_token().empty() &&
      (!absl::SimpleAtoi(req.next_page_token(), &offset) || offset < 0)) {
    return absl::InvalidArgumentError("the next_page_token is not one this server issued");
  }
  const int32_t page_size = req.page_size() > 0 ? std::min(req.page_size(), 1000) : 100;
  absl::StatusOr<std::vector<BatchOperationRecord>> records =
      store_.List(ns->id, page_size + 1, offset);
  if (!records.ok()) return records.status();
  wf::ListBatchOperationsResponse out;
  for (int i = 0; i < static_cast<int>(records->size()) && i < page_size; ++i) {
    const BatchOperationRecord& r = (*records)[i];
    auto* info = out.add_operation_info();
    info->set_job_id(r.request().job_id());
    info->set_state(r.state());
    *info->mutable_start_time() = r.start_time();
    if (r.has_close_time()) *info->mutable_close_time() = r.close_time();
    info->set_operation_type(TypeOf(r.request()));
  }
  if (static_cast<int>(records->size()) > page_size) {
    out.set_next_page_token(std::to_string(offset + page_size));
  }
  return out;
}

absl::Status BatchOperations::StopBatch(const wf::StopBatchOperationRequest& req) {
  if (req.job_id().empty()) return absl::InvalidArgumentError("JobId is not set on request.");
  if (req.namespace_().empty()) return absl::InvalidArgumentError("Namespace is not set on request.");
  if (req.reason().empty()) return absl::InvalidArgumentError("Reason is not set on request.");
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), false, namespaces::NamespaceAccess::kWrite);
  if (!ns.ok()) return ns.status();
  if (absl::Status s = WriteStop(ns->id, req); !s.ok()) return s;
  // Then the answer waits for this host's runner to end its turn (its calls in flight return
  // within one call's deadline, and it writes its final counts), so that nothing the job does
  // lands after it. The runner is looked for after the write: one launched before it is
  // stopped here, one after reads the stop and does nothing.
  std::unique_lock lock(mu_);
  const std::string key = Key(ns->id, req.job_id());
  auto it = runners_.find(key);
  if (it == runners_.end()) return absl::OkStatus();
  it->second->stop = true;
  if (WaitForRunnerOutOfTurn(lock, key)) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat(
      "batch operation ", req.job_id().substr(0, kMaxJobIdBytes),
      " is stopped, but its runner has not ended after ", absl::FormatDuration(stop_wait_),
      ": an operation in flight may still land; DescribeBatchOperation shows its counts"));
}

bool BatchOperations::WaitForRunnerOutOfTurn(std::unique_lock<std::mutex>& lock,
                                             const std::string& key) {
  // By key, not by pointer: an ended runner may be destroyed (or replaced) by the scan.
  return runner_done_.wait_for(lock, absl::ToChronoNanoseconds(stop_wait_), [&] {
    auto found = runners_.find(key);
    return found == runners_.end() || found->second->done || !found->second->in_turn;
  });
}

absl::Status BatchOperations::WriteStop(const std::string& namespace_id,
                                        const wf::StopBatchOperationRequest& req) {
  // Under state_mu_: this host's runner saves its progress before or after, and one
  // launched after this reads the stop and does nothing. A runner on another host may save
  // between the read and the write: the write then fails its compare-and-swap and is made
  // again over the record as saved.
  std::lock_guard lock(state_mu_);
  for (int attempt = 0; attempt < kStopAttempts; ++attempt) {
    absl::StatusOr<BatchOperationRecord> r = Find(namespace_id, req.job_id());
    if (!r.ok()) return r.status();
    if (r->state() != enums::BATCH_OPERATION_STATE_RUNNING) {
      return absl::FailedPreconditionError(absl::StrCat(
          "batch operation ", req.job_id().substr(0, kMaxJobIdBytes), " is not running (",
          enums::BatchOperationState_Name(r->state()), ")"));
    }
    // Temporal stops a batch by terminating its workflow: the batch is then FAILED.
    r->set_state(enums::BATCH_OPERATION_STATE_FAILED);
    *r->mutable_close_time() = ToProtoTime(clock_.Now());
    r->set_stop_reason(req.reason().substr(0, kMaxReasonBytes));
    r->set_stop_identity(req.identity().substr(0, kMaxReasonBytes));
    absl::Status s = store_.Update(*r);
    if (s.code() != absl::StatusCode::kAborted) return s;
  }
  return absl::AbortedError(
      "the batch operation is being changed by its runner at this moment; stop it again");
}

void RegisterBatchHandlers(rpc::Dispatcher& dispatcher, BatchOperations& batches) {
  const std::string service = "temporal.api.workflowservice.v1.WorkflowService/";
  dispatcher.AddUnary<wf::StartBatchOperationRequest, wf::StartBatchOperationResponse>(
      service + "StartBatchOperation",
      [&batches](const wf::StartBatchOperationRequest& req,
                 const rpc::CallContext&) -> absl::StatusOr<wf::StartBatchOperationResponse> {
        if (absl::Status s = batches.StartBatch(req); !s.ok()) return s;
        return wf::StartBatchOperationResponse();
      });
  dispatcher.AddUnary<wf::DescribeBatchOperationRequest, wf::DescribeBatchOperationResponse>(
      service + "DescribeBatchOperation",
      [&batches](const auto& req, const rpc::CallContext&) { return batches.Describe(req); });
  dispatcher.AddUnary<wf::ListBatchOperationsRequest, wf::ListBatchOperationsResponse>(
      service + "ListBatchOperations",
      [&batches](const auto& req, const rpc::CallContext&) { return batches.List(req); });
  dispatcher.AddUnary<wf::StopBatchOperationRequest, wf::StopBatchOperationResponse>(
      service + "StopBatchOperation",
      [&batches](const wf::StopBatchOperationRequest& req,
                 const rpc::CallContext&) -> absl::StatusOr<wf::StopBatchOperationResponse> {
        if (absl::Status s = batches.StopBatch(req); !s.ok()) return s;
        return wf::StopBatchOperationResponse();
      });
}

}  // namespace tock::server::frontend
