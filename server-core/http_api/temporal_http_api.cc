#include "server-core/http_api/temporal_http_api.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <regex>
#include <set>

#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"
#include "lib/common/grpc_status.h"
#include "lib/common/message_size.h"
#include "lib/common/metrics.h"
#include "server-core/http_api/history_summary.h"
#include "server-core/http_api/json_codec.h"
#include "server-core/http_api/openapi_files.h"
#include "server-core/http_api/wire_json.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"
#include "tock/rpc/v1/status.pb.h"

namespace tock::server::http_api {
namespace {

namespace wf = temporal::api::workflowservice::v1;

constexpr absl::string_view kApiPrefix = "/api/v1";
constexpr absl::string_view kJson = "application/json";
constexpr absl::string_view kNoShorthandMediaType = "application/json+no-payload-shorthand";
const std::string kHistoryMethod =
    "/temporal.api.workflowservice.v1.WorkflowService/GetWorkflowExecutionHistory";
const std::string kClusterInfoMethod =
    "/temporal.api.workflowservice.v1.WorkflowService/GetClusterInfo";

bool HasQueryFlag(const http::HttpRequest& request, const std::string& name) {
  auto it = request.query.find(name);
  return it != request.query.end() && it->second != "false" && it->second != "0";
}

std::string Header(const http::HttpRequest& request, const std::string& name) {
  auto it = request.headers.find(name);
  return it == request.headers.end() ? std::string() : it->second;
}

// The request target's path, still percent-encoded.
std::string RawPath(const http::HttpRequest& request) {
  const std::string& target = request.target.empty() ? request.path : request.target;
  return target.substr(0, target.find('?'));
}

}  // namespace

// Waited for on this thread: the HTTP server's worker holds the call.
absl::Status TemporalHttpApi::CallInProcess(grpc::Channel& channel, const std::string& method,
                                            const google::protobuf::Message& in,
                                            std::string* answer,
                                            const http::HttpRequest& http) {
  std::string serialized;
  if (!in.SerializeToString(&serialized)) {
    return absl::InvalidArgumentError("the request could not be serialized");
  }
  grpc::Slice slice(serialized);
  grpc::ByteBuffer request(&slice, 1), response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  {
    std::lock_guard lock(calls_mu_);
    if (stopping_) return absl::UnavailableError("the server is stopping");
    calls_.insert(&context);
  }
  for (const char* name : {"authorization", "authorization-extras"}) {
    const std::string value = Header(http, name);
    if (!value.empty()) context.AddMetadata(name, value);
  }
  grpc::GenericStub stub(std::shared_ptr<grpc::ChannelInterface>(&channel, [](auto*) {}));
  grpc::Status status;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   std::lock_guard lock(mu);
                   status = std::move(s);
                   done = true;
                   cv.notify_one();
                 });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done; });
  }
  {
    std::lock_guard lock(calls_mu_);
    calls_.erase(&context);
  }
  if (!status.ok()) return FromGrpcStatus(status);
  std::vector<grpc::Slice> slices;
  answer->clear();
  if (!response.Dump(&slices).ok()) return absl::InternalError("the server's answer could not be read");
  for (const grpc::Slice& s : slices) answer->append(reinterpret_cast<const char*>(s.begin()), s.size());
  return absl::OkStatus();
}

absl::Status TemporalHttpApi::CallInProcess(grpc::Channel& channel, const std::string& method,
                                            const google::protobuf::Message& in,
                                            google::protobuf::Message* out,
                                            const http::HttpRequest& http) {
  std::string bytes;
  if (absl::Status s = CallInProcess(channel, method, in, &bytes, http); !s.ok()) return s;
  if (!out->ParseFromString(bytes)) return absl::InternalError("the server's answer could not be read");
  return absl::OkStatus();
}

void TemporalHttpApi::Stop() {
  std::lock_guard lock(calls_mu_);
  stopping_ = true;
  for (grpc::ClientContext* call : calls_) call->TryCancel();
}

// A place among the long polls, given back when it goes.
class TemporalHttpApi::LongPollSlot {
 public:
  explicit LongPollSlot(std::atomic<int>& count) : count_(count) {
    held_ = count_.fetch_add(1) < kMaxLongPolls;
  }
  ~LongPollSlot() { count_.fetch_sub(1); }
  bool held() const { return held_; }

 private:
  std::atomic<int>& count_;
  bool held_ = false;
};

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kCancelled: return 499;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted: return 409;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kUnimplemented: return 501;
    case absl::StatusCode::kUnavailable: return 503;
    default: return 500;
  }
}

TemporalHttpApi::TemporalHttpApi(RouteTable routes,
                                 std::function<std::shared_ptr<grpc::Channel>()> channel,
                                 absl::Duration deadline)
    : routes_(std::move(routes)), channel_(std::move(channel)), deadline_(deadline) {}

