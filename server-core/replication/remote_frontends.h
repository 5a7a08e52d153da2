// Calls to the frontends of remote clusters: one channel per address, kept for the
// server's life (gRPC reconnects it when the remote restarts).
//
// Thread safety: safe from many threads.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server-core/replication/cluster_registry.h"
#include "server-core/rpc/dialer.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tock/admin/v1/service.grpc.pb.h"

namespace tock::server::replication {

class RemoteFrontends {
 public:
  // Channels come from `dialer` (TLS with tls.internode), which must outlive this.
  explicit RemoteFrontends(const rpc::Dialer& dialer) : dialer_(dialer) {}

  static constexpr absl::Duration kDescribeTimeout = absl::Seconds(5);
  static constexpr absl::Duration kPullTimeout = absl::Seconds(10);

  // GetClusterInfo, then Tock's DescribeCluster (whether global namespaces are enabled).
  absl::StatusOr<RemoteDescription> Describe(const std::string& address);

  absl::StatusOr<tock::admin::v1::GetNamespaceReplicationMessagesResponse>
  GetNamespaceReplicationMessages(const std::string& address,
                                  const tock::admin::v1::GetNamespaceReplicationMessagesRequest& req);
  absl::StatusOr<tock::admin::v1::GetReplicationMessagesResponse> GetReplicationMessages(
      const std::string& address, const tock::admin::v1::GetReplicationMessagesRequest& req);
  // The DLQ tasks named, rebuilt by the source (a DLQ merge).
  absl::StatusOr<tock::admin::v1::GetDLQReplicationMessagesResponse> GetDlqReplicationMessages(
      const std::string& address, const tock::admin::v1::GetDLQReplicationMessagesRequest& req);
  absl::StatusOr<tock::admin::v1::GetWorkflowExecutionRawHistoryResponse> GetRawHistory(
      const std::string& address, const tock::admin::v1::GetWorkflowExecutionRawHistoryRequest& req);
  absl::Status ReapplyEvents(const std::string& address,
                             const tock::admin::v1::ReapplyEventsRequest& req);

 private:
  struct Remote {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<temporal::api::workflowservice::v1::WorkflowService::Stub> workflow;
    std::unique_ptr<tock::admin::v1::AdminService::Stub> admin;
  };
  Remote& Get(const std::string& address);

  const rpc::Dialer& dialer_;
  std::mutex mu_;
  std::map<std::string, Remote> remotes_;  // never erased: references stay valid
};

// The status of a failed call, with gRPC's code and message.
absl::Status FromGrpc(const grpc::Status& status);

}  // namespace tock::server::replication
