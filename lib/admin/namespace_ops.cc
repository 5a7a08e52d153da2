#include "lib/admin/namespace_ops.h"

#include "absl/strings/str_cat.h"
#include "lib/admin/payloads.h"
#include "lib/admin/retention.h"
#include "lib/common/proto_time.h"
#include "lib/common/time_format.h"
#include "temporal/api/operatorservice/v1/request_response.pb.h"

namespace tock::admin {
namespace {

using WorkflowStub = temporal::api::workflowservice::v1::WorkflowService::Stub;
using OperatorStub = temporal::api::operatorservice::v1::OperatorService::Stub;
using AdminStub = tock::admin::v1::AdminService::Stub;

// The same fields, for callers that print every namespace one way.
wf::DescribeNamespaceResponse FromUpdate(const wf::UpdateNamespaceResponse& u) {
  wf::DescribeNamespaceResponse d;
  *d.mutable_namespace_info() = u.namespace_info();
  *d.mutable_config() = u.config();
  *d.mutable_replication_config() = u.replication_config();
  d.set_failover_version(u.failover_version());
  d.set_is_global_namespace(u.is_global_namespace());
  return d;
}

// Describes after a change. The change is committed whatever happens here, so when only the
// describe fails (a server without DescribeNamespace permissions, say) the caller still gets
// what the update returned rather than an error for a change that happened.
absl::StatusOr<wf::DescribeNamespaceResponse> DescribeAfterUpdate(
    client::Connection& connection, const std::string& name,
    const wf::UpdateNamespaceResponse& updated) {
  absl::StatusOr<wf::DescribeNamespaceResponse> now = DescribeNamespace(connection, name);
  if (now.ok()) return now;
  return FromUpdate(updated);
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseKeyValues(
    const std::vector<std::string>& pairs) {
  std::map<std::string, std::string> out;
  for (const std::string& pair : pairs) {
    size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid --data \"", pair, "\": use KEY=VALUE, for example team=payments"));
    }
    out[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  return out;
}

// "enabled"/"disabled" -> the enum; empty -> UNSPECIFIED (keep, or the cluster default).
absl::StatusOr<temporal::api::enums::v1::ArchivalState> ParseArchivalState(const std::string& text,
                                                                           const char* flag) {
  if (text.empty()) return temporal::api::enums::v1::ARCHIVAL_STATE_UNSPECIFIED;
  if (text == "enabled") return temporal::api::enums::v1::ARCHIVAL_STATE_ENABLED;
  if (text == "disabled") return temporal::api::enums::v1::ARCHIVAL_STATE_DISABLED;
  return absl::InvalidArgumentError(
      absl::StrCat("invalid ", flag, " \"", text, "\": use enabled or disabled"));
}

// Applies `o` to a request's archival fields (RegisterNamespaceRequest or NamespaceConfig:
// the same four setters).
template <typename Message>
absl::Status SetArchival(const ArchivalOptions& o, Message& m) {
  absl::StatusOr<temporal::api::enums::v1::ArchivalState> history =
      ParseArchivalState(o.history_state, "--history-archival-state");
  if (!history.ok()) return history.status();
  absl::StatusOr<temporal::api::enums::v1::ArchivalState> visibility =
      ParseArchivalState(o.visibility_state, "--visibility-archival-state");
  if (!visibility.ok()) return visibility.status();
  m.set_history_archival_state(*history);
  m.set_history_archival_uri(o.history_uri);
  m.set_visibility_archival_state(*visibility);
  m.set_visibility_archival_uri(o.visibility_uri);
  return absl::OkStatus();
}

absl::StatusOr<wf::RegisterNamespaceRequest> MakeRegisterNamespaceRequest(
    const RegisterNamespaceOptions& options) {
  wf::RegisterNamespaceRequest req;
  req.set_namespace_(options.name);
  if (options.retention.has_value()) {
    absl::StatusOr<absl::Duration> retention = ParseRetention(*options.retention);
    if (!retention.ok()) return retention.status();
    *req.mutable_workflow_execution_retention_period() = ToProtoDuration(*retention);
  }
  req.set_description(options.description);
  req.set_owner_email(options.owner_email);
  for (const auto& [k, v] : options.data) (*req.mutable_data())[k] = v;
  req.set_is_global_namespace(options.global);
  for (const auto& c : options.clusters) req.add_clusters()->set_cluster_name(c);
  req.set_active_cluster_name(options.active_cluster);
  if (absl::Status s = SetArchival(options.archival, req); !s.ok()) return s;
  return req;
}

absl::StatusOr<wf::DescribeNamespaceResponse> RegisterNamespace(
    client::Connection& connection, const RegisterNamespaceOptions& options) {
  absl::StatusOr<wf::RegisterNamespaceRequest> req = MakeRegisterNamespaceRequest(options);
  if (!req.ok()) return req.status();
  auto registered = connection.Call(&WorkflowStub::RegisterNamespace, connection.workflow(), *req,
                                    options.name);
  if (!registered.ok()) return registered.status();
  return DescribeNamespace(connection, options.name);
}

absl::StatusOr<wf::DescribeNamespaceResponse> DescribeNamespace(client::Connection& connection,
                                                                const std::string& name,
                                                                std::optional<absl::Time> as_of) {
  if (as_of.has_value()) {
    auto past = DescribeNamespaceAsOf(connection, name, *as_of);
    if (!past.ok()) return past.status();
    return past->namespace_();
  }
  wf::DescribeNamespaceRequest req;
  req.set_namespace_(name);
  return connection.Call(&WorkflowStub::DescribeNamespace, connection.workflow(), req, name);
}

absl::StatusOr<tock::admin::v1::DescribeNamespaceAsOfResponse> DescribeNamespaceAsOf(
    client::Connection& connection, const std::string& name, absl::Time as_of) {
  tock::admin::v1::DescribeNamespaceAsOfRequest req;
  req.set_namespace_(name);
  *req.mutable_as_of() = ToProtoTime(as_of);
  return connection.Call(&AdminStub::DescribeNamespaceAsOf, connection.admin(), req, name);
}

absl::Status ListNamespaces(
    client::Connection& connection, bool include_deleted,
    const std::function<absl::Status(const wf::DescribeNamespaceResponse&)>& each,
    int page_size) {
  wf::ListNamespacesRequest req;
  req.set_page_size(page_size);
  req.mutable_namespace_filter()->set_include_deleted(include_deleted);
  while (true) {
    auto page = connection.Call(&WorkflowStub::ListNamespaces, connection.workflow(), req);
    if (!page.ok()) return page.status();
    for (const auto& ns : page->namespaces()) {
      if (absl::Status s = each(ns); !s.ok()) return s;
    }
    if (page->next_page_token().empty()) return absl::OkStatus();
    // A server that hands back the token it was given would loop forever.
    if (page->next_page_token() == req.next_page_token()) {
      return absl::InternalError("ListNamespaces returned the same page token twice");
    }
    req.set_next_page_token(page->next_page_token());
  }
}

absl::StatusOr<wf::UpdateNamespaceRequest> MakeUpdateNamespaceRequest(
    const UpdateNamespaceOptions& options) {
  wf::UpdateNamespaceRequest req;
  req.set_namespace_(options.name);
  if (options.retention.has_value()) {
    absl::StatusOr<absl::Duration> retention = ParseRetention(*options.retention);
    if (!retention.ok()) return retention.status();
    *req.mutable_config()->mutable_workflow_execution_retention_ttl() =
        ToProtoDuration(*retention);
  }
  if (!options.description.empty() || !options.owner_email.empty() || !options.data.empty()) {
    auto* info = req.mutable_update_info();
    info->set_description(options.description);
    info->set_owner_email(options.owner_email);
    for (const auto& [k, v] : options.data) (*info->mutable_data())[k] = v;
  }
  req.set_promote_namespace(options.promote_global);
  for (const auto& c : options.clusters) {
    req.mutable_replication_config()->add_clusters()->set_cluster_name(c);
  }
  if (options.replication_state == "normal") {
    req.mutable_replication_config()->set_state(temporal::api::enums::v1::REPLICATION_STATE_NORMAL);
  } else if (options.replication_state == "handover") {
    req.mutable_replication_config()->set_state(
        temporal::api::enums::v1::REPLICATION_STATE_HANDOVER);
  } else if (!options.replication_state.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid --replication-state ",
                                                   EchoQuoted(options.replication_state),
                                                   ": use normal or handover"));
  }
  const ArchivalOptions& a = options.archival;
  if (!a.history_state.empty() || !a.history_uri.empty() || !a.visibility_state.empty() ||
      !a.visibility_uri.empty()) {
    if (absl::Status s = SetArchival(a, *req.mutable_config()); !s.ok()) return s;
  }
  return req;
}