void TemporalHttpApi::Register(http::HttpServer& server) {
  // The first segments of the unprefixed templates (namespaces, cluster-info, ...): the
  // routes claim those paths, with or without /api/v1, and leave the rest of the port (the
  // timer API under /api/v1/timers) to its own routes.
  std::set<std::string> verbs, firsts;
  for (const Route& route : routes_.routes()) {
    verbs.insert(route.verb);
    std::string path = route.path;
    if (absl::StartsWith(path, kApiPrefix)) path = path.substr(kApiPrefix.size());
    firsts.insert(path.substr(1, path.find('/', 1) - 1));  // (npos - 1: to the end)
  }
  const std::string pattern =
      absl::StrCat("(?:/api/v1)?/(?:", absl::StrJoin(firsts, "|"), ")(?:/.*)?");
  // The event stream and the OpenAPI files first: cpp-httplib takes a path's first matching
  // route.
  server.Route("GET", "/tock/v1/namespaces/[^/]+/workflows/[^/]+/events",
               [this](const http::HttpRequest& request) { return StreamEvents(request); });
  server.Route("GET", "/tock/v1/namespaces/[^/]+/workflows/[^/]+/summary",
               [this](const http::HttpRequest& request) { return Summary(request); });
  server.Route("GET", "/tock/v1/metrics",
               [this](const http::HttpRequest& request) { return Metrics(request); });
  server.Route("GET", "/api/v1/swagger\\.json", [](const http::HttpRequest&) {
    return http::HttpResponse{200, std::string(kJson), std::string(OpenApiV2Json())};
  });
  server.Route("GET", "/api/v1/openapi\\.yaml", [](const http::HttpRequest&) {
    return http::HttpResponse{200, "application/yaml", std::string(OpenApiV3Yaml())};
  });
  for (const std::string& verb : verbs) {
    server.Route(verb, pattern, [this](const http::HttpRequest& request) { return Handle(request); });
  }
  // A body over the port's limit is refused before any route runs, and a path under /api/v1
  // that no route claims (nor the timer API's) is unknown: both in Temporal's error body.
  server.RewriteRefusals([this, paths = std::regex(pattern)](
                             int status, const std::string& path) -> std::optional<http::HttpResponse> {
    if (status == 404 && absl::StartsWith(path, "/api/v1/") &&
        !absl::StartsWith(path, "/api/v1/timers/")) {
      return Error(absl::NotFoundError("no such path in Temporal's HTTP API"), false);
    }
    if (status != 413 || !std::regex_match(path, paths)) return std::nullopt;
    http::HttpResponse response = Error(
        absl::ResourceExhaustedError(absl::StrCat("the request body is over ", kMaxRequestBytes,
                                                  " bytes, the limit of Temporal's HTTP API")),
        false);
    response.status = 413;
    return response;
  });
}

http::HttpResponse TemporalHttpApi::Error(const absl::Status& status, bool pretty) const {
  tock::rpc::v1::Status body;
  body.set_code(static_cast<int>(status.code()));
  body.set_message(std::string(status.message()));
  status.ForEachPayload([&](absl::string_view type_url, const absl::Cord& payload) {
    auto* any = body.add_details();
    any->set_type_url(std::string(type_url));
    any->set_value(std::string(payload));
  });
  http::HttpResponse response;
  response.status = HttpStatusOf(status.code());
  response.content_type = std::string(kJson);
  absl::StatusOr<std::string> json = ToJson(body, JsonOptions{false, pretty});
  if (!json.ok()) {  // a detail of a type not linked in: the status without its details
    body.clear_details();
    json = ToJson(body, JsonOptions{false, pretty});
  }
  response.body = json.ok() ? *json : "{\"code\":13,\"message\":\"internal error\"}";
  return response;
}

namespace {

// The history request of /tock/v1/namespaces/{namespace}/workflows/{workflowId}/<what>
// (`?runId=`), or the error.
absl::StatusOr<wf::GetWorkflowExecutionHistoryRequest> RunHistoryRequest(
    const http::HttpRequest& request) {
  static const std::regex kPath("/tock/v1/namespaces/([^/]+)/workflows/([^/]+)/[a-z]+");
  std::smatch parts;
  const std::string raw_path = RawPath(request);
  std::optional<std::string> ns, workflow_id;
  if (std::regex_match(raw_path, parts, kPath)) {
    ns = PercentDecode(parts[1], false);
    workflow_id = PercentDecode(parts[2], false);
  }
  if (!ns.has_value() || !workflow_id.has_value()) {
    return absl::InvalidArgumentError("malformed percent-escape in the path");
  }
  wf::GetWorkflowExecutionHistoryRequest history;
  history.set_namespace_(*ns);
  history.mutable_execution()->set_workflow_id(*workflow_id);
  if (auto run = request.query.find("runId"); run != request.query.end()) {
    history.mutable_execution()->set_run_id(run->second);
  }
  return history;
}

}  // namespace

