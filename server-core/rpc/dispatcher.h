// One gRPC callback service for every method tock-server answers.
//
// Instead of registering the generated services (whose every unimplemented method would
// answer UNIMPLEMENTED with an empty message, which the Rust SDK core treats as fatal for
// some calls), tock-server registers a single CallbackGenericService and dispatches on the
// full method name. This gives one place for the wire edge: request parsing, error
// conversion (ToGrpcStatus, with Temporal errordetails), and the exact UNIMPLEMENTED message
// `Method <service>/<method> is unimplemented` for everything not built yet.
//
// It is also where every call is observed: requests, errors by type and latency per method
// (Temporal's service_requests, service_errors, service_error_with_type,
// service_errors_<type> and service_latency, label `operation` = the method's name), and
// each refused call is logged at debug (method, code, namespace, message; never the request).
// The metric handles of a method are resolved when it is registered; a call costs a few
// atomic additions and no lock shared with other methods.
//
// Handlers are either synchronous (return a StatusOr<Response>) or asynchronous (get a
// Responder to call exactly once, from any thread, e.g. when a long poll is matched or a
// commit is answered; the request they were given stays valid until then). Both
// run on gRPC's callback threads, so no thread is pinned while a long poll waits.
//
// Thread safety: register every method before the server starts; dispatch is then
// read-only and safe from any thread.
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/byte_buffer.h>

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/common/blocking_pool.h"
#include "lib/common/grpc_status.h"
#include "lib/common/log.h"
#include "lib/common/metrics.h"
#include "lib/common/wire_bytes.h"

namespace tock::server::rpc {

// Lets an asynchronous handler learn that its caller went away (cancelled, deadline
// passed, connection lost), so that a long poll stops waiting and hands its task to nobody.
// Thread-safe.
class CancellationSignal {
 public:
  // Runs `callback` once when the call is cancelled, or at once if it already is.
  // Replaces an earlier callback.
  void OnCancel(std::function<void()> callback);
  bool cancelled() const;
  // Called by the dispatcher.
  void Cancel();

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  std::function<void()> callback_;
};

// What a handler may read about its call besides the request.
struct CallContext {
  // Metadata, deadline and peer. Valid until the call's response is sent.
  grpc::GenericCallbackServerContext* grpc = nullptr;
  // "temporal.api.workflowservice.v1.WorkflowService/DescribeNamespace".
  std::string method;
  // The caller's deadline (absl::InfiniteFuture() when it set none).
  absl::Time deadline = absl::InfiniteFuture();
  std::shared_ptr<CancellationSignal> cancellation;
  // Set by the router on a poll this host serves from its own partition of a task queue
  // that another host owns (routing/call_router.h): the poll waits here until then at most,
  // for tasks this host's shards make, and never reads the queue from the database.
  std::optional<absl::Time> partition_until;
  // Set by the router on a poll another host forwarded to this queue's owner: whether a
  // task of run (namespace id, workflow id) is better given to it (its run lives on that
  // host, so the worker's answers about it need no call between hosts). Null: any.
  std::function<bool(const std::string&, const std::string&)> prefer_run;
  // The request's namespace, set by the dispatcher once the request is parsed (while logging
  // is on): for the log line of a refusal, never read by handlers.
  mutable std::string namespace_name;
};

// Completes one call. Safe from any thread; calls after the first are ignored.
using RawResponder = std::function<void(const grpc::Status&, grpc::ByteBuffer*)>;
using RawHandler = std::function<void(const CallContext&, const grpc::ByteBuffer&, RawResponder)>;

template <typename Response>
using Responder = std::function<void(absl::StatusOr<Response>)>;

// The metric handles of one method (or of the calls to unknown methods).
struct MethodStats {
  std::string operation;  // "StartWorkflowExecution"
  metrics::Counter requests;
  metrics::Counter failures;  // unexpected errors only (Temporal's service_errors)
  metrics::Histogram latency;
  // By gRPC code, created at the first error of that code (most never happen, and a series
  // per method and code would be thousands of zeros in every scrape).
  struct ErrorCounters {
    metrics::Counter with_type;  // service_error_with_type{error_type}
    metrics::Counter specific;   // service_errors_invalid_argument, ... (when Temporal has one)
  };
  mutable std::array<std::atomic<const ErrorCounters*>, 17> errors{};
};

class Dispatcher : public grpc::CallbackGenericService {
 public:
  Dispatcher();
  ~Dispatcher() override;

