#include "server-core/frontend/batch_operations.h"


#include <algorithm>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
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

bool Transient(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::DEADLINE_EXCEEDED ||
         code == grpc::StatusCode::RESOURCE_EXHAUSTED || code == grpc::StatusCode::ABORTED;
}

// A target: the run and its start, for the cursor.
struct Target {
  temporal::api::common::v1::WorkflowExecution execution;
  int64_t start_ms = 0;
};

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
  BatchOperationRecord record;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  std::thread thread;
};

BatchOperations::BatchOperations(persistence::BatchStore& store,
                                 persistence::VisibilityStore& visibility,
                                 NamespaceEngine& namespaces, Clock& clock, Logger& logger,
                                 std::function<bool(const std::string&, const std::string&)> owns)
    : store_(store),
      visibility_(visibility),
      namespaces_(namespaces),
      clock_(clock),
      logger_(logger),
      owns_(std::move(owns)) {}

BatchOperations::~BatchOperations() { Shutdown(); }

void BatchOperations::Start(const std::string& frontend_address, const rpc::Dialer& dialer) {
  frontend_ = wf::WorkflowService::NewStub(dialer.Dial(frontend_address));
  scanner_ = std::thread([this] { ScanLoop(); });
}

void BatchOperations::Shutdown() {
  std::map<std::string, std::unique_ptr<Runner>> runners;
  {
    std::lock_guard lock(mu_);
    if (shutdown_) return;
    shutdown_ = true;
    for (auto& [key, runner] : runners_) runner->stop = true;
    runners.swap(runners_);
  }
  wake_.notify_all();
  if (scanner_.joinable()) scanner_.join();
  for (auto& [key, runner] : runners) {
    if (runner->thread.joinable()) runner->thread.join();
  }
}

