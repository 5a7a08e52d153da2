// Temporal's HTTP API (server 1.22+, port 7243 by convention) on tock-server's HTTP port:
// every `google.api.http` binding of the pinned WorkflowService and OperatorService
// (route_table.h), under /api/v1 and unprefixed, with Temporal's JSON (json_codec.h); and
// Tock's own routes under /tock/v1 (proto/tock/http/v1/routes.proto).
//
// A request becomes the RPC's request message (the body for `body: "*"`, then the path's
// variables; the query's parameters for the bindings without a body) and is called on this
// server's own gRPC service through an in-process channel, with the caller's
// `Authorization` and `Authorization-Extras` headers as metadata: the same authorizer, rate
// limits, size limits and routing to other hosts as a gRPC client gets.
//
// Answers, as Temporal's (grpc-gateway's) do:
//   200 with the response message as JSON;
//   an error as google.rpc.Status JSON {"code", "message", "details": [{"@type", ...}]}
//   with the HTTP status of its gRPC code (InvalidArgument, FailedPrecondition, OutOfRange
//   400; Unauthenticated 401; PermissionDenied 403; NotFound 404; AlreadyExists and Aborted
//   409; ResourceExhausted 429; Canceled 499; Unimplemented 501; Unavailable 503;
//   DeadlineExceeded 504; others 500); an unknown path 404 and a known path with another
//   method 405, in the same body.
//   `?pretty` indents the JSON; `?noPayloadShorthand`, or an Accept of
//   `application/json+no-payload-shorthand`, turns the payload shorthand off both ways.
// GET /api/v1/swagger.json and /api/v1/openapi.yaml serve the pinned OpenAPI files.
//
// Thread safety: Handle runs concurrently on the HTTP server's threads; each call waits for
// its RPC on the thread that runs it.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <memory>
#include <string>

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/support/byte_buffer.h>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "server-core/http/http_server.h"
#include "server-core/http_api/route_table.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::http_api {

// The HTTP status of a gRPC status code (grpc-gateway's HTTPStatusFromCode).
int HttpStatusOf(absl::StatusCode code);

class TemporalHttpApi {
 public:
  // Long polls (GetWorkflowExecutionHistory with waitNewEvent) waiting at once; one more is
  // refused (429): each holds an HTTP thread, and the port's other threads stay free for
  // short calls. The HTTP server needs more threads than this.
  static constexpr int kMaxLongPolls = 48;

  // `channel`: this server's own gRPC service, in process (null until it serves: the call
  // answers UNAVAILABLE). Calls wait at most `deadline` (long polls such as a history's
  // waitNewEvent answer before it).
  TemporalHttpApi(RouteTable routes, std::function<std::shared_ptr<grpc::Channel>()> channel,
                  absl::Duration deadline = absl::Seconds(70));

  // Adds the routes of every binding's first segment (with and without /api/v1) for each
  // verb the table uses.
  // Read-only (--ui-read-only): every call but a GET, a query and an update's poll answers
  // 405. Call before Register.
  void set_read_only(bool read_only) { read_only_ = read_only; }
  // GET /tock/v1/metrics: `exposition`'s text (this host's metrics in Prometheus' format, the
  // console's charts), to a caller who may read the cluster's info (GetClusterInfo is called
  // in process with its headers first). Unset: the route answers 404. Call before Register.
  void set_metrics(std::function<std::string()> exposition) { metrics_ = std::move(exposition); }

  void Register(http::HttpServer& server);

  http::HttpResponse Handle(const http::HttpRequest& request);

  // Cancels the calls in flight and ends the event streams, so that the HTTP server's Stop,
  // which waits for its requests, returns at once. Later calls answer UNAVAILABLE.
  void Stop();

  // GET /tock/v1/namespaces/{namespace}/workflows/{workflowId}/events[?runId=][&after=N]:
  // the run's history as server-sent events (`id: N`, `event: history`, `data:` the event's
  // JSON), then every new event as it is written, until the run closes (`event: end`), the
  // client goes, or kMaxStream passes (the client reconnects with Last-Event-ID and goes on
  // after it). It counts among the long polls.
  http::HttpResponse StreamEvents(const http::HttpRequest& request);
  static constexpr absl::Duration kMaxStream = absl::Minutes(10);

  // GET /tock/v1/namespaces/{namespace}/workflows/{workflowId}/summary[?runId=]: the run's
  // history as a timeline without payloads (history_summary.h).
  http::HttpResponse Summary(const http::HttpRequest& request);

  http::HttpResponse Metrics(const http::HttpRequest& request);

 private:
  // The error body and status of `status`.
  http::HttpResponse Error(const absl::Status& status, bool pretty) const;

  class LongPollSlot;
  // `method` called in process with `http`'s authorization headers: `in` sent, the answer's
  // wire bytes into `answer` (the routes write JSON from them: wire_json.h). Stop cancels it.
  absl::Status CallInProcess(grpc::Channel& channel, const std::string& method,
                             const google::protobuf::Message& in, std::string* answer,
                             const http::HttpRequest& http);
  // The same, the answer parsed into `out`.
  absl::Status CallInProcess(grpc::Channel& channel, const std::string& method,
                             const google::protobuf::Message& in, google::protobuf::Message* out,
                             const http::HttpRequest& http);
  bool stopping() {
    std::lock_guard lock(calls_mu_);
    return stopping_;
  }

  RouteTable routes_;
  bool read_only_ = false;
  std::function<std::string()> metrics_;
  std::atomic<int> long_polls_{0};
  std::mutex calls_mu_;
  bool stopping_ = false;                   // guarded by calls_mu_
  std::set<grpc::ClientContext*> calls_;    // in flight; guarded by calls_mu_
  std::function<std::shared_ptr<grpc::Channel>()> channel_;
  absl::Duration deadline_;
};

}  // namespace tock::server::http_api
