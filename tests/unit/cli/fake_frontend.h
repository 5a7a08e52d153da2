// An in-process stand-in for a Temporal frontend (WorkflowService, OperatorService and Tock's
// AdminService) on 127.0.0.1:<free port>, for running whole `tock` command lines without a
// server: it keeps namespaces in a map, records every request, and answers errors with the
// server's exact messages. Just enough behaviour for the CLI's tests; the real rules live in
// server-core and are tested there and in tests/cli.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "cmd/tock/app.h"
#include "temporal/api/operatorservice/v1/service.grpc.pb.h"
#include "temporal/api/workflowservice/v1/service.grpc.pb.h"
#include "tock/admin/v1/service.grpc.pb.h"

namespace tock::cli::testing {

namespace wf = temporal::api::workflowservice::v1;
namespace op = temporal::api::operatorservice::v1;
namespace enums = temporal::api::enums::v1;

// What the fake holds and saw. Guarded by `mu`; tests read it after a command returned.
struct FakeState {
  std::mutex mu;
  std::map<std::string, wf::DescribeNamespaceResponse> namespaces;
  std::vector<std::string> calls;  // method names, in order
  std::vector<std::string> namespace_headers;  // temporal-namespace of each call ("" if none)
  std::vector<std::string> authorization_headers;
  std::optional<wf::RegisterNamespaceRequest> last_register;
  std::optional<wf::UpdateNamespaceRequest> last_update;
  std::vector<wf::ListNamespacesRequest> list_requests;
  std::optional<tock::admin::v1::DescribeNamespaceAsOfRequest> last_as_of;
  int namespace_page_cap = 2;  // at most this many per ListNamespaces page
  std::vector<op::ClusterMetadata> clusters;
  int cluster_page_cap = 1;
  bool tock_admin = false;  // DescribeCluster: UNIMPLEMENTED unless set, like Temporal
  std::map<std::string, tock::admin::v1::GetNamespaceHistoryResponse> histories;

  int CallCount(const std::string& method) {
    std::lock_guard<std::mutex> lock(mu);
    int n = 0;
    for (const auto& c : calls) n += c == method;
    return n;
  }
};

inline grpc::Status NotFound(const std::string& name) {
  return grpc::Status(grpc::StatusCode::NOT_FOUND, "Namespace " + name + " is not found.");
}

inline std::string Header(grpc::ServerContext* context, const std::string& key) {
  auto it = context->client_metadata().find(key);
  if (it == context->client_metadata().end()) return "";
  return std::string(it->second.data(), it->second.size());
}

class FakeWorkflowService final : public wf::WorkflowService::Service {
 public:
  explicit FakeWorkflowService(FakeState& state) : state_(state) {}

  grpc::Status RegisterNamespace(grpc::ServerContext* context,
                                 const wf::RegisterNamespaceRequest* req,
                                 wf::RegisterNamespaceResponse*) override {
    std::lock_guard<std::mutex> lock(Record(context, "RegisterNamespace"));
    state_.last_register = *req;
    if (state_.namespaces.count(req->namespace_())) {
      return grpc::Status(grpc::StatusCode::ALREADY_EXISTS, "Namespace already exists.");
    }
    wf::DescribeNamespaceResponse ns;
    auto* info = ns.mutable_namespace_info();
    info->set_name(req->namespace_());
    info->set_id("id-" + req->namespace_());
    info->set_state(enums::NAMESPACE_STATE_REGISTERED);
    info->set_description(req->description());
    info->set_owner_email(req->owner_email());
    *info->mutable_data() = req->data();
    *ns.mutable_config()->mutable_workflow_execution_retention_ttl() =
        req->has_workflow_execution_retention_period() ? req->workflow_execution_retention_period()
                                                       : Days(2);
    std::string active = req->active_cluster_name().empty() ? "active" : req->active_cluster_name();
    ns.mutable_replication_config()->set_active_cluster_name(active);
    for (const auto& c : req->clusters()) *ns.mutable_replication_config()->add_clusters() = c;
    if (req->clusters().empty()) ns.mutable_replication_config()->add_clusters()->set_cluster_name(active);
    ns.set_is_global_namespace(req->is_global_namespace());
    ns.set_failover_version(req->is_global_namespace() ? 1 : 0);
    state_.namespaces[req->namespace_()] = ns;
    return grpc::Status::OK;
  }

  grpc::Status DescribeNamespace(grpc::ServerContext* context,
                                 const wf::DescribeNamespaceRequest* req,
                                 wf::DescribeNamespaceResponse* out) override {
    std::lock_guard<std::mutex> lock(Record(context, "DescribeNamespace"));
    auto it = state_.namespaces.find(req->namespace_());
    if (it == state_.namespaces.end()) return NotFound(req->namespace_());
    *out = it->second;
    return grpc::Status::OK;
  }

