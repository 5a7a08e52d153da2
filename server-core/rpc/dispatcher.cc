#include "server-core/rpc/dispatcher.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"

namespace tock::server::rpc {
namespace {

// Temporal's error type names (its serviceerror types), by gRPC code.
constexpr const char* kErrorTypes[17] = {
    "OK",       "Canceled",       "Unknown",          "InvalidArgument",   "DeadlineExceeded",
    "NotFound", "AlreadyExists",  "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
    "Aborted",  "OutOfRange",     "Unimplemented",    "Internal",          "Unavailable",
    "DataLoss", "Unauthenticated"};

// Temporal's older counter per error type, where it has one.
const char* SpecificErrorCounter(int code) {
  switch (static_cast<grpc::StatusCode>(code)) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "service_errors_invalid_argument_total";
    case grpc::StatusCode::NOT_FOUND:
      return "service_errors_entity_not_found_total";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "service_errors_resource_exhausted_total";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "service_errors_context_timeout_total";
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED:
      return "service_errors_unauthorized_total";
    default:
      return nullptr;
  }
}

// The caller's mistake or an answer the protocol expects (Temporal's isExpectedError): not a
// server failure.
bool ExpectedError(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::UNAUTHENTICATED:
      return true;
    default:
      return false;
  }
}

// Errors that mean a bug or damage on the server's side: logged at warn, the rest at debug.
bool ServerFault(grpc::StatusCode code) {
  return code == grpc::StatusCode::INTERNAL || code == grpc::StatusCode::UNKNOWN ||
         code == grpc::StatusCode::DATA_LOSS;
}

}  // namespace

// Serves one unary call over the generic bidi-stream surface: read the single request,
// run the handler, write the single response (or only the status) and finish.
class UnaryReactor : public grpc::ServerGenericBidiReactor {
 public:
  UnaryReactor(const Dispatcher& dispatcher, grpc::GenericCallbackServerContext* ctx)
      : dispatcher_(dispatcher), ctx_(ctx) {
    context_.grpc = ctx;
    context_.cancellation = std::make_shared<CancellationSignal>();
    auto deadline = ctx->deadline();
    if (deadline != std::chrono::system_clock::time_point::max()) {
      context_.deadline = absl::FromChrono(deadline);
    }
    const std::string& full = ctx->method();
    context_.method = !full.empty() && full[0] == '/' ? full.substr(1) : full;
    auto it = dispatcher_.handlers_.find(context_.method);
    if (it != dispatcher_.handlers_.end()) entry_ = &it->second;
    if (!Admitted(nullptr)) return;  // refused on its metadata: the message is never read
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Complete(grpc::Status(grpc::StatusCode::CANCELLED, "the request was not received"));
      return;
    }
    if (entry_ == nullptr) {
      Complete(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                            "Method " + context_.method + " is unimplemented"));
      return;
    }
    if (!Admitted(&request_)) return;
    // The responder may be called more than once (a long poll's answer racing its
    // cancellation); only the first call reaches this reactor, and the shared flag outlives
    // it, so a late call never touches a finished reactor.
    auto run = [this] {
      auto answered = answered_;
      entry_->handler(context_, request_,
                      [this, answered](const grpc::Status& status, grpc::ByteBuffer* out) {
                        if (answered->exchange(true)) return;
                        Respond(status, out);
                      });
    };
    if (dispatcher_.handler_threads_ == nullptr ||
        (dispatcher_.hop_ == Dispatcher::Hop::kUnary && !entry_->synchronous)) {
      run();
      return;
    }
    // The reactor lives until the call is finished, which only the handler's answer does.
    if (!dispatcher_.handler_threads_->Run(std::move(run))) {
      Complete(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                            "the server has too many calls waiting to be handled; retry later"));
    }
  }

  void OnCancel() override { context_.cancellation->Cancel(); }

  void OnDone() override { delete this; }

 private:
  // Asks the method's admission (Dispatcher::Admit); a refusal completes the call.
  bool Admitted(const grpc::ByteBuffer* request) {
    if (entry_ == nullptr || !entry_->admission) return true;
    grpc::Status admitted = entry_->admission(context_, request);
    if (admitted.ok()) return true;
    Complete(admitted);
    return false;
  }

  void Respond(const grpc::Status& status, grpc::ByteBuffer* out) {
    if (status.ok() && out != nullptr) {
      Observe(status);
      response_ = std::move(*out);
      StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
    } else {
      Complete(status);
    }
  }

  // Finishes with `status` only (an error, or OK without a message).
  void Complete(const grpc::Status& status) {
    Observe(status);
    Finish(status);
  }

  void Observe(const grpc::Status& status) {
    const MethodStats& stats = entry_ != nullptr ? *entry_->stats : *dispatcher_.unknown_;
    dispatcher_.Record(stats, context_, status, stopwatch_.ElapsedSeconds());
  }

  const Dispatcher& dispatcher_;
  grpc::GenericCallbackServerContext* ctx_;
  const Dispatcher::Entry* entry_ = nullptr;  // null: no such method
  metrics::Stopwatch stopwatch_;
  CallContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  std::shared_ptr<std::atomic<bool>> answered_ = std::make_shared<std::atomic<bool>>(false);
};

void CancellationSignal::OnCancel(std::function<void()> callback) {
  {
    std::lock_guard lock(mu_);
    if (!cancelled_) {
      callback_ = std::move(callback);
      return;
    }
  }
  callback();
}

