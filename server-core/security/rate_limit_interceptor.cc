#include "server-core/security/rate_limit_interceptor.h"

#include <string>
#include <string_view>
#include <unordered_map>

#include "lib/common/grpc_status.h"
#include "server-core/frontend/request_namespace.h"
#include "server-core/security/rate_limit_call.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::security {
namespace {

constexpr std::string_view kWorkflowService = "temporal.api.workflowservice.v1.WorkflowService/";

struct MethodRule {
  CallFields fields;
  bool poll = false;  // always a long poll
};

}  // namespace

void RateLimitInterceptor::Install(rpc::Dispatcher& dispatcher) {
  std::unordered_map<std::string, int> namespace_fields;
  for (const frontend::NamespacedMethod& m : frontend::NamespacedWorkflowMethods()) {
    namespace_fields[m.full_name] = m.field->number();
  }
  const int wait_new_event_field =
      temporal::api::workflowservice::v1::GetWorkflowExecutionHistoryRequest::kWaitNewEventFieldNumber;
  for (const std::string& method : dispatcher.Methods()) {
    if (!method.starts_with(kWorkflowService)) continue;
    const std::string name = method.substr(kWorkflowService.size());
    if (name == "GetSystemInfo") continue;
    MethodRule rule;
    if (auto it = namespace_fields.find(method); it != namespace_fields.end()) {
      rule.fields.namespace_field = it->second;
    }
    if (name == "GetWorkflowExecutionHistory") rule.fields.wait_field = wait_new_event_field;
    rule.poll = name.starts_with("Poll");
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
