// One gRPC callback service for every method tock-server answers.
//
// Instead of registering the generated services (whose every unimplemented method would
// answer UNIMPLEMENTED with an empty message, which the Rust SDK core treats as fatal for
// some calls), tock-server registers a single CallbackGenericService and dispatches on the
// full method name. This gives one place for the wire edge: request parsing, error
// conversion (ToGrpcStatus, with Temporal errordetails), and the exact UNIMPLEMENTED message
// `Method <service>/<method> is unimplemented` for everything not built yet.
//
// Handlers are either synchronous (return a StatusOr<Response>) or asynchronous (get a
// Responder to call exactly once, from any thread, e.g. when a long poll is matched). Both
// run on gRPC's callback threads, so no thread is pinned while a long poll waits.
//
// Thread safety: register every method before the server starts; dispatch is then
// read-only and safe from any thread.
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/byte_buffer.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/common/grpc_status.h"
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
};

// Completes one call. Safe from any thread; calls after the first are ignored.
using RawResponder = std::function<void(const grpc::Status&, grpc::ByteBuffer*)>;
using RawHandler =
    std::function<void(const CallContext&, const grpc::ByteBuffer&, RawResponder)>;

template <typename Response>
using Responder = std::function<void(absl::StatusOr<Response>)>;

class Dispatcher : public grpc::CallbackGenericService {
 public:
  // `method` is "package.Service/Method", without the leading slash.
  void AddRaw(const std::string& method, RawHandler handler);

  template <typename Request, typename Response>
  void AddUnary(const std::string& method,
                std::function<absl::StatusOr<Response>(const Request&, const CallContext&)> fn) {
    AddAsync<Request, Response>(
        method, [fn = std::move(fn)](const Request& request, const CallContext& context,
                                     Responder<Response> respond) {
          respond(fn(request, context));
        });
  }

  template <typename Request, typename Response>
  void AddAsync(const std::string& method,
                std::function<void(const Request&, const CallContext&, Responder<Response>)> fn) {
    AddRaw(method, [fn = std::move(fn)](const CallContext& context,
                                        const grpc::ByteBuffer& payload, RawResponder respond) {
      Request request;
      grpc::ByteBuffer copy(payload);
      grpc::Status parsed = grpc::SerializationTraits<Request>::Deserialize(&copy, &request);
      if (!parsed.ok()) {
        respond(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                             "the request could not be parsed as " +
                                 Request::descriptor()->full_name()),
                nullptr);
        return;
      }
      fn(request, context, [respond = std::move(respond)](absl::StatusOr<Response> result) {
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

  // Like AddAsync, but the handler answers with the response already serialized (for
  // responses assembled from stored bytes without parsing them, like history pages).
  template <typename Request>
  void AddAsyncSerialized(const std::string& method,
                          std::function<void(const Request&, const CallContext&,
                                             std::function<void(absl::StatusOr<WireBytes>)>)>
                              fn) {
    AddRaw(method, [fn = std::move(fn)](const CallContext& context,
                                        const grpc::ByteBuffer& payload, RawResponder respond) {
      Request request;
      grpc::ByteBuffer copy(payload);
      if (!grpc::SerializationTraits<Request>::Deserialize(&copy, &request).ok()) {
        respond(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                             "the request could not be parsed as " +
                                 Request::descriptor()->full_name()),
                nullptr);
        return;
      }
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

  // grpc::CallbackGenericService
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override;

 private:
  friend class UnaryReactor;
  std::unordered_map<std::string, RawHandler> handlers_;
};

}  // namespace tock::server::rpc