absl::StatusOr<wf::DescribeNamespaceResponse> UpdateNamespace(
    client::Connection& connection, const UpdateNamespaceOptions& options) {
  absl::StatusOr<wf::UpdateNamespaceRequest> req = MakeUpdateNamespaceRequest(options);
  if (!req.ok()) return req.status();
  auto updated =
      connection.Call(&WorkflowStub::UpdateNamespace, connection.workflow(), *req, options.name);
  if (!updated.ok()) return updated.status();
  return DescribeAfterUpdate(connection, options.name, *updated);
}

absl::StatusOr<wf::UpdateNamespaceRequest> MakeFailoverNamespaceRequest(
    const std::string& name, const std::string& to_cluster) {
  if (to_cluster.empty()) {
    return absl::InvalidArgumentError("the target cluster is empty; use --to CLUSTER");
  }
  wf::UpdateNamespaceRequest req;
  req.set_namespace_(name);
  req.mutable_replication_config()->set_active_cluster_name(to_cluster);
  return req;
}

absl::StatusOr<wf::DescribeNamespaceResponse> FailoverNamespace(client::Connection& connection,
                                                                const std::string& name,
                                                                const std::string& to_cluster) {
  absl::StatusOr<wf::UpdateNamespaceRequest> req = MakeFailoverNamespaceRequest(name, to_cluster);
  if (!req.ok()) return req.status();
  auto updated = connection.Call(&WorkflowStub::UpdateNamespace, connection.workflow(), *req, name);
  if (!updated.ok()) return updated.status();
  return DescribeAfterUpdate(connection, name, *updated);
}

