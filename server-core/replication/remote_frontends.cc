#include "server-core/replication/remote_frontends.h"


#include "absl/strings/str_cat.h"

namespace tock::server::replication {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace adm = tock::admin::v1;

void SetDeadline(grpc::ClientContext& context, absl::Duration timeout) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

}  // namespace

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

RemoteFrontends::Remote& RemoteFrontends::Get(const std::string& address) {
  std::lock_guard lock(mu_);
  Remote& remote = remotes_[address];
  if (remote.channel == nullptr) {
    remote.channel = dialer_.Dial(address);
    remote.workflow = wf::WorkflowService::NewStub(remote.channel);
    remote.admin = adm::AdminService::NewStub(remote.channel);
  }
  return remote;
}

absl::StatusOr<RemoteDescription> RemoteFrontends::Describe(const std::string& address) {
  Remote& remote = Get(address);
  wf::GetClusterInfoResponse info;
  {
    grpc::ClientContext context;
    SetDeadline(context, kDescribeTimeout);
    if (grpc::Status s = remote.workflow->GetClusterInfo(&context, wf::GetClusterInfoRequest(), &info);
        !s.ok()) {
      return FromGrpc(s);
    }
  }
  adm::DescribeClusterResponse tock;
  {
    grpc::ClientContext context;
    SetDeadline(context, kDescribeTimeout);
    if (grpc::Status s = remote.admin->DescribeCluster(&context, adm::DescribeClusterRequest(), &tock);
        !s.ok()) {
      return FromGrpc(s);
    }
  }
  RemoteDescription out;
  out.cluster_name = info.cluster_name();
  out.cluster_id = info.cluster_id();
  out.history_shard_count = info.history_shard_count();
  out.initial_failover_version = info.initial_failover_version();
  out.failover_version_increment = info.failover_version_increment();
  out.global_namespace_enabled = tock.enable_global_namespace();
  return out;
}

absl::StatusOr<adm::GetNamespaceReplicationMessagesResponse>
RemoteFrontends::GetNamespaceReplicationMessages(
    const std::string& address, const adm::GetNamespaceReplicationMessagesRequest& req) {
  Remote& remote = Get(address);
  grpc::ClientContext context;
  SetDeadline(context, kPullTimeout);
  adm::GetNamespaceReplicationMessagesResponse out;
  if (grpc::Status s = remote.admin->GetNamespaceReplicationMessages(&context, req, &out); !s.ok()) {
    return FromGrpc(s);
  }
  return out;
}

absl::StatusOr<adm::GetReplicationMessagesResponse> RemoteFrontends::GetReplicationMessages(
    const std::string& address, const adm::GetReplicationMessagesRequest& req) {
  Remote& remote = Get(address);
  grpc::ClientContext context;
  SetDeadline(context, kPullTimeout);
  adm::GetReplicationMessagesResponse out;
  if (grpc::Status s = remote.admin->GetReplicationMessages(&context, req, &out); !s.ok()) {
    return FromGrpc(s);
  }
  return out;
}

absl::StatusOr<adm::GetDLQReplicationMessagesResponse> RemoteFrontends::GetDlqReplicationMessages(
    const std::string& address, const adm::GetDLQReplicationMessagesRequest& req) {
  Remote& remote = Get(address);
  grpc::ClientContext context;
  SetDeadline(context, kPullTimeout);
  adm::GetDLQReplicationMessagesResponse out;
  if (grpc::Status s = remote.admin->GetDLQReplicationMessages(&context, req, &out); !s.ok()) {
    return FromGrpc(s);
  }
  return out;
}

absl::StatusOr<adm::GetWorkflowExecutionRawHistoryResponse> RemoteFrontends::GetRawHistory(
    const std::string& address, const adm::GetWorkflowExecutionRawHistoryRequest& req) {
  Remote& remote = Get(address);
  grpc::ClientContext context;
  SetDeadline(context, kPullTimeout);
  adm::GetWorkflowExecutionRawHistoryResponse out;
  if (grpc::Status s = remote.admin->GetWorkflowExecutionRawHistory(&context, req, &out); !s.ok()) {
    return FromGrpc(s);
  }
  return out;
}

absl::Status RemoteFrontends::ReapplyEvents(const std::string& address,
                                            const adm::ReapplyEventsRequest& req) {
  Remote& remote = Get(address);
  grpc::ClientContext context;
  SetDeadline(context, kPullTimeout);
  adm::ReapplyEventsResponse out;
  return FromGrpc(remote.admin->ReapplyEvents(&context, req, &out));
}

}  // namespace tock::server::replication
