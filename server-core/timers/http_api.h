// The timer service's HTTP/JSON API (seed 003's api.yaml) on the server's HTTP endpoint
// (cpp-httplib, server-core/http): POST /api/v1/timers/create | get | update | delete, and
// Tock's list, mapped onto the TimerService (bodies: timer_json.h).
//
// Answers: 200 with the Timer (create, get, update) or the page (list); 204 without a body
// (delete); else the seed's Error {error, message, details, timestamp}:
//   400 INVALID_INPUT   a body that is not the request's JSON, a field out of its limits
//                       (messages name the JSON field: callbackUrl, retryPolicy.maxInterval),
//                       an unknown namespace (details.field "namespace"), an update or
//                       delete of a timer that is not PENDING
//   403 FORBIDDEN       authorization: is on (this API checks no token; Temporal's HTTP API
//                       on the same port does, through the authorizer)
//   404 TIMER_NOT_FOUND no such timer
//   500 INTERNAL_ERROR  anything else (details.code: the status code, such as UNAVAILABLE)
// Bodies above kMaxTimerRequestBytes are refused (400) before parsing.
//
// Several hosts on one database: a write refused here because another host owns the timer's
// shard is sent to this server's own gRPC port, whose call router takes it to the owner
// (as for any gRPC client), so any host's HTTP port serves any timer.
//
// Thread safety: handlers run concurrently on the HTTP server's threads.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <grpcpp/channel.h>

#include "absl/status/status.h"
#include "lib/common/clock.h"
#include "server-core/http/http_server.h"
#include "server-core/timers/timer_service.h"
#include "tock/timer/v1/service.grpc.pb.h"

namespace tock::server::timers {

class TimerHttpApi {
 public:
  // `own_channel`: a channel to this server's own gRPC port (with the internode TLS
  // credentials when there are), made at the first write that must be forwarded; null: such
  // writes answer the service's UNAVAILABLE error (500).
  TimerHttpApi(TimerService& service, Clock& clock,
               std::function<std::shared_ptr<grpc::Channel>()> own_channel = nullptr);

  // Adds the routes. The server must outlive nothing of this object: Stop it first. With
  // `authorization_on`, every call answers 403 FORBIDDEN: this API checks no token.
  void Register(http::HttpServer& server, bool authorization_on = false);

  // One request: `operation` is create, get, update, delete or list. For tests.
  http::HttpResponse Handle(const std::string& operation, const std::string& body);

 private:
  http::HttpResponse Create(const std::string& body);
  http::HttpResponse Get(const std::string& body);
  http::HttpResponse Update(const std::string& body);
  http::HttpResponse Delete(const std::string& body);
  http::HttpResponse List(const std::string& body);
  http::HttpResponse Error(const absl::Status& status, const std::string& namespace_name,
                           const std::string& timer_id);
  // A body over kMaxTimerRequestBytes (or over the HTTP server's own limit): 400.
  http::HttpResponse TooLarge();
  // The stub of this server's own gRPC port (made once); null without own_channel.
  tock::timer::v1::TimerService::Stub* Forwarder();

  TimerService& service_;
  Clock& clock_;
  std::function<std::shared_ptr<grpc::Channel>()> own_channel_;
  std::once_flag forwarder_once_;
  std::unique_ptr<tock::timer::v1::TimerService::Stub> forwarder_;
};

}  // namespace tock::server::timers
