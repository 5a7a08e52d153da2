#include "lib/admin/cluster_ops.h"

namespace tock::admin {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace op = temporal::api::operatorservice::v1;

}  // namespace

absl::StatusOr<ClusterDescription> DescribeCluster(client::Connection& connection) {
  ClusterDescription out;
  auto info = connection.Call(&wf::WorkflowService::Stub::GetClusterInfo, connection.workflow(),
                              wf::GetClusterInfoRequest());
  if (!info.ok()) return info.status();
  out.info = *std::move(info);
  auto tock = connection.Call(&tock::admin::v1::AdminService::Stub::DescribeCluster,
                              connection.admin(), tock::admin::v1::DescribeClusterRequest());
  if (tock.ok()) {
    out.tock = *std::move(tock);
  } else if (tock.status().code() != absl::StatusCode::kUnimplemented) {
    return tock.status();
  }
  return out;
}

absl::Status ListClusters(client::Connection& connection,
                          const std::function<absl::Status(const op::ClusterMetadata&)>& each,
                          int page_size) {
  op::ListClustersRequest req;
  req.set_page_size(page_size);
  while (true) {
    auto page = connection.Call(&op::OperatorService::Stub::ListClusters,
                                connection.operator_service(), req);
    if (!page.ok()) return page.status();
    for (const auto& cluster : page->clusters()) {
      if (absl::Status s = each(cluster); !s.ok()) return s;
    }
    if (page->next_page_token().empty()) return absl::OkStatus();
    if (page->next_page_token() == req.next_page_token()) {
      return absl::InternalError("ListClusters returned the same page token twice");
    }
    req.set_next_page_token(page->next_page_token());
  }
}

absl::StatusOr<tock::admin::v1::ListClusterMembersResponse> ListClusterMembers(
    client::Connection& connection) {
  return connection.Call(&tock::admin::v1::AdminService::Stub::ListClusterMembers,
                         connection.admin(), tock::admin::v1::ListClusterMembersRequest());
}

absl::StatusOr<tock::admin::v1::ListShardsResponse> ListShards(client::Connection& connection) {
  return connection.Call(&tock::admin::v1::AdminService::Stub::ListShards, connection.admin(),
                         tock::admin::v1::ListShardsRequest());
}

}  // namespace tock::admin
