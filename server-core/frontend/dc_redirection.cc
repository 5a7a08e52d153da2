#include "server-core/frontend/dc_redirection.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server-core/frontend/request_namespace.h"
#include "lib/common/grpc_status.h"
#include "lib/common/status.h"
#include "temporal/api/errordetails/v1/message.pb.h"
#include "temporal/api/workflowservice/v1/request_response.pb.h"

namespace tock::server::frontend {
namespace {

namespace pb = google::protobuf;

bool Contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// The metadata value of `key`, or "".
std::string MetadataValue(const rpc::CallContext& ctx, const char* key) {
  if (ctx.grpc == nullptr) return "";
  const auto& metadata = ctx.grpc->client_metadata();
  auto it = metadata.find(key);
  return it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
}

}  // namespace

absl::StatusOr<DcRedirectionPolicy> ParseDcRedirectionPolicy(const std::string& text) {
  if (text.empty() || text == "noop") return DcRedirectionPolicy::kNoop;
  if (text == "selected-apis-forwarding") return DcRedirectionPolicy::kSelectedApis;
  if (text == "all-apis-forwarding") return DcRedirectionPolicy::kAllApis;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown DC redirection policy \"", text,
                   "\": use noop, selected-apis-forwarding or all-apis-forwarding"));
}

const std::vector<std::string>& SelectedForwardingMethods() {
  // Temporal's selectedAPIsForwardingRedirectionPolicyAPIAllowlist (the run-changing calls
  // and QueryWorkflow; PollWorkflowExecutionUpdate goes with UpdateWorkflowExecution, whose
  // outcome lives on the active cluster).
  static const auto* methods = new std::vector<std::string>{
      "StartWorkflowExecution",      "SignalWithStartWorkflowExecution",
      "SignalWorkflowExecution",     "UpdateWorkflowExecution",
      "PollWorkflowExecutionUpdate", "RequestCancelWorkflowExecution",
      "TerminateWorkflowExecution",  "ResetWorkflowExecution",
      "DeleteWorkflowExecution",     "QueryWorkflow",
      "ExecuteMultiOperation",       "PauseWorkflowExecution",
      "UnpauseWorkflowExecution",
  };
  return *methods;
}

const std::vector<std::string>& LocalOnlyMethods() {
  // Temporal's localAPIResults: the namespace itself, the cluster and the system.
  static const auto* methods = new std::vector<std::string>{
      "RegisterNamespace", "DescribeNamespace",   "UpdateNamespace", "DeprecateNamespace",
      "ListNamespaces",    "GetSearchAttributes", "GetClusterInfo",  "GetSystemInfo",
  };
  return *methods;
}

// One forwarded call: sent to the active cluster, and once more to the cluster a
// NamespaceNotActive answer names.
class DcRedirection::Call : public std::enable_shared_from_this<Call> {
 public:
  Call(DcRedirection& redirection, const rpc::CallContext& ctx, const grpc::ByteBuffer& payload,
       std::shared_ptr<const rpc::RawHandler> local, rpc::RawResponder respond)
      : redirection_(redirection),
        ctx_(ctx),
        cancellation_(ctx.cancellation),
        payload_(payload),
        local_(std::move(local)),
        respond_(std::move(respond)),
        current_cluster_(redirection.namespaces_.cluster()->current_cluster_name) {}

  void Send(const std::string& cluster, const std::string& address, bool may_retry) {
    struct Remote {
      grpc::ClientContext context;
      grpc::ByteBuffer request;
      grpc::ByteBuffer response;
    };
    auto remote = std::make_shared<Remote>();
    remote->request = payload_;
    remote->context.AddMetadata(kRedirectionApiHeader, "true");
    remote->context.AddMetadata(kRedirectionSourceHeader, current_cluster_);
    if (ctx_.deadline != absl::InfiniteFuture()) {
      remote->context.set_deadline(absl::ToChronoTime(ctx_.deadline));
    }
    auto self = shared_from_this();
    grpc::GenericStub stub(redirection_.ChannelTo(address));
    std::weak_ptr<Remote> weak = remote;
    // Set before the call starts: its answer may come (and end this call) before UnaryCall
    // returns, and then ctx_ is gone.
    cancellation_->OnCancel([weak] {
      if (auto r = weak.lock()) r->context.TryCancel();
    });
    stub.UnaryCall(
        &remote->context, absl::StrCat("/", ctx_.method), grpc::StubOptions(), &remote->request,
        &remote->response, [self, remote, cluster, may_retry](grpc::Status status) {
          self->Answered(cluster, may_retry, status, status.ok() ? &remote->response : nullptr);
        });
  }

