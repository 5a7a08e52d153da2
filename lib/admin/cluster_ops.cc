#include "lib/admin/cluster_ops.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/admin/payloads.h"
#include "lib/common/grpc_status.h"

namespace tock::admin {
namespace {

namespace wf = temporal::api::workflowservice::v1;
namespace op = temporal::api::operatorservice::v1;

// Temporal's frontend, when it cannot reach the remote cluster's frontend (UNAVAILABLE).
constexpr char kRemoteUnreachablePrefix[] = "Unable connect to remote cluster";

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

// The 1-based position of the first control character in `text`, or 0. Such text is not
// echoed in messages (it would reach the terminal as it is).
size_t FirstControl(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (IsControl(static_cast<unsigned char>(text[i]))) return i + 1;
  }
  return 0;
}

absl::Status BadAddress(const std::string& address, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid --frontend-address ", EchoQuoted(address), ": ", why));
}

constexpr char kWantHostPort[] = "want HOST:PORT, e.g. 10.0.0.5:7233";

// A host name or IPv4 address (letters, digits, '-', '.', '_'), or an IPv6 address in
// brackets.
bool ValidHost(const std::string& host) {
  if (host.empty()) return false;
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return false;
    // Hex digits, ':' and '.' (an embedded IPv4), then an optional zone after '%'.
    bool zone = false;
    for (size_t i = 1; i + 1 < host.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(host[i]);
      if (!zone && c == '%') {
        zone = true;
      } else if (zone ? !(absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.')
                      : !(absl::ascii_isxdigit(c) || c == ':' || c == '.')) {
        return false;
      }
    }
    return true;
  }
  for (char c : host) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::Status CheckClusterAddress(const std::string& frontend_address) {
  const std::string& a = frontend_address;
  if (a.empty()) {
    return absl::InvalidArgumentError(
        "--frontend-address is empty: give the remote cluster's frontend as HOST:PORT");
  }
  if (a.size() > kMaxClusterAddressLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--frontend-address is ", a.size(), " bytes long; at most ", kMaxClusterAddressLength));
  }
  if (size_t at = FirstControl(a); at != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--frontend-address contains a control character (byte ", at, "); ", kWantHostPort));
  }
  const size_t colon = a.rfind(':');
  if (colon == std::string::npos) return BadAddress(a, kWantHostPort);
  const std::string host = a.substr(0, colon);
  const std::string port = a.substr(colon + 1);
  if (!ValidHost(host)) return BadAddress(a, kWantHostPort);
  int port_number = 0;
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(),
                   [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }) ||
      !absl::SimpleAtoi(port, &port_number) || port_number < 1 || port_number > 65535) {
    return BadAddress(a, "the port must be a number from 1 to 65535");
  }
  return absl::OkStatus();
}

absl::Status CheckClusterName(const std::string& cluster_name) {
  if (cluster_name.empty()) {
    return absl::InvalidArgumentError(
        "--name is empty: give the name of the remote cluster to remove");
  }
  if (cluster_name.size() > kMaxClusterNameLength) {
    return absl::InvalidArgumentError(absl::StrCat("--name is ", cluster_name.size(),
                                                   " bytes long; at most ", kMaxClusterNameLength));
  }
  if (size_t at = FirstControl(cluster_name); at != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--name contains a control character (byte ", at, ")"));
  }
  return absl::OkStatus();
}

absl::Status UpsertRemoteCluster(client::Connection& connection,
                                 const std::string& frontend_address, bool enable_connection,
                                 bool enable_replication) {
  if (absl::Status s = CheckClusterAddress(frontend_address); !s.ok()) return s;
  op::AddOrUpdateRemoteClusterRequest req;
  req.set_frontend_address(frontend_address);
  req.set_enable_remote_cluster_connection(enable_connection);
  req.set_enable_replication(enable_replication);
  auto context = connection.NewContext();
  op::AddOrUpdateRemoteClusterResponse response;
  grpc::Status status =
      connection.operator_service().AddOrUpdateRemoteCluster(context.get(), req, &response);
  if (status.ok()) return absl::OkStatus();
  // The server answered that *it* cannot reach the remote frontend: its words as they are,
  // not Translate's "cannot reach the server at ...", which would blame our own connection.
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE &&
      absl::StartsWith(status.error_message(), kRemoteUnreachablePrefix)) {
    return FromGrpcStatus(status);
  }
  return connection.Translate(status);
}

absl::Status RemoveRemoteCluster(client::Connection& connection, const std::string& cluster_name) {
  if (absl::Status s = CheckClusterName(cluster_name); !s.ok()) return s;
  op::RemoveRemoteClusterRequest req;
  req.set_cluster_name(cluster_name);
  auto out = connection.Call(&op::OperatorService::Stub::RemoveRemoteCluster,
                             connection.operator_service(), req);
  return out.ok() ? absl::OkStatus() : out.status();
}

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

absl::StatusOr<tock::admin::v1::GetReplicationStatusResponse> GetReplicationStatus(
    client::Connection& connection, const std::string& remote) {
  if (!remote.empty()) {
    if (absl::Status s = CheckClusterName(remote); !s.ok()) return s;
  }
  tock::admin::v1::GetReplicationStatusRequest req;
  req.set_remote_cluster(remote);
  return connection.Call(&tock::admin::v1::AdminService::Stub::GetReplicationStatus,
                         connection.admin(), req);
}

absl::StatusOr<tock::admin::v1::ListShardsResponse> ListShards(client::Connection& connection) {
  return connection.Call(&tock::admin::v1::AdminService::Stub::ListShards, connection.admin(),
                         tock::admin::v1::ListShardsRequest());
}

}  // namespace tock::admin