  grpc::Status UpdateNamespace(grpc::ServerContext* context, const wf::UpdateNamespaceRequest* req,
                               wf::UpdateNamespaceResponse* out) override {
    std::lock_guard<std::mutex> lock(Record(context, "UpdateNamespace"));
    state_.last_update = *req;
    auto it = state_.namespaces.find(req->namespace_());
    if (it == state_.namespaces.end()) return NotFound(req->namespace_());
    wf::DescribeNamespaceResponse& ns = it->second;
    const auto& u = req->update_info();
    if (!u.description().empty()) ns.mutable_namespace_info()->set_description(u.description());
    if (!u.owner_email().empty()) ns.mutable_namespace_info()->set_owner_email(u.owner_email());
    for (const auto& [k, v] : u.data()) (*ns.mutable_namespace_info()->mutable_data())[k] = v;
    if (req->config().has_workflow_execution_retention_ttl()) {
      *ns.mutable_config()->mutable_workflow_execution_retention_ttl() =
          req->config().workflow_execution_retention_ttl();
    }
    const std::string& to = req->replication_config().active_cluster_name();
    if (!to.empty()) {
      ns.mutable_replication_config()->set_active_cluster_name(to);
      ns.set_failover_version(ns.failover_version() + 1);
      ns.add_failover_history()->set_failover_version(ns.failover_version());
    }
    *out->mutable_namespace_info() = ns.namespace_info();
    *out->mutable_config() = ns.config();
    *out->mutable_replication_config() = ns.replication_config();
    out->set_failover_version(ns.failover_version());
    out->set_is_global_namespace(ns.is_global_namespace());
    return grpc::Status::OK;
  }

  grpc::Status ListNamespaces(grpc::ServerContext* context, const wf::ListNamespacesRequest* req,
                              wf::ListNamespacesResponse* out) override {
    std::lock_guard<std::mutex> lock(Record(context, "ListNamespaces"));
    state_.list_requests.push_back(*req);
    std::vector<const wf::DescribeNamespaceResponse*> visible;
    for (const auto& [name, ns] : state_.namespaces) {
      if (ns.namespace_info().state() == enums::NAMESPACE_STATE_DELETED &&
          !req->namespace_filter().include_deleted()) {
        continue;
      }
      visible.push_back(&ns);
    }
    size_t start = req->next_page_token().empty() ? 0 : std::stoul(req->next_page_token());
    size_t size = std::min<size_t>(req->page_size() > 0 ? req->page_size() : 100,
                                   state_.namespace_page_cap);
    size_t end = std::min(visible.size(), start + size);
    for (size_t i = start; i < end; ++i) *out->add_namespaces() = *visible[i];
    if (end < visible.size()) out->set_next_page_token(std::to_string(end));
    return grpc::Status::OK;
  }

  grpc::Status DeprecateNamespace(grpc::ServerContext* context,
                                  const wf::DeprecateNamespaceRequest* req,
                                  wf::DeprecateNamespaceResponse*) override {
    std::lock_guard<std::mutex> lock(Record(context, "DeprecateNamespace"));
    auto it = state_.namespaces.find(req->namespace_());
    if (it == state_.namespaces.end()) return NotFound(req->namespace_());
    if (it->second.namespace_info().state() != enums::NAMESPACE_STATE_REGISTERED) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Invalid namespace state update.");
    }
    it->second.mutable_namespace_info()->set_state(enums::NAMESPACE_STATE_DEPRECATED);
    return grpc::Status::OK;
  }

  grpc::Status GetClusterInfo(grpc::ServerContext* context, const wf::GetClusterInfoRequest*,
                              wf::GetClusterInfoResponse* out) override {
    std::lock_guard<std::mutex> lock(Record(context, "GetClusterInfo"));
    out->set_cluster_name("active");
    out->set_cluster_id("id-active");
    out->set_server_version("1.2.3");
    out->set_history_shard_count(4);
    out->set_initial_failover_version(1);
    out->set_failover_version_increment(10);
    return grpc::Status::OK;
  }

  static google::protobuf::Duration Days(int days) {
    google::protobuf::Duration d;
    d.set_seconds(int64_t{days} * 86400);
    return d;
  }

 private:
  std::mutex& Record(grpc::ServerContext* context, const std::string& method) {
    std::lock_guard<std::mutex> lock(state_.mu);
    state_.calls.push_back(method);
    state_.namespace_headers.push_back(Header(context, "temporal-namespace"));
    state_.authorization_headers.push_back(Header(context, "authorization"));
    return state_.mu;
  }

  FakeState& state_;
};

class FakeOperatorService final : public op::OperatorService::Service {
 public:
  explicit FakeOperatorService(FakeState& state) : state_(state) {}

