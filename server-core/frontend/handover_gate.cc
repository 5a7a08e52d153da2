#include "server-core/frontend/handover_gate.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server-core/frontend/request_namespace.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::frontend {
namespace {

namespace pb = google::protobuf;

}  // namespace

const std::vector<std::string>& HandoverAllowedMethods() {
  static const auto* methods = new std::vector<std::string>{
      // System
      "GetSystemInfo", "GetSearchAttributes", "GetClusterInfo",
      // Namespaces (UpdateNamespace ends the handover)
      "DeprecateNamespace", "DescribeNamespace", "UpdateNamespace", "ListNamespaces",
      "RegisterNamespace",
      // Visibility
      "ListTaskQueuePartitions", "ListOpenWorkflowExecutions", "ListClosedWorkflowExecutions",
      "ListWorkflowExecutions", "ListArchivedWorkflowExecutions", "ScanWorkflowExecutions",
      "CountWorkflowExecutions", "ListSchedules", "ListBatchOperations",
      // Matching
      "ShutdownWorker"};
  return *methods;
}

// A call held while its namespace is in handover.
struct HandoverGate::Waiter {
  const rpc::CallContext* ctx;  // alive until `respond` runs
  grpc::ByteBuffer payload;
  std::shared_ptr<const rpc::RawHandler> handler;
  rpc::RawResponder respond;
  std::string name;
  absl::Time until;
};

HandoverGate::HandoverGate(namespaces::NamespaceEngine& namespaces, Clock& clock)
    : namespaces_(namespaces), clock_(clock), timers_(clock) {}

HandoverGate::~HandoverGate() { Release(); }

void HandoverGate::Release() {
  std::map<uint64_t, std::shared_ptr<Waiter>> waiting;
  {
    std::lock_guard lock(mu_);
    released_ = true;
    waiting.swap(waiting_);
  }
  // Their pending checks find nothing to do.
  for (auto& [id, w] : waiting) {
    w->respond(grpc::Status(grpc::StatusCode::UNAVAILABLE, kNamespaceHandoverMessage), nullptr);
  }
}

void HandoverGate::Check(uint64_t id) {
  std::shared_ptr<Waiter> w;
  {
    std::lock_guard lock(mu_);
    auto it = waiting_.find(id);
    if (it == waiting_.end()) return;  // released
    w = it->second;
  }
  absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
      namespaces_.Resolve(w->name, true, namespaces::NamespaceAccess::kRead);
  const bool still = ns.ok() && ns->handover;
  const absl::Time now = clock_.Now();
  const bool cancelled = w->ctx->cancellation != nullptr && w->ctx->cancellation->cancelled();
  if (still && !cancelled && now < w->until) {
    std::lock_guard lock(mu_);
    if (released_) return;
    timers_.Schedule(std::min(now + kCheckInterval, w->until), [this, id] { Check(id); });
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (waiting_.erase(id) == 0) return;  // released meanwhile: answered there
  }
  if (cancelled) {
    w->respond(grpc::Status(grpc::StatusCode::CANCELLED, "the call was cancelled"), nullptr);
  } else if (still) {
    w->respond(grpc::Status(grpc::StatusCode::UNAVAILABLE, kNamespaceHandoverMessage), nullptr);
  } else {
    (*w->handler)(*w->ctx, w->payload, std::move(w->respond));
  }
}

void HandoverGate::Install(rpc::Dispatcher& dispatcher) {
  const std::vector<std::string>& allowed = HandoverAllowedMethods();
  for (const NamespacedMethod& method : NamespacedWorkflowMethods()) {
    if (std::find(allowed.begin(), allowed.end(), method.name) != allowed.end()) continue;
    if (!dispatcher.Has(method.full_name)) continue;
    const pb::Message* prototype = method.prototype;
    const pb::FieldDescriptor* field = method.field;
    dispatcher.Wrap(method.full_name, [this, prototype, field](rpc::RawHandler handler) {
      auto local = std::make_shared<const rpc::RawHandler>(std::move(handler));
      return [this, prototype, field, local](const rpc::CallContext& ctx,
                                             const grpc::ByteBuffer& payload,
                                             rpc::RawResponder respond) {
        const std::string name = RequestNamespace(*prototype, *field, payload);
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            name.empty()
                ? absl::StatusOr<namespaces::NamespaceEngine::Resolved>(absl::NotFoundError(""))
                : namespaces_.Resolve(name, true, namespaces::NamespaceAccess::kRead);
        // Unknown, invalid or not in handover: the handler answers (as it would anyway).
        if (!ns.ok() || !ns->handover) return (*local)(ctx, payload, std::move(respond));
        const absl::Time now = clock_.Now();
        absl::Time until = now + kMaxWait;
        if (ctx.deadline != absl::InfiniteFuture()) {
          until = std::max(now, ctx.deadline - kTailRoom);
        }
        auto w = std::make_shared<Waiter>(
            Waiter{&ctx, payload, local, std::move(respond), name, until});
        uint64_t id;
        {
          std::lock_guard lock(mu_);
          if (released_) {
            return w->respond(
                grpc::Status(grpc::StatusCode::UNAVAILABLE, kNamespaceHandoverMessage), nullptr);
          }
          id = next_id_++;
          waiting_[id] = w;
          timers_.Schedule(std::min(now + kCheckInterval, until), [this, id] { Check(id); });
        }
      };
    });
  }
}

}  // namespace tock::server::frontend