  // Where calls are counted and refusals logged (by default nowhere). Call before the
  // server starts; methods registered before and after are both observed. Both must
  // outlive the dispatcher.
  void Observe(Logger& logger, MetricsRegistry& registry);

  // Which calls run on the dispatcher's own threads (RunHandlersOnThreads).
  enum class Hop {
    kAll,    // every call: a remote database, where reads wait on round trips too
    kUnary,  // the synchronous handlers (AddUnary) only: an embedded database that
             // fsyncs each commit, where only writes wait and long polls never should hop
  };
  // Runs handlers on `threads` threads of the dispatcher's own instead of gRPC's callback
  // threads. gRPC has about as many of those as cores (two on a small machine), and a
  // handler that waits on the database (a commit's round trips to PostgreSQL, or SQLite's
  // fsync) holds its thread: no more calls than that could then be in the database at once,
  // and concurrent commits could rarely share a transaction (persistence/group_commit.h).
  // Measured on SQLite with `synchronous: full` (docs/performance.md), commits per
  // transaction went from 1.09 to about 3.8 and workflows/s up by half. Handlers that
  // answer later (long polls) return at once and hold no thread either way. Not worth it
  // when handlers barely wait (SQLite at `normal`): the hand-over costs thread switches.
  // Call before the server starts.
  void RunHandlersOnThreads(int threads, Hop hop = Hop::kAll);

  // `method` is "package.Service/Method", without the leading slash.
  void AddRaw(const std::string& method, RawHandler handler);

  template <typename Request, typename Response>
  void AddUnary(const std::string& method,
                std::function<absl::StatusOr<Response>(const Request&, const CallContext&)> fn) {
    AddAsync<Request, Response>(
        method,
        [fn = std::move(fn)](const Request& request, const CallContext& context,
                             Responder<Response> respond) { respond(fn(request, context)); });
    handlers_[method].synchronous = true;
  }

  template <typename Request, typename Response>
  void AddAsync(const std::string& method,
                std::function<void(const Request&, const CallContext&, Responder<Response>)> fn) {
    AddRaw(
        method, [this, fn = std::move(fn)](const CallContext& context,
                                           const grpc::ByteBuffer& payload, RawResponder respond) {
          // Owned by the responder, so the request stays valid until the call is answered
          // (handlers that answer later may keep references into it).
          auto request = std::make_shared<Request>();
          if (!Parse(payload, respond, request.get())) return;
          NoteNamespace(*request, context);
          const Request& ref = *request;
          fn(ref, context, [respond = std::move(respond),
                            request = std::move(request)](absl::StatusOr<Response> result) {
            if (!result.ok()) {
              respond(ToGrpcStatus(result.status()), nullptr);
              return;
            }
            grpc::ByteBuffer out;
            bool own = false;
            grpc::Status serialized =
                grpc::SerializationTraits<Response>::Serialize(*result, &out, &own);
            respond(serialized, serialized.ok() ? &out : nullptr);
          });
        });
  }

  // Parses a request; a payload that is not one is answered INVALID_ARGUMENT (false).
  template <typename Request>
  static bool Parse(const grpc::ByteBuffer& payload, const RawResponder& respond, Request* request) {
    grpc::ByteBuffer copy(payload);
    if (grpc::SerializationTraits<Request>::Deserialize(&copy, request).ok()) return true;
    respond(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                         "the request could not be parsed as " + Request::descriptor()->full_name()),
            nullptr);
    return false;
  }