bool CancellationSignal::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

void CancellationSignal::Cancel() {
  std::function<void()> callback;
  {
    std::lock_guard lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    callback = std::move(callback_);
  }
  if (callback) callback();
}

Dispatcher::Dispatcher()
    : unknown_(std::make_unique<MethodStats>()), logger_(&NullLogger()), registry_(&NoMetrics()) {
  unknown_->operation = "UnknownMethod";
}

Dispatcher::~Dispatcher() = default;

void Dispatcher::RunHandlersOnThreads(int threads, Hop hop) {
  hop_ = hop;
  handler_threads_ =
      std::make_unique<BlockingPool>(std::max(1, threads), size_t{1} << 16, "tock-handler");
}

void Dispatcher::Observe(Logger& logger, MetricsRegistry& registry) {
  logger_ = &logger;
  registry_ = &registry;
  for (auto& [method, entry] : handlers_) Resolve(method, *entry.stats);
  Resolve("", *unknown_);
}

void Dispatcher::Wrap(const std::string& method,
                      const std::function<RawHandler(RawHandler)>& wrap) {
  auto it = handlers_.find(method);
  if (it != handlers_.end()) it->second.handler = wrap(std::move(it->second.handler));
}

void Dispatcher::Admit(const std::string& method, Admission admission) {
  auto it = handlers_.find(method);
  if (it != handlers_.end()) it->second.admission = std::move(admission);
}

void Dispatcher::AddRaw(const std::string& method, RawHandler handler) {
  Entry& entry = handlers_[method];
  entry.handler = std::move(handler);
  if (entry.stats == nullptr) {
    entry.stats = std::make_unique<MethodStats>();
    Resolve(method, *entry.stats);
  }
}

void Dispatcher::Resolve(const std::string& method, MethodStats& stats) {
  if (!method.empty()) {
    // Temporal's operation tag is the method's name. Two services with a method of the same
    // name (none today) would share series: the later one is told apart by its service.
    const size_t slash = method.rfind('/');
    stats.operation = method.substr(slash + 1);
    for (const auto& [other, entry] : handlers_) {
      if (other != method && entry.stats != nullptr && entry.stats.get() != &stats &&
          entry.stats->operation == stats.operation) {
        const std::string service = method.substr(0, slash);
        stats.operation =
            absl::StrCat(service.substr(service.rfind('.') + 1), ".", stats.operation);
        break;
      }
    }
  }
  const MetricLabels labels = {{"operation", stats.operation}};
  stats.requests =
      registry_->Counter("service_requests_total", "RPC requests received, by method.", labels);
  stats.failures =
      registry_->Counter("service_errors_total",
                         "RPC requests that failed by a server-side error, by method.", labels);
  stats.latency = registry_->Histogram(
      "service_latency", "Seconds from receiving an RPC request to answering it, by method.",
      labels);
  for (auto& slot : stats.errors) slot.store(nullptr, std::memory_order_relaxed);
}

const MethodStats::ErrorCounters& Dispatcher::ErrorsFor(const MethodStats& stats, int code) const {
  auto& slot = stats.errors[code];
  if (const MethodStats::ErrorCounters* known = slot.load(std::memory_order_acquire)) {
    return *known;
  }
  std::lock_guard lock(errors_mu_);
  if (const MethodStats::ErrorCounters* known = slot.load(std::memory_order_acquire)) {
    return *known;
  }
  auto counters = std::make_unique<MethodStats::ErrorCounters>();
  counters->with_type = registry_->Counter(
      "service_error_with_type_total", "RPC requests that failed, by method and error type.",
      {{"operation", stats.operation}, {"error_type", kErrorTypes[code]}});
  if (const char* specific = SpecificErrorCounter(code)) {
    counters->specific =
        registry_->Counter(specific, "RPC requests that failed with this error type, by method.",
                           {{"operation", stats.operation}});
  }
  slot.store(counters.get(), std::memory_order_release);
  error_counters_.push_back(std::move(counters));
  return *error_counters_.back();
}

void Dispatcher::Record(const MethodStats& stats, const CallContext& context,
                        const grpc::Status& status, double seconds) const {
  stats.requests.Increment();
  stats.latency.Observe(seconds);
  if (status.ok()) return;
  const grpc::StatusCode code = status.error_code();
  const int index = static_cast<int>(code);
  if (index > 0 && index < static_cast<int>(stats.errors.size()) && registry_->enabled()) {
    const MethodStats::ErrorCounters& errors = ErrorsFor(stats, index);
    errors.with_type.Increment();
    errors.specific.Increment();
  }
  if (!ExpectedError(code)) stats.failures.Increment();
  const LogLevel level = ServerFault(code) ? LogLevel::kWarn : LogLevel::kDebug;
  if (!logger_->Enabled(level)) return;
  const char* type = index >= 0 && index < 17 ? kErrorTypes[index] : "Unknown";
  logger_->Write(level, ServerFault(code) ? "request failed" : "request refused",
                 {{"method", context.method},
                  {"code", type},
                  {"namespace", context.namespace_name},
                  {"error", status.error_message()}});
}

grpc::ServerGenericBidiReactor* Dispatcher::CreateReactor(grpc::GenericCallbackServerContext* ctx) {
  return new UnaryReactor(*this, ctx);
}

}  // namespace tock::server::rpc