http::HttpResponse TemporalHttpApi::Summary(const http::HttpRequest& request) {
  absl::StatusOr<wf::GetWorkflowExecutionHistoryRequest> page_request = RunHistoryRequest(request);
  if (!page_request.ok()) return Error(page_request.status(), false);
  std::shared_ptr<grpc::Channel> channel = channel_();
  if (channel == nullptr) return Error(absl::UnavailableError("the server is starting; call again"), false);
  admin::HistorySpans spans;
  while (true) {
    wf::GetWorkflowExecutionHistoryResponse page;
    if (absl::Status s = CallInProcess(*channel, kHistoryMethod, *page_request, &page, request); !s.ok()) {
      return Error(s, false);
    }
    for (const auto& event : page.history().events()) spans.Add(event);
    if (page.next_page_token().empty()) break;
    page_request->set_next_page_token(page.next_page_token());
  }
  http::HttpResponse response;
  response.content_type = std::string(kJson);
  response.body = SummaryJson(spans).dump(HasQueryFlag(request, "pretty") ? 2 : -1, ' ',
                                                false, nlohmann::json::error_handler_t::replace);
  return response;
}

http::HttpResponse TemporalHttpApi::Metrics(const http::HttpRequest& request) {
  if (!metrics_) return Error(absl::NotFoundError("this server keeps no metrics"), false);
  std::shared_ptr<grpc::Channel> channel = channel_();
  if (channel == nullptr) return Error(absl::UnavailableError("the server is starting; call again"), false);
  std::string answer;  // unused: the call only asks whether the caller may read the cluster
  if (absl::Status s = CallInProcess(*channel, kClusterInfoMethod, wf::GetClusterInfoRequest(),
                                     &answer, request);
      !s.ok()) {
    return Error(s, false);
  }
  return http::HttpResponse{200, std::string(kPrometheusTextContentType), metrics_()};
}

http::HttpResponse TemporalHttpApi::StreamEvents(const http::HttpRequest& request) {
  absl::StatusOr<wf::GetWorkflowExecutionHistoryRequest> first = RunHistoryRequest(request);
  if (!first.ok()) return Error(first.status(), false);
  auto slot = std::make_shared<LongPollSlot>(long_polls_);
  if (!slot->held()) {
    return Error(absl::ResourceExhaustedError(absl::StrCat(
                     "more than ", kMaxLongPolls,
                     " long polls and event streams wait on this HTTP port; call again later")),
                 false);
  }
  std::shared_ptr<grpc::Channel> channel = channel_();
  if (channel == nullptr) return Error(absl::UnavailableError("the server is starting; call again"), false);
  first->set_wait_new_event(true);
  // Resumed after the last event the client saw (its Last-Event-ID, or ?after=N).
  int64_t after = 0;
  std::string resume = Header(request, "last-event-id");
  if (auto it = request.query.find("after"); it != request.query.end()) resume = it->second;
  if (!resume.empty() && (!absl::SimpleAtoi(resume, &after) || after < 0)) {
    return Error(absl::InvalidArgumentError("Last-Event-ID and after must be an event id (a "
                                            "non-negative integer)"),
                 false);
  }
  const bool shorthand = !HasQueryFlag(request, "noPayloadShorthand");
  // The first page answers at once (or with the error: no such workflow), before the stream
  // starts, so that a bad request gets its status.
  wf::GetWorkflowExecutionHistoryResponse page;
  if (absl::Status s = CallInProcess(*channel, kHistoryMethod, *first, &page, request); !s.ok()) return Error(s, false);

  http::HttpResponse response;
  response.content_type = "text/event-stream";
  response.stream = [this, slot, channel, first = *first, page, after, shorthand,
                     authorization = Header(request, "authorization"),
                     extras = Header(request, "authorization-extras")](const http::HttpResponse::Write& write) mutable {
    http::HttpRequest caller;  // the headers passed on with each long poll
    if (!authorization.empty()) caller.headers.emplace("authorization", authorization);
    if (!extras.empty()) caller.headers.emplace("authorization-extras", extras);
    const absl::Time until = absl::Now() + kMaxStream;
    while (true) {
      for (const auto& event : page.history().events()) {
        if (event.event_id() <= after) continue;
        absl::StatusOr<std::string> json = ToJson(event, JsonOptions{shorthand, false});
        if (!json.ok()) return;
        after = event.event_id();
        if (!write(absl::StrCat("id: ", after, "\nevent: history\ndata: ", *json, "\n\n"))) return;
      }
      if (page.next_page_token().empty()) {  // closed, and every event sent
        write("event: end\ndata: {}\n\n");
        return;
      }
      // A comment after each wait tells a gone client from a quiet workflow.
      if (absl::Now() >= until || stopping() || !write(": waiting\n\n")) return;
      wf::GetWorkflowExecutionHistoryRequest next = first;
      next.set_next_page_token(page.next_page_token());
      page.Clear();
      if (!CallInProcess(*channel, kHistoryMethod, next, &page, caller).ok()) {
        write("event: error\ndata: {}\n\n");
        return;
      }
    }
  };
  return response;
}

