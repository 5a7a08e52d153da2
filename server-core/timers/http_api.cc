#include "server-core/timers/http_api.h"

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "lib/common/grpc_status.h"
#include "lib/common/time_format.h"
#include "server-core/history/shard_controller.h"
#include "server-core/timers/callback_protocol.h"
#include "server-core/timers/timer_json.h"

namespace tock::server::timers {
namespace {

constexpr char kJsonType[] = "application/json";
// A forwarded write waits at most this long for the owner (the router retries within it).
constexpr absl::Duration kForwardDeadline = absl::Seconds(30);

http::HttpResponse JsonResponse(int status, const nlohmann::ordered_json& body) {
  http::HttpResponse response;
  response.status = status;
  response.content_type = kJsonType;
  response.body = body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return response;
}

std::string CodeName(absl::StatusCode code) { return absl::StatusCodeToString(code); }

// A write this host may not make (another host owns the timer's shard), sent through this
// server's own gRPC port: its call router takes it to the owner.
template <typename Request, typename Response>
absl::StatusOr<Response> Forward(
    tock::timer::v1::TimerService::Stub* stub,
    grpc::Status (tock::timer::v1::TimerService::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
    const Request& request) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kForwardDeadline));
  Response response;
  grpc::Status status = (stub->*method)(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

}  // namespace

TimerHttpApi::TimerHttpApi(TimerService& service, Clock& clock,
                           std::function<std::shared_ptr<grpc::Channel>()> own_channel)
    : service_(service), clock_(clock), own_channel_(std::move(own_channel)) {}

void TimerHttpApi::Register(http::HttpServer& server, bool authorization_on) {
  server.Route("POST", "/api/v1/timers/(create|get|update|delete|list)",
               [this, authorization_on](const http::HttpRequest& request) {
                 if (authorization_on) {
                   return Error(absl::PermissionDeniedError(
                                    "the timer HTTP API has no authorization of its own, so it "
                                    "is off while authorization: is on; use the gRPC "
                                    "TimerService, which the authorizer covers"),
                                "", "");
                 }
                 return Handle(request.path_groups.empty() ? "" : request.path_groups[0], request.body);
               });
  // A body over the HTTP server's own limit never reaches Handle: the seed's error body for
  // it too, not an empty 413.
  server.RewriteRefusals([this](int status, const std::string& path) -> std::optional<http::HttpResponse> {
    if (status != 413 || path.rfind("/api/v1/timers/", 0) != 0) return std::nullopt;
    return TooLarge();
  });
}

http::HttpResponse TimerHttpApi::Handle(const std::string& operation, const std::string& body) {
  if (body.size() > kMaxTimerRequestBytes) return TooLarge();
  if (operation == "create") return Create(body);
  if (operation == "get") return Get(body);
  if (operation == "update") return Update(body);
  if (operation == "delete") return Delete(body);
  if (operation == "list") return List(body);
  return Error(absl::NotFoundError("no such operation: create, get, update, delete or list"), "", "");
}

http::HttpResponse TimerHttpApi::TooLarge() {
  return Error(absl::InvalidArgumentError(
                   absl::StrCat("the request body is over ", kMaxTimerRequestBytes, " bytes")),
               "", "");
}

tock::timer::v1::TimerService::Stub* TimerHttpApi::Forwarder() {
  if (!own_channel_) return nullptr;
  std::call_once(forwarder_once_, [this] {
    forwarder_ = tock::timer::v1::TimerService::NewStub(own_channel_());
  });
  return forwarder_.get();
}

http::HttpResponse TimerHttpApi::Create(const std::string& body) {
  absl::StatusOr<tv1::CreateTimerRequest> req = CreateTimerFromJson(body);
  if (!req.ok()) return Error(req.status(), "", "");
  absl::StatusOr<tv1::CreateTimerResponse> got = service_.Create(*req, FieldNaming::kJson);
  if (!got.ok() && history::IsNotOwnedHere(got.status().code(), got.status().message()) && Forwarder()) {
    got = Forward(Forwarder(), &tv1::TimerService::Stub::CreateTimer, *req);
  }
  if (!got.ok()) return Error(got.status(), req->namespace_(), req->id());
  return JsonResponse(200, TimerToJson(got->timer()));
}

http::HttpResponse TimerHttpApi::Get(const std::string& body) {
  absl::StatusOr<tv1::GetTimerRequest> req = GetTimerFromJson(body);
  if (!req.ok()) return Error(req.status(), "", "");
  absl::StatusOr<tv1::GetTimerResponse> got = service_.Get(*req, FieldNaming::kJson);
  if (!got.ok()) return Error(got.status(), req->namespace_(), req->id());
  return JsonResponse(200, TimerToJson(got->timer()));
}

http::HttpResponse TimerHttpApi::Update(const std::string& body) {
  absl::StatusOr<tv1::UpdateTimerRequest> req = UpdateTimerFromJson(body);
  if (!req.ok()) return Error(req.status(), "", "");
  absl::StatusOr<tv1::UpdateTimerResponse> got = service_.Update(*req, FieldNaming::kJson);
  if (!got.ok() && history::IsNotOwnedHere(got.status().code(), got.status().message()) && Forwarder()) {
    got = Forward(Forwarder(), &tv1::TimerService::Stub::UpdateTimer, *req);
  }
  if (!got.ok()) return Error(got.status(), req->namespace_(), req->id());
  return JsonResponse(200, TimerToJson(got->timer()));
}

http::HttpResponse TimerHttpApi::Delete(const std::string& body) {
  absl::StatusOr<tv1::DeleteTimerRequest> req = DeleteTimerFromJson(body);
  if (!req.ok()) return Error(req.status(), "", "");
  absl::StatusOr<tv1::DeleteTimerResponse> got = service_.Delete(*req, FieldNaming::kJson);
  if (!got.ok() && history::IsNotOwnedHere(got.status().code(), got.status().message()) && Forwarder()) {
    got = Forward(Forwarder(), &tv1::TimerService::Stub::DeleteTimer, *req);
  }
  if (!got.ok()) return Error(got.status(), req->namespace_(), req->id());
  http::HttpResponse response;
  response.status = 204;
  response.content_type = kJsonType;
  return response;
}

http::HttpResponse TimerHttpApi::List(const std::string& body) {
  absl::StatusOr<tv1::ListTimersRequest> req = ListTimersFromJson(body);
  if (!req.ok()) return Error(req.status(), "", "");
  absl::StatusOr<tv1::ListTimersResponse> got = service_.List(*req, FieldNaming::kJson);
  if (!got.ok()) return Error(got.status(), req->namespace_(), "");
  return JsonResponse(200, TimerListToJson(*got));
}

http::HttpResponse TimerHttpApi::Error(const absl::Status& status, const std::string& namespace_name,
                                       const std::string& timer_id) {
  int http_status = 500;
  std::string code = "INTERNAL_ERROR";
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:  // only PENDING timers change
      http_status = 400;
      code = "INVALID_INPUT";
      break;
    case absl::StatusCode::kPermissionDenied:
      http_status = 403;
      code = "FORBIDDEN";
      break;
    case absl::StatusCode::kNotFound:
      // The timer, or the namespace it names: only the former is the seed's 404.
      if (!timer_id.empty() &&
          status.message() == TimerService::NotFound(namespace_name, timer_id).message()) {
        http_status = 404;
        code = "TIMER_NOT_FOUND";
      } else {
        http_status = 400;
        code = "INVALID_INPUT";
        details["field"] = "namespace";
      }
      break;
    default:
      break;
  }
  details["code"] = CodeName(status.code());
  nlohmann::ordered_json body;
  body["error"] = code;
  // The service's messages are bounded and never echo unbounded input; bounded once more.
  body["message"] = BoundedErrorText(std::string(status.message()));
  body["details"] = details;
  body["timestamp"] = FormatTimestamp(clock_.Now());
  return JsonResponse(http_status, body);
}

}  // namespace tock::server::timers