  // Like AddAsync, but the handler answers with the response already serialized (for
  // responses assembled from stored bytes without parsing them, like history pages).
  template <typename Request>
  void AddAsyncSerialized(const std::string& method,
                          std::function<void(const Request&, const CallContext&,
                                             std::function<void(absl::StatusOr<WireBytes>)>)>
                              fn) {
    AddRaw(
        method, [this, fn = std::move(fn)](const CallContext& context,
                                           const grpc::ByteBuffer& payload, RawResponder respond) {
          Request request;
          if (!Parse(payload, respond, &request)) return;
          NoteNamespace(request, context);
          fn(request, context, [respond = std::move(respond)](absl::StatusOr<WireBytes> bytes) {
            if (!bytes.ok()) {
              respond(ToGrpcStatus(bytes.status()), nullptr);
              return;
            }
            // The slice takes the buffer over (no copy of a possibly large page).
            auto* owned = new std::string(std::move(bytes->buffer));
            grpc::Slice slice(
                owned->data() + bytes->begin, owned->size() - bytes->begin,
                [](void* p) { delete static_cast<std::string*>(p); }, owned);
            grpc::ByteBuffer out(&slice, 1);
            respond(grpc::Status::OK, &out);
          });
        });
  }

  bool Has(const std::string& method) const { return handlers_.contains(method); }
  // Every registered method ("package.Service/Method"), for wrappers that go around all of
  // them (rate limits, authorization: server-core/security).
  std::vector<std::string> Methods() const {
    std::vector<std::string> out;
    out.reserve(handlers_.size());
    for (const auto& [method, entry] : handlers_) out.push_back(method);
    return out;
  }
  // Replaces the handler of a registered method with `wrap(handler)` (routing between
  // hosts, server-core/routing). Call before the server starts.
  void Wrap(const std::string& method, const std::function<RawHandler(RawHandler)>& wrap);

  // Whether a call may go on (authorization, server-core/security), asked before the handler
  // and its wrappers, on gRPC's thread: first with `request` null as soon as the call's
  // metadata has arrived, before its message is read (a refusal then never reads it), then
  // with the message once it has arrived, before it is queued for a handler thread or
  // parsed. A status other than OK refuses the call with it.
  using Admission =
      std::function<grpc::Status(const CallContext&, const grpc::ByteBuffer* request)>;
  // Sets the admission of a registered method. Call before the server starts.
  void Admit(const std::string& method, Admission admission);

  // grpc::CallbackGenericService
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override;

 private:
  friend class UnaryReactor;
  struct Entry {
    RawHandler handler;
    Admission admission;  // null: every call is admitted
    std::unique_ptr<MethodStats> stats;
    bool synchronous = false;  // added by AddUnary: answers only when done (see Hop)
  };

  // Keeps the request's namespace for the log line of a refusal (a short copy, and none
  // while logging is off).
  template <typename Request>
  void NoteNamespace(const Request& request, const CallContext& context) const {
    if constexpr (requires(const Request& r) { r.namespace_(); }) {
      if (logger_->Enabled(LogLevel::kWarn)) context.namespace_name = request.namespace_();
    }
  }

  void Resolve(const std::string& method, MethodStats& stats);
  // Counts and logs one finished call.
  void Record(const MethodStats& stats, const CallContext& context, const grpc::Status& status,
              double seconds) const;
  const MethodStats::ErrorCounters& ErrorsFor(const MethodStats& stats, int code) const;

  std::unordered_map<std::string, Entry> handlers_;
  std::unique_ptr<MethodStats> unknown_;  // calls to methods not registered
  Logger* logger_;
  MetricsRegistry* registry_;
  // Guards the creation of error counters (the first error of a code for a method).
  mutable std::mutex errors_mu_;
  mutable std::vector<std::unique_ptr<MethodStats::ErrorCounters>> error_counters_;
  // See RunHandlersOnThreads; null: handlers run on gRPC's callback threads. Last: stopped
  // (its queued calls run) before the rest goes.
  std::unique_ptr<BlockingPool> handler_threads_;
  Hop hop_ = Hop::kAll;
};

}  // namespace tock::server::rpc