http::HttpResponse TemporalHttpApi::Handle(const http::HttpRequest& request) {
  const bool pretty = HasQueryFlag(request, "pretty");
  const bool shorthand = !HasQueryFlag(request, "noPayloadShorthand") &&
                         !absl::StrContains(Header(request, "accept"), kNoShorthandMediaType);
  const std::string raw_path = RawPath(request);
  bool path_known = false;
  std::optional<Match> match = routes_.Find(request.method, raw_path, &path_known);
  if (!match.has_value()) {
    http::HttpResponse response = Error(
        path_known ? absl::UnimplementedError(absl::StrCat("method ", request.method,
                                                           " is not allowed on this path"))
                   : absl::NotFoundError("no such path in Temporal's HTTP API"),
        pretty);
    response.status = path_known ? 405 : 404;
    return response;
  }
  const Route& route = *match->route;
  const google::protobuf::MethodDescriptor* method = route.method;
  if (read_only_ && request.method != "GET" && method->name() != "QueryWorkflow" &&
      method->name() != "PollWorkflowExecutionUpdate") {
    http::HttpResponse response = Error(
        absl::PermissionDeniedError(absl::StrCat(
            "this server's HTTP API is read-only (--ui-read-only): ", method->name(),
            " is not allowed; reads and queries are")),
        pretty);
    response.status = 405;
    return response;
  }
  auto& factory = *google::protobuf::MessageFactory::generated_factory();
  std::unique_ptr<google::protobuf::Message> in(factory.GetPrototype(method->input_type())->New());

  // The body, then the path's variables (which win), then the query for a binding without
  // a body.
  if (!route.body.empty() && !request.body.empty()) {
    google::protobuf::Message* target = in.get();
    if (route.body != "*") {
      const auto* field = in->GetDescriptor()->FindFieldByName(route.body);
      if (field == nullptr || field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
        return Error(absl::InternalError("the binding's body field is not a message"), pretty);
      }
      target = in->GetReflection()->MutableMessage(in.get(), field);
    }
    if (absl::Status s = FromJson(request.body, target, shorthand); !s.ok()) return Error(s, pretty);
  }
  for (const auto& [path, value] : match->variables) {
    if (absl::Status s = SetFromText(in.get(), path, {value}); !s.ok()) {
      return Error(s.code() == absl::StatusCode::kNotFound ? absl::InternalError(s.message()) : s,
                   pretty);
    }
  }
  if (route.body != "*") {
    std::map<std::string, std::vector<std::string>> params;
    for (const auto& [name, value] : request.query) {
      if (name == "pretty" || name == "noPayloadShorthand") continue;
      params[name].push_back(value);
    }
    for (const auto& [name, values] : params) {
      absl::Status s = SetFromText(in.get(), name, values);
      // An unknown parameter is ignored, as Temporal's server does.
      if (!s.ok() && s.code() != absl::StatusCode::kNotFound) return Error(s, pretty);
    }
  }

  // A long poll (a history's waitNewEvent) holds its HTTP thread while it waits: at most
  // kMaxLongPolls at once, so that short calls always find threads.
  std::optional<LongPollSlot> slot;
  if (const auto* wait = in->GetDescriptor()->FindFieldByName("wait_new_event");
      wait != nullptr && wait->type() == google::protobuf::FieldDescriptor::TYPE_BOOL &&
      in->GetReflection()->GetBool(*in, wait)) {
    slot.emplace(long_polls_);
    if (!slot->held()) {
      return Error(absl::ResourceExhaustedError(absl::StrCat(
                       "more than ", kMaxLongPolls,
                       " long polls (waitNewEvent) wait on this HTTP port; call again later")),
                   pretty);
    }
  }

  std::shared_ptr<grpc::Channel> channel = channel_();
  if (channel == nullptr) {
    return Error(absl::UnavailableError("the server is starting; call again"), pretty);
  }
  std::string answer;
  if (absl::Status s = CallInProcess(*channel, route.rpc, *in, &answer, request); !s.ok()) {
    return Error(s, pretty);
  }
  absl::StatusOr<std::string> json =
      WireToJson(method->output_type(), answer, JsonOptions{shorthand, pretty});
  if (!json.ok()) return Error(json.status(), pretty);
  http::HttpResponse response;
  response.content_type = std::string(kJson);
  response.body = std::move(*json);
  return response;
}

}  // namespace tock::server::http_api
