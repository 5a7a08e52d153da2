#include "server-core/http_api/route_table.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/api/annotations.pb.h"
#include "temporal/api/operatorservice/v1/service.pb.h"
#include "temporal/api/workflowservice/v1/service.pb.h"
#include "tock/http/v1/routes.pb.h"

namespace tock::server::http_api {
namespace {

using google::protobuf::MethodDescriptor;

// The verb and template of one binding; empty verb when it has none.
std::pair<std::string, std::string> VerbAndPath(const google::api::HttpRule& rule) {
  switch (rule.pattern_case()) {
    case google::api::HttpRule::kGet: return {"GET", rule.get()};
    case google::api::HttpRule::kPut: return {"PUT", rule.put()};
    case google::api::HttpRule::kPost: return {"POST", rule.post()};
    case google::api::HttpRule::kDelete: return {"DELETE", rule.delete_()};
    case google::api::HttpRule::kPatch: return {"PATCH", rule.patch()};
    case google::api::HttpRule::kCustom: return {rule.custom().kind(), rule.custom().path()};
    default: return {"", ""};
  }
}

absl::Status AddBinding(const google::api::HttpRule& rule, const MethodDescriptor* method,
                        const std::string& calls, std::vector<Route>& out) {
  auto [verb, path] = VerbAndPath(rule);
  if (verb.empty()) return absl::OkStatus();
  Route route;
  route.verb = verb;
  route.path = path;
  route.body = rule.body();
  route.method = method;
  route.rpc = absl::StrCat("/", calls, "/", method->name());
  if (path.empty() || path[0] != '/') {
    return absl::InternalError(absl::StrCat("the HTTP template of ", method->full_name(),
                                            " does not start with '/': ", path));
  }
  for (absl::string_view part : absl::StrSplit(absl::string_view(path).substr(1), '/')) {
    Route::Segment segment;
    if (part.size() >= 2 && part.front() == '{' && part.back() == '}') {
      segment.variable = true;
      segment.text = std::string(part.substr(1, part.size() - 2));
      if (segment.text.find_first_of("=*") != std::string::npos) {
        return absl::InternalError(absl::StrCat("the HTTP template of ", method->full_name(),
                                                " uses a pattern variable (", segment.text,
                                                "), which this table does not implement"));
      }
    } else {
      segment.text = std::string(part);
    }
    route.segments.push_back(std::move(segment));
  }
  out.push_back(std::move(route));
  return absl::OkStatus();
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> PercentDecode(const std::string& text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

absl::StatusOr<RouteTable> RouteTable::Build(const std::vector<Source>& sources) {
  RouteTable table;
  for (const Source& source : sources) {
    for (int m = 0; m < source.service->method_count(); ++m) {
      const MethodDescriptor* method = source.service->method(m);
      if (!method->options().HasExtension(google::api::http)) continue;
      const google::api::HttpRule& rule = method->options().GetExtension(google::api::http);
      if (absl::Status s = AddBinding(rule, method, source.calls, table.routes_); !s.ok()) return s;
      for (const google::api::HttpRule& more : rule.additional_bindings()) {
        if (absl::Status s = AddBinding(more, method, source.calls, table.routes_); !s.ok()) {
          return s;
        }
      }
    }
  }
  return table;
}

absl::StatusOr<RouteTable> RouteTable::Served() {
  // The services' files are in the generated pool once linked in: a kept reference to each
  // file's descriptor table (in the generated headers) makes sure they are.
  static const void* volatile linked[] = {
      &descriptor_table_temporal_2fapi_2fworkflowservice_2fv1_2fservice_2eproto,
      &descriptor_table_temporal_2fapi_2foperatorservice_2fv1_2fservice_2eproto,
      &descriptor_table_tock_2fhttp_2fv1_2froutes_2eproto};
  (void)linked;
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  // (the service read, the service called)
  const std::pair<const char*, const char*> services[] = {
      {"temporal.api.workflowservice.v1.WorkflowService", "temporal.api.workflowservice.v1.WorkflowService"},
      {"temporal.api.operatorservice.v1.OperatorService", "temporal.api.operatorservice.v1.OperatorService"},
      {"tock.http.v1.WorkflowServiceRoutes", "temporal.api.workflowservice.v1.WorkflowService"},
      {"tock.http.v1.OperatorServiceRoutes", "temporal.api.operatorservice.v1.OperatorService"},
      {"tock.http.v1.AdminServiceRoutes", "tock.admin.v1.AdminService"}};
  std::vector<Source> sources;
  for (const auto& [read, calls] : services) {
    const google::protobuf::ServiceDescriptor* service = pool->FindServiceByName(read);
    if (service == nullptr) {
      return absl::InternalError(absl::StrCat("the service ", read, " is not linked in"));
    }
    sources.push_back(Source{service, calls});
  }
  return Build(sources);
}

std::optional<Match> RouteTable::Find(const std::string& verb, const std::string& raw_path,
                                      bool* path_known) const {
  if (path_known != nullptr) *path_known = false;
  if (raw_path.empty() || raw_path[0] != '/') return std::nullopt;
  std::vector<std::string> parts = absl::StrSplit(raw_path.substr(1), '/');
  std::optional<Match> best;
  int best_literals = -1;
  for (const Route& route : routes_) {
    if (route.segments.size() != parts.size()) continue;
    int literals = 0;
    bool matched = true;
    for (size_t i = 0; i < parts.size() && matched; ++i) {
      const Route::Segment& segment = route.segments[i];
      if (segment.variable) {
        matched = !parts[i].empty();
      } else {
        matched = parts[i] == segment.text;
        ++literals;
      }
    }
    if (!matched) continue;
    if (route.verb != verb) {
      if (path_known != nullptr) *path_known = true;
      continue;
    }
    if (literals <= best_literals) continue;
    Match match;
    match.route = &route;
    bool decoded = true;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!route.segments[i].variable) continue;
      std::optional<std::string> value = PercentDecode(parts[i], /*plus_is_space=*/false);
      if (!value.has_value()) {
        decoded = false;
        break;
      }
      match.variables.emplace_back(route.segments[i].text, std::move(*value));
    }
    if (!decoded) continue;
    best = std::move(match);
    best_literals = literals;
  }
  return best;
}

}  // namespace tock::server::http_api