  grpc::Status DeleteNamespace(grpc::ServerContext*, const op::DeleteNamespaceRequest* req,
                               op::DeleteNamespaceResponse* out) override {
    std::lock_guard<std::mutex> lock(state_.mu);
    state_.calls.push_back("DeleteNamespace");
    auto it = state_.namespaces.find(req->namespace_());
    if (it == state_.namespaces.end()) return NotFound(req->namespace_());
    if (it->second.namespace_info().state() == enums::NAMESPACE_STATE_DELETED) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Invalid namespace state update.");
    }
    it->second.mutable_namespace_info()->set_state(enums::NAMESPACE_STATE_DELETED);
    out->set_deleted_namespace(req->namespace_());
    return grpc::Status::OK;
  }

  grpc::Status ListClusters(grpc::ServerContext*, const op::ListClustersRequest* req,
                            op::ListClustersResponse* out) override {
    std::lock_guard<std::mutex> lock(state_.mu);
    state_.calls.push_back("ListClusters");
    size_t start = req->next_page_token().empty() ? 0 : std::stoul(req->next_page_token());
    size_t end = std::min(state_.clusters.size(), start + state_.cluster_page_cap);
    for (size_t i = start; i < end; ++i) *out->add_clusters() = state_.clusters[i];
    if (end < state_.clusters.size()) out->set_next_page_token(std::to_string(end));
    return grpc::Status::OK;
  }

 private:
  FakeState& state_;
};

class FakeAdminService final : public tock::admin::v1::AdminService::Service {
 public:
  explicit FakeAdminService(FakeState& state) : state_(state) {}

  grpc::Status DescribeCluster(grpc::ServerContext*, const tock::admin::v1::DescribeClusterRequest*,
                               tock::admin::v1::DescribeClusterResponse* out) override {
    std::lock_guard<std::mutex> lock(state_.mu);
    state_.calls.push_back("DescribeCluster");
    if (!state_.tock_admin) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method");
    out->set_current_cluster_name("active");
    out->set_master_cluster_name("active");
    out->set_enable_global_namespace(true);
    out->set_persistence_engine("sqlite");
    out->set_persistence_location(":memory:");
    auto* member = out->add_clusters();
    member->set_cluster_name("active");
    member->set_enabled(true);
    member->set_initial_failover_version(1);
    member->set_rpc_address("127.0.0.1:7233");
    return grpc::Status::OK;
  }

  grpc::Status GetNamespaceHistory(grpc::ServerContext*,
                                   const tock::admin::v1::GetNamespaceHistoryRequest* req,
                                   tock::admin::v1::GetNamespaceHistoryResponse* out) override {
    std::lock_guard<std::mutex> lock(state_.mu);
    state_.calls.push_back("GetNamespaceHistory");
    auto it = state_.histories.find(req->namespace_());
    if (it == state_.histories.end()) return NotFound(req->namespace_());
    *out = it->second;
    return grpc::Status::OK;
  }

  grpc::Status DescribeNamespaceAsOf(grpc::ServerContext*,
                                     const tock::admin::v1::DescribeNamespaceAsOfRequest* req,
                                     tock::admin::v1::DescribeNamespaceAsOfResponse* out) override {
    std::lock_guard<std::mutex> lock(state_.mu);
    state_.calls.push_back("DescribeNamespaceAsOf");
    state_.last_as_of = *req;
    auto it = state_.namespaces.find(req->namespace_());
    if (it == state_.namespaces.end()) return NotFound(req->namespace_());
    *out->mutable_namespace_() = it->second;
    out->mutable_namespace_()->mutable_namespace_info()->set_description("as it was");
    return grpc::Status::OK;
  }

 private:
  FakeState& state_;
};

class FakeFrontend {
 public:
  FakeFrontend() : workflow_(state), operator_(state), admin_(state) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&workflow_);
    builder.RegisterService(&operator_);
    builder.RegisterService(&admin_);
    server_ = builder.BuildAndStart();
  }
  ~FakeFrontend() {
    if (server_) server_->Shutdown();
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  bool ok() const { return server_ != nullptr && port_ > 0; }

  FakeState state;

 private:
  FakeWorkflowService workflow_;
  FakeOperatorService operator_;
  FakeAdminService admin_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

struct Terminal {
  bool stdin_is_terminal = false;
  bool stdout_is_terminal = false;
};

// Runs one `tock` command line (without the program name) through the real command tree,
// with stdin holding `input`.
inline CliResult RunTock(const std::vector<std::string>& args, const std::string& input = "",
                         Terminal terminal = {}) {
  std::istringstream in(input);
  std::ostringstream out, err;
  CommandContext ctx(in, out, err, terminal.stdin_is_terminal, terminal.stdout_is_terminal);
  CliResult result;
  result.code = RunArgs(ctx, args);
  result.out = out.str();
  result.err = err.str();
  return result;
}

}  // namespace tock::cli::testing
