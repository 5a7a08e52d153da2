#include "server-core/security/rate_limit_interceptor.h"

#include <string>
#include <string_view>
#include <unordered_map>

#include "lib/common/grpc_status.h"
#include "server-core/frontend/request_namespace.h"
#include "server-core/security/authz_interceptor.h"
#include "server-core/security/rate_limit_call.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::security {
namespace {

constexpr std::string_view kWorkflowService = "temporal.api.workflowservice.v1.WorkflowService/";

// The services whose calls are limited: every one a client may call. Not HostService (only
// other hosts of the database call it, with the host secret) nor the health service.
constexpr std::string_view kLimitedServices[] = {
    kWorkflowService,
    "temporal.api.operatorservice.v1.OperatorService/",
    "tock.admin.v1.AdminService/",
    "tock.timer.v1.TimerService/",
};

struct LimitRule {
  CallFields fields;
  bool poll = false;  // always a long poll
};

bool Limited(const std::string& method) {
  for (std::string_view service : kLimitedServices) {
    if (method.starts_with(service)) return true;
  }
  return false;
}

// The request's `namespace` field: WorkflowService's table, else the one the authorizer
// finds for a namespace rule (TimerService, OperatorService's namespaced calls); 0 for a
// cluster call, which counts against the host's bucket only.
int NamespaceField(const std::string& method,
                   const std::unordered_map<std::string, int>& workflow_fields) {
  if (auto it = workflow_fields.find(method); it != workflow_fields.end()) return it->second;
  absl::StatusOr<Authorizer::Compiled> compiled = Authorizer::Compile(method);
  return compiled.ok() ? compiled->namespace_field : 0;
}

}  // namespace

void RateLimitInterceptor::Install(rpc::Dispatcher& dispatcher) {
  std::unordered_map<std::string, int> namespace_fields;
  for (const frontend::NamespacedMethod& m : frontend::NamespacedWorkflowMethods()) {
    namespace_fields[m.full_name] = m.field->number();
  }
  const int wait_new_event_field =
      temporal::api::workflowservice::v1::GetWorkflowExecutionHistoryRequest::kWaitNewEventFieldNumber;
  for (const std::string& method : dispatcher.Methods()) {
    if (!Limited(method)) continue;
    const std::string name = method.substr(method.find('/') + 1);
    const bool workflow_service = method.starts_with(kWorkflowService);
    if (workflow_service && name == "GetSystemInfo") continue;
    LimitRule rule;
    rule.fields.namespace_field = NamespaceField(method, namespace_fields);
    if (workflow_service && name == "GetWorkflowExecutionHistory") {
      rule.fields.wait_field = wait_new_event_field;
    }
    rule.poll = workflow_service && name.starts_with("Poll");
    dispatcher.Wrap(method, [this, rule](rpc::RawHandler handler) -> rpc::RawHandler {
      return [this, rule, handler = std::move(handler)](const rpc::CallContext& ctx,
                                                        const grpc::ByteBuffer& payload,
                                                        rpc::RawResponder respond) {
        if (peers_.FromPeer(ctx)) return handler(ctx, payload, std::move(respond));
        // One buffer per thread: no allocation per call once it has held a long name.
        thread_local std::string namespace_name;
        bool waits = false;
        ReadCallFields(payload, rule.fields, &namespace_name, &waits);
        absl::Status allowed = limiter_.Check(namespace_name, rule.poll || waits);
        if (!allowed.ok()) return respond(ToGrpcStatus(allowed), nullptr);
        handler(ctx, payload, std::move(respond));
      };
    });
  }
}

}  // namespace tock::server::security