absl::Status DeprecateNamespace(client::Connection& connection, const std::string& name) {
  wf::DeprecateNamespaceRequest req;
  req.set_namespace_(name);
  return connection.Call(&WorkflowStub::DeprecateNamespace, connection.workflow(), req, name)
      .status();
}

absl::StatusOr<std::string> DeleteNamespace(client::Connection& connection,
                                            const std::string& name) {
  temporal::api::operatorservice::v1::DeleteNamespaceRequest req;
  req.set_namespace_(name);
  auto out = connection.Call(&OperatorStub::DeleteNamespace, connection.operator_service(), req,
                             name);
  if (!out.ok()) return out.status();
  return out->deleted_namespace().empty() ? name : out->deleted_namespace();
}

std::vector<NamespaceHistoryEntry> PairVersionsWithChanges(
    const tock::admin::v1::GetNamespaceHistoryResponse& history) {
  std::vector<NamespaceHistoryEntry> entries;
  entries.reserve(history.versions_size());
  const tock::persistence::v1::NamespaceRecord empty;
  for (int i = 0; i < history.versions_size(); ++i) {
    NamespaceHistoryEntry entry;
    entry.version = history.versions(i);
    entry.changes = DiffNamespaceRecords(i == 0 ? empty : history.versions(i - 1).record(),
                                         history.versions(i).record());
    entries.push_back(std::move(entry));
  }
  return entries;
}

absl::StatusOr<std::vector<NamespaceHistoryEntry>> NamespaceHistory(
    client::Connection& connection, const std::string& name) {
  tock::admin::v1::GetNamespaceHistoryRequest req;
  req.set_namespace_(name);
  auto out = connection.Call(&AdminStub::GetNamespaceHistory, connection.admin(), req, name);
  if (!out.ok()) return out.status();
  return PairVersionsWithChanges(*out);
}

}  // namespace tock::admin