void BatchOperations::ScanLoop() {
  while (true) {
    absl::StatusOr<std::vector<BatchOperationRecord>> running = store_.ListRunning();
    if (running.ok()) {
      for (BatchOperationRecord& record : *running) {
        if (owns_(record.namespace_id(), record.request().job_id())) Launch(std::move(record));
      }
    }
    std::vector<std::unique_ptr<Runner>> finished;
    std::unique_lock lock(mu_);
    for (auto it = runners_.begin(); it != runners_.end();) {
      if (it->second->done) {
        finished.push_back(std::move(it->second));
        it = runners_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();
    for (auto& runner : finished) runner->thread.join();
    lock.lock();
    if (wake_.wait_for(lock, absl::ToChronoSeconds(kScanInterval), [this] { return shutdown_; })) {
      return;
    }
  }
}

void BatchOperations::Launch(BatchOperationRecord record) {
  std::lock_guard lock(mu_);
  if (shutdown_ || frontend_ == nullptr) return;
  const std::string key = Key(record.namespace_id(), record.request().job_id());
  if (runners_.contains(key)) return;
  auto runner = std::make_unique<Runner>();
  runner->record = std::move(record);
  Runner* r = runner.get();
  runner->thread = std::thread([this, r] {
    Run(*r);
    {
      std::lock_guard done_lock(mu_);
      r->done = true;
    }
    runner_done_.notify_all();
  });
  runners_[key] = std::move(runner);
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

std::string BatchOperations::Apply(const BatchOperationRecord& record,
                                   const temporal::api::common::v1::WorkflowExecution& execution) {
  const Request& req = record.request();
  const std::string identity =
      IdentityOf(req).empty() ? std::string(kDefaultIdentity) : IdentityOf(req);
  grpc::Status status;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
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
          std::lock_guard lock(mu_);
          made_by_reset_.insert(out.run_id());
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
    if (!Transient(status.error_code())) break;
  }
  return absl::StrCat(execution.workflow_id(), ": ", status.error_message().substr(0, 200));
}

void BatchOperations::Run(Runner& runner) {
  BatchOperationRecord& record = runner.record;
  {
    // The batch as stored now, under state_mu_: a stop written after the scan (or StartBatch)
    // read this record found no runner to stop, and a runner that just ended may have saved
    // progress since.
    std::lock_guard lock(state_mu_);
    absl::StatusOr<BatchOperationRecord> stored =
        store_.Get(record.namespace_id(), record.request().job_id());
    if (stored.ok()) {
      if (stored->state() != enums::BATCH_OPERATION_STATE_RUNNING) return;
      record = *std::move(stored);
    }
  }
  const Request& req = record.request();
  Pacer pacer(req.max_operations_per_second() > 0 ? req.max_operations_per_second()
                                                  : kDefaultRps);
  std::optional<persistence::VisibilityFilter> filter;
  if (!req.visibility_query().empty()) {
    auto schema = namespaces_.ForNamespaceId(record.namespace_id());
    absl::StatusOr<persistence::VisibilityFilter> compiled =
        visibility::CompileQuery(req.visibility_query(), *schema);
    if (compiled.ok()) {
      filter = std::move(*compiled);
      filter->order_by = {{VisibilityField::kStartTime, true}, {VisibilityField::kRunId, true}};
    }
  }
  // A stop from another host is read from the record by the callers (StoppedElsewhere) and
  // by SaveProgress after each page.
  std::atomic<int64_t> stop_checked_at{absl::GetCurrentTimeNanos()};
  while (!runner.stop) {
    if (!owns_(record.namespace_id(), req.job_id())) return;  // its new owner goes on

    std::vector<Target> page;
    if (req.executions_size() > 0) {
      for (int i = record.executions_done(); i < req.executions_size() &&
                                             page.size() < static_cast<size_t>(kPageSize);
           ++i) {
        page.push_back({req.executions(i), 0});
      }
    } else if (filter.has_value()) {
      persistence::VisibilityFilter next = *filter;
      if (record.cursor_set()) {
        const int64_t at = record.cursor_start_ms();
        next.predicate = VisibilityPredicate::And(
            {filter->predicate,
             VisibilityPredicate::Or(
                 {VisibilityPredicate::Of(VisibilityField::kStartTime, VisibilityOp::kLess, {at}),
                  VisibilityPredicate::And(
                      {VisibilityPredicate::Of(VisibilityField::kStartTime, VisibilityOp::kEqual,
                                               {at}),
                       VisibilityPredicate::Of(VisibilityField::kRunId, VisibilityOp::kLess,
                                               {record.cursor_run_id()})})})});
      }
      absl::StatusOr<persistence::VisibilityPage> listed =
          visibility_.List(record.namespace_id(), next, kPageSize, "");
      if (!listed.ok()) {
        logger_.Warn("batch operation: listing its runs failed; retried",
                     {{"job_id", req.job_id()}, {"error", std::string(listed.status().message())}});
        absl::SleepFor(absl::Seconds(1));
        continue;
      }
      for (const std::string& bytes : listed->executions) {
        temporal::api::workflow::v1::WorkflowExecutionInfo info;
        if (!info.ParseFromString(bytes)) continue;
        page.push_back({info.execution(), absl::ToUnixMillis(FromProtoTime(info.start_time()))});
      }
      // A reset's new run keeps its base run's start time, so it may come up in a later page:
      // the runs this batch made are not reset again.
      {
        std::lock_guard lock(mu_);
        std::erase_if(page, [this](const Target& t) {
          return made_by_reset_.contains(t.execution.run_id());
        });
      }
      if (page.empty() && !listed->executions.empty()) {
        // Only runs this batch made: move the cursor past them.
        temporal::api::workflow::v1::WorkflowExecutionInfo info;
        info.ParseFromString(listed->executions.back());
        record.set_cursor_set(true);
        record.set_cursor_start_ms(absl::ToUnixMillis(FromProtoTime(info.start_time())));
        record.set_cursor_run_id(info.execution().run_id());
        continue;
      }
    }
    if (page.empty()) break;

    std::vector<std::string> failures(page.size());
    std::vector<char> applied(page.size(), 0);
    std::atomic<size_t> next_index{0};
    {
      std::vector<std::jthread> callers;
      for (int c = 0; c < kConcurrency; ++c) {
        callers.emplace_back([&] {
          while (!runner.stop) {
            const size_t i = next_index++;
            if (i >= page.size()) return;
            if (!pacer.Wait(runner.stop)) return;
            if (StoppedElsewhere(record, stop_checked_at)) {
              runner.stop = true;
              return;
            }
            failures[i] = Apply(record, page[i].execution);
            applied[i] = 1;
          }
        });
      }
    }
    // The cursor moves past the runs handled without a gap; a stop can leave a few handled
    // after a gap, which a resumed batch handles again (at least once).
    size_t handled = 0;
    while (handled < page.size() && applied[handled]) ++handled;
    for (size_t i = 0; i < handled; ++i) {
      if (failures[i].empty()) {
        record.set_complete_operation_count(record.complete_operation_count() + 1);
        continue;
      }
      record.set_failure_operation_count(record.failure_operation_count() + 1);
      record.add_recent_failures(failures[i]);
      if (record.recent_failures_size() > kRecentFailures) {
        record.mutable_recent_failures()->erase(record.mutable_recent_failures()->begin());
      }
    }
    if (handled > 0) {
      if (req.executions_size() > 0) {
        record.set_executions_done(record.executions_done() + static_cast<int32_t>(handled));
      } else {
        record.set_cursor_set(true);
        record.set_cursor_start_ms(page[handled - 1].start_ms);
        record.set_cursor_run_id(page[handled - 1].execution.run_id());
      }
    }
    const int64_t seen = record.complete_operation_count() + record.failure_operation_count();
    if (seen > record.total_operation_count()) record.set_total_operation_count(seen);
    if (!SaveProgress(record)) return;  // stopped meanwhile: its progress is saved, no more
    if (handled < page.size()) return;  // stopped: the record holds where it got to
  }
  if (runner.stop) return;
  std::lock_guard lock(state_mu_);
  absl::StatusOr<BatchOperationRecord> stored = store_.Get(record.namespace_id(), req.job_id());
  if (stored.ok() && stored->state() != enums::BATCH_OPERATION_STATE_RUNNING) return;
  record.set_state(enums::BATCH_OPERATION_STATE_COMPLETED);
  *record.mutable_close_time() = ToProtoTime(clock_.Now());
  if (absl::Status s = store_.Update(record); !s.ok()) {
    logger_.Warn("batch operation: recording its end failed; it runs again",
                 {{"job_id", req.job_id()}, {"error", std::string(s.message())}});
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

bool BatchOperations::SaveProgress(BatchOperationRecord& record) {
  // Under state_mu_, so that a stop on this host is never written over; a stop from another
  // host between the read and the write below could be (a window of one statement).
  std::lock_guard lock(state_mu_);
  absl::StatusOr<BatchOperationRecord> stored =
      store_.Get(record.namespace_id(), record.request().job_id());
  const bool running = !stored.ok() || stored->state() == enums::BATCH_OPERATION_STATE_RUNNING;
  if (!running) {
    record.set_state(stored->state());
    *record.mutable_close_time() = stored->close_time();
    record.set_stop_reason(stored->stop_reason());
    record.set_stop_identity(stored->stop_identity());
  }
  if (absl::Status s = store_.Update(record); !s.ok()) {
    logger_.Warn("batch operation: saving its progress failed",
                 {{"job_id", record.request().job_id()}, {"error", std::string(s.message())}});
  }
  return running;
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
  absl::StatusOr<NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), false, NamespaceAccess::kWrite);
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
  absl::StatusOr<std::vector<BatchOperationRecord>> running = store_.ListRunning();
  if (!running.ok()) return running.status();
  if (std::any_of(running->begin(), running->end(),
                  [&](const auto& r) { return r.namespace_id() == ns->id; })) {
    // Temporal's frontend.MaxConcurrentBatchOperationPerNamespace (default 1).
    return absl::ResourceExhaustedError("Max concurrent batch operations is reached");
  }

  BatchOperationRecord record;
  *record.mutable_request() = req;
  record.set_namespace_id(ns->id);
  record.set_state(enums::BATCH_OPERATION_STATE_RUNNING);
  *record.mutable_start_time() = ToProtoTime(clock_.Now());
  record.set_total_operation_count(total);
  absl::Status created = store_.Create(record);
  if (created.code() == absl::StatusCode::kAlreadyExists) {
    return absl::AlreadyExistsError(
        absl::StrCat("a batch operation with job id ", req.job_id(), " already exists"));
  }
  if (!created.ok()) return created;
  if (owns_(record.namespace_id(), req.job_id())) Launch(std::move(record));
  return absl::OkStatus();
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
  absl::StatusOr<NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), true, NamespaceAccess::kRead);
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
  absl::StatusOr<NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), true, NamespaceAccess::kRead);
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
  absl::StatusOr<NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(req.namespace_(), false, NamespaceAccess::kWrite);
  if (!ns.ok()) return ns.status();
  {
    // Read and written under state_mu_: this host's runner saves its progress before or
    // after, never over the stop; one launched after this reads the stop and does nothing.
    std::lock_guard lock(state_mu_);
    absl::StatusOr<BatchOperationRecord> r = Find(ns->id, req.job_id());
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
    if (absl::Status s = store_.Update(*r); !s.ok()) return s;
  }
  // Then the answer waits for this host's runner to let its operations in flight end (bounded
  // by one call's deadline), so that nothing the job does lands after it. The runner is
  // looked for after the write: one launched before it is stopped here, one after reads it.
  std::unique_lock lock(mu_);
  const std::string key = Key(ns->id, req.job_id());
  auto it = runners_.find(key);
  if (it != runners_.end()) {
    it->second->stop = true;
    runner_done_.wait_for(lock, std::chrono::seconds(12), [&] {
      auto found = runners_.find(key);
      return found == runners_.end() || found->second->done;
    });
  }
  return absl::OkStatus();
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