 private:
  void Answered(const std::string& cluster, bool may_retry, const grpc::Status& status,
                grpc::ByteBuffer* response) {
    if (may_retry && status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
        !cancellation_->cancelled()) {
      auto not_active = GetDetail<temporal::api::errordetails::v1::NamespaceNotActiveFailure>(
          FromGrpcStatus(status));
      if (not_active.has_value() && !not_active->active_cluster().empty() &&
          not_active->active_cluster() != cluster) {
        // The namespace failed over meanwhile: once more, to the cluster the answer names.
        if (not_active->active_cluster() == current_cluster_) {
          return (*local_)(ctx_, payload_, respond_);
        }
        const std::string address = redirection_.AddressOf(not_active->active_cluster());
        if (!address.empty()) return Send(not_active->active_cluster(), address, false);
      }
    }
    respond_(status, response);
  }

  DcRedirection& redirection_;
  const rpc::CallContext& ctx_;  // alive until respond_ runs
  const std::shared_ptr<rpc::CancellationSignal> cancellation_;
  const grpc::ByteBuffer payload_;
  const std::shared_ptr<const rpc::RawHandler> local_;
  rpc::RawResponder respond_;
  const std::string current_cluster_;
};

std::shared_ptr<grpc::Channel> DcRedirection::ChannelTo(const std::string& address) {
  std::lock_guard lock(mu_);
  std::shared_ptr<grpc::Channel>& channel = channels_[address];
  if (channel == nullptr) {
    channel = dialer_.Dial(address);
  }
  return channel;
}

std::string DcRedirection::AddressOf(const std::string& cluster) const {
  const std::shared_ptr<const admin::ClusterMetadata> metadata = namespaces_.cluster();
  auto it = metadata->clusters.find(cluster);
  if (it == metadata->clusters.end() || !it->second.enabled) return "";
  return it->second.rpc_address;
}

void DcRedirection::Install(rpc::Dispatcher& dispatcher) {
  if (policy_ == DcRedirectionPolicy::kNoop) return;
  for (const NamespacedMethod& method : NamespacedWorkflowMethods()) {
    const std::string& name = method.name;
    if (Contains(LocalOnlyMethods(), name)) continue;
    if (policy_ == DcRedirectionPolicy::kSelectedApis &&
        !Contains(SelectedForwardingMethods(), name)) {
      continue;
    }
    const std::string& full = method.full_name;
    if (!dispatcher.Has(full)) continue;
    const pb::Message* prototype = method.prototype;
    const pb::FieldDescriptor* field = method.field;
    wrapped_.push_back(full);
    dispatcher.Wrap(full, [this, prototype, field](rpc::RawHandler handler) {
      auto local = std::make_shared<const rpc::RawHandler>(std::move(handler));
      return [this, prototype, field, local](const rpc::CallContext& ctx,
                                             const grpc::ByteBuffer& payload,
                                             rpc::RawResponder respond) {
        // Never forwarded: the caller said so, or another cluster forwarded it already.
        if (MetadataValue(ctx, kRedirectionAllowedHeader) == "false" ||
            !MetadataValue(ctx, kRedirectionApiHeader).empty()) {
          return (*local)(ctx, payload, std::move(respond));
        }
        const std::string name = RequestNamespace(*prototype, *field, payload);
        absl::StatusOr<namespaces::NamespaceEngine::Resolved> ns =
            name.empty()
                ? absl::StatusOr<namespaces::NamespaceEngine::Resolved>(absl::NotFoundError(""))
                : namespaces_.Resolve(name, true, namespaces::NamespaceAccess::kRead);
        // Unknown, invalid, local or active here: the handler answers.
        if (!ns.ok() || !ns->is_global || ns->active_here) {
          return (*local)(ctx, payload, std::move(respond));
        }
        const std::string address = AddressOf(ns->active_cluster);
        if (ns->active_cluster == namespaces_.cluster()->current_cluster_name || address.empty()) {
          return (*local)(ctx, payload, std::move(respond));
        }
        std::make_shared<Call>(*this, ctx, payload, local, std::move(respond))
            ->Send(ns->active_cluster, address, /*may_retry=*/true);
      };
    });
  }
}

}  // namespace tock::server::frontend
